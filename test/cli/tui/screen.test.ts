import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { Screen } from "../../../cli/tui/screen.js";

/** A terminal that keeps what was written to it. */
class Term extends EventEmitter {
  columns = 20;
  rows = 4;
  writes: string[] = [];
  write(chunk: string) {
    this.writes.push(chunk);
    return true;
  }
  /** The rows written by the last write, by their cursor address. */
  rowsOfLast(): number[] {
    return [...(this.writes.at(-1) ?? "").matchAll(/\x1b\[(\d+);1H/g)].map((m) => Number(m[1]));
  }
}

describe("the screen", () => {
  it("writes ink's frame and the panes over it, then only the rows that changed", () => {
    const term = new Term();
    const screen = new Screen(term);
    screen.inkStdout.write("header\n\n\nfooter");
    screen.setPane("a", { x: 2, y: 1, rows: ["+--+", "|hi|"] });
    screen.flush();
    const first = term.writes.at(-1)!;
    expect(first).toContain("\x1b[?2026h");
    expect(first).toContain("\x1b[2J");
    expect(term.rowsOfLast()).toEqual([1, 2, 3, 4]);
    expect(first).toContain("\x1b[2;3H+--+");
    expect(first).toContain("\x1b[3;3H|hi|");

    screen.setPane("a", { x: 2, y: 1, rows: ["+--+", "|ho|"] });
    screen.flush();
    expect(term.rowsOfLast()).toEqual([3]);
    expect(term.writes.at(-1)).not.toContain("\x1b[2J");

    const before = term.writes.length;
    screen.setPane("a", { x: 2, y: 1, rows: ["+--+", "|ho|"] });
    screen.flush();
    expect(term.writes.length).toBe(before);

    screen.removePane("a");
    screen.flush();
    expect(term.rowsOfLast()).toEqual([2, 3]);
    screen.dispose();
  });

  it("draws everything again after a redraw or a resize, and tells ink of the resize", () => {
    const term = new Term();
    const screen = new Screen(term);
    let resized = 0;
    screen.inkStdout.on("resize", () => resized++);
    screen.inkStdout.write("one\ntwo");
    screen.flush();
    screen.redraw();
    screen.flush();
    expect(term.writes.at(-1)).toContain("\x1b[2J");
    expect(term.rowsOfLast()).toEqual([1, 2, 3, 4]);
    term.rows = 3;
    term.emit("resize");
    screen.flush();
    expect(resized).toBe(1);
    expect(screen.inkStdout.rows).toBe(3);
    expect(term.rowsOfLast()).toEqual([1, 2, 3]);
    screen.dispose();
    expect(term.writes.at(-1)).toContain("\x1b[?25h");
    expect(term.listenerCount("resize")).toBe(0);
  });
});
