import { describe, expect, it } from "vitest";
import { LogLineReader } from "../../shared/event-replay.js";

const line = (seq: number) => `{"seq":${seq},"at":${1000 + seq},"event":{"type":"e${seq}"}}`;

describe("LogLineReader", () => {
  it("gives each whole line once across pieces, with the seqs no line has before it", () => {
    const reader = new LogLineReader();
    const text = `${line(1)}\n${line(2)}\n\n${line(5)}\nnot json\n${line(6)}\n${line(8)}`;
    const cut = text.indexOf("e5");
    const read = [...reader.feed(text.slice(0, cut)), ...reader.feed(text.slice(cut)), ...reader.feed("\n")];
    expect(read.map((r) => [r.entry?.seq ?? r.line, r.missing])).toEqual([
      [1, null],
      [2, null],
      [5, { from: 3, to: 4, lost: true }],
      ["not json", null],
      [6, null],
      [8, { from: 7, to: 7, lost: true }],
    ]);
    expect(read[0]!.line).toBe(line(1));
  });

  it("keeps an unfinished last line until its newline comes", () => {
    const reader = new LogLineReader();
    expect(reader.feed(line(1).slice(0, 10))).toEqual([]);
    expect(reader.feed(`${line(1).slice(10)}\n`).map((r) => r.entry)).toEqual([
      { seq: 1, at: 1001, event: { type: "e1" } },
    ]);
  });
});
