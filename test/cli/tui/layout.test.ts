import { describe, expect, it } from "vitest";
import { chooseOverview, layoutList, layoutPanes, MIN_PANE_HEIGHT, MIN_PANE_WIDTH } from "../../../cli/tui/layout.js";

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

describe("the overview", () => {
  it.each([
    // count, cols, rows, chosen → overview
    [16, 200, 47, null, "grid"],
    [56, 200, 47, null, "grid"],
    [57, 200, 47, null, "list"],
    [64, 200, 47, null, "list"],
    [9, 80, 21, null, "grid"],
    [10, 80, 21, null, "list"],
    [64, 200, 47, "grid", "grid"],
    [2, 80, 21, "list", "list"],
  ] as const)("%i agents in %i×%i (chosen: %s): %s", (count, cols, rows, chosen, overview) => {
    expect(chooseOverview(count, cols, rows, chosen)).toBe(overview);
  });

  it.each([
    // count, cols, rows → list width, pane width, per page, pages
    [64, 200, 47, 64, 136, 47, 2],
    [64, 100, 27, 36, 64, 27, 3],
    [64, 80, 21, 30, 50, 21, 4],
    [64, 50, 21, 50, 0, 21, 4],
    [0, 80, 21, 30, 50, 21, 1],
  ])(
    "the list of %i agents in %i×%i: %i columns, a pane of %i, %i a page, %i page(s)",
    (count, cols, rows, listWidth, paneWidth, perPage, pages) => {
      expect(layoutList(count, cols, rows)).toEqual({ listWidth, paneWidth, perPage, pages });
    },
  );
});
