import { describe, expect, it } from "vitest";
import { layoutPanes, MIN_PANE_HEIGHT, MIN_PANE_WIDTH } from "../../../cli/tui/layout.js";

describe("layoutPanes", () => {
  it.each([
    // count, cols, rows → columns × rows per page, pages
    [1, 100, 27, 1, 1, 1],
    [2, 100, 27, 2, 1, 1],
    [4, 100, 27, 2, 2, 1],
    [9, 100, 27, 3, 3, 1],
    [16, 100, 27, 4, 4, 1],
    [20, 100, 27, 4, 4, 2],
    [1, 80, 21, 1, 1, 1],
    [2, 80, 21, 2, 1, 1],
    [4, 80, 21, 2, 2, 1],
    [9, 80, 21, 3, 3, 1],
    [20, 80, 21, 3, 3, 3],
    [20, 200, 57, 5, 4, 1],
    [9, 60, 20, 2, 3, 2],
  ])("%i agents in %i×%i: a %i×%i grid on %i page(s)", (count, cols, rows, columns, gridRows, pages) => {
    const l = layoutPanes(count, cols, rows);
    expect({ columns: l.columns, rows: l.rows, pages: l.pages }).toEqual({ columns, rows: gridRows, pages });
    expect(l.perPage).toBe(columns * gridRows);
  });

  it.each([
    [1, 100, 27],
    [2, 80, 21],
    [7, 123, 41],
    [20, 80, 21],
    [50, 240, 70],
  ])("tiles %i agents in %i×%i exactly, every pane at least the minimum size", (count, cols, rows) => {
    const l = layoutPanes(count, cols, rows);
    for (let r = 0; r < l.rows; r++) {
      const row = l.rects.filter((p) => p.row === r);
      expect(row.reduce((sum, p) => sum + p.width, 0)).toBe(cols);
    }
    for (let c = 0; c < l.columns; c++) {
      const column = l.rects.filter((p) => p.column === c);
      expect(column.reduce((sum, p) => sum + p.height, 0)).toBe(rows);
    }
    for (const p of l.rects) {
      expect(p.width).toBeGreaterThanOrEqual(MIN_PANE_WIDTH);
      expect(p.height).toBeGreaterThanOrEqual(MIN_PANE_HEIGHT);
    }
  });

  it("gives full screen to one agent and nothing to none", () => {
    expect(layoutPanes(1, 90, 30).rects).toEqual([{ slot: 0, row: 0, column: 0, x: 0, y: 0, width: 90, height: 30 }]);
    expect(layoutPanes(0, 90, 30)).toEqual({ columns: 0, rows: 0, perPage: 0, pages: 0, rects: [] });
  });

  it("still shows one pane in a terminal smaller than the minimum", () => {
    const l = layoutPanes(3, 20, 4);
    expect(l.perPage).toBe(1);
    expect(l.pages).toBe(3);
  });
});
