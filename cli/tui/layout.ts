/**
 * Where the panes go: a grid that fits the terminal and the number of agents, with
 * pages when they do not all fit at a readable size. Pure; the Grid renders it.
 */

/** Smallest readable pane: a border, two header lines and two lines of text. */
export const MIN_PANE_WIDTH = 24;
export const MIN_PANE_HEIGHT = 6;

/** Terminal cells are about twice as tall as wide: panes look best near this width/height ratio. */
const TARGET_ASPECT = 2.5;
/** Cost of one empty grid cell, against the log-distance from the target aspect. */
const EMPTY_CELL_COST = 0.3;

/** One pane's place on a page (cells, origin top-left). */
export interface PaneRect {
  /** Slot on the page, row by row. */
  slot: number;
  row: number;
  column: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The grid for `count` agents. `rects` has one entry per slot of a full page. */
export interface GridLayout {
  columns: number;
  rows: number;
  perPage: number;
  pages: number;
  rects: PaneRect[];
}

/**
 * Lay out `count` panes in `cols` × `rows` cells. 1 is full screen, 2 side by side,
 * 4 a 2×2 grid; when panes would be smaller than the minimum, the grid is as large
 * as fits and the agents are spread over pages. `count` 0 gives an empty layout.
 */
export function layoutPanes(count: number, cols: number, rows: number): GridLayout {
  if (count <= 0) return { columns: 0, rows: 0, perPage: 0, pages: 0, rects: [] };
  const maxColumns = Math.max(1, Math.floor(cols / MIN_PANE_WIDTH));
  const maxRows = Math.max(1, Math.floor(rows / MIN_PANE_HEIGHT));
  let best: { columns: number; rows: number; score: number } | null = null;
  for (let c = 1; c <= Math.min(count, maxColumns); c++) {
    const r = Math.ceil(count / c);
    if (r > maxRows) continue;
    const aspect = cols / c / (rows / r);
    const score = Math.abs(Math.log(aspect / TARGET_ASPECT)) + EMPTY_CELL_COST * (c * r - count);
    if (!best || score < best.score) best = { columns: c, rows: r, score };
  }
  // Not all fit: the largest grid that does, spread over pages.
  const columns = best?.columns ?? Math.min(count, maxColumns);
  const gridRows = best?.rows ?? Math.min(Math.ceil(count / columns), maxRows);
  const perPage = columns * gridRows;
  const rects: PaneRect[] = [];
  for (let slot = 0; slot < perPage; slot++) {
    const row = Math.floor(slot / columns);
    const column = slot % columns;
    const x = Math.round((column * cols) / columns);
    const y = Math.round((row * rows) / gridRows);
    const width = Math.round(((column + 1) * cols) / columns) - x;
    const height = Math.round(((row + 1) * rows) / gridRows) - y;
    rects.push({ slot, row, column, x, y, width, height });
  }
  return { columns, rows: gridRows, perPage, pages: Math.ceil(count / perPage), rects };
}

/** How the agents are overviewed: panes in a grid, or a list beside the focused agent's pane. */
export type Overview = "grid" | "list";

/** The list overview: one row per agent at the left, the focused agent's pane at the right. */
export interface ListLayout {
  /** Columns of the list; the pane takes the rest (none when the list takes them all). */
  listWidth: number;
  paneWidth: number;
  /** Agents listed on a page: one a row. */
  perPage: number;
  pages: number;
}

/**
 * The grid while every agent fits on one page of readable panes; past that the list, which
 * shows each agent's state on one row (as many as the terminal has rows) and the focused
 * one at a readable size, instead of pages of panes too small to read. `chosen` is the
 * person's own choice (`v`), which wins.
 */
export function chooseOverview(count: number, cols: number, rows: number, chosen: Overview | null): Overview {
  if (chosen) return chosen;
  return layoutPanes(count, cols, rows).pages > 1 ? "list" : "grid";
}

/** Lay out the list overview of `count` agents in `cols` × `rows` cells. */
export function layoutList(count: number, cols: number, rows: number): ListLayout {
  const perPage = Math.max(1, rows);
  const pages = Math.max(1, Math.ceil(count / perPage));
  const listWidth = Math.min(64, Math.max(30, Math.round(cols * 0.36)));
  // Too narrow for a pane beside it: the list alone (Enter still zooms the focused agent).
  if (cols - listWidth < MIN_PANE_WIDTH) return { listWidth: cols, paneWidth: 0, perPage, pages };
  return { listWidth, paneWidth: cols - listWidth, perPage, pages };
}
