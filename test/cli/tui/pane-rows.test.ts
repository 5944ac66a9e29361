import stringWidth from "string-width";
import { describe, expect, it } from "vitest";
import { columns, fitSpans, listRows, paneRows } from "../../../cli/tui/pane-rows.js";
import { initialState, reduce, type AgentView } from "../../../cli/tui/state.js";
import { info } from "./helpers.js";

/** An agent as the reducer makes it, with `text` streamed into its transcript. */
function agent(text: string, status: "idle" | "busy" = "busy"): AgentView {
  let s = reduce(initialState(0), { type: "agents", agents: [info("agent-01", status, { restarts: 1 })] });
  s = reduce(s, {
    type: "event",
    agent: "agent-01",
    seq: 1,
    event: { type: "message_update", assistantMessageEvent: { type: "text_delta", delta: text } },
  });
  return s.agents["agent-01"]!;
}
const plain = (row: string) => row.replace(/\x1b\[[0-9;]*m/g, "");

describe("paneRows", () => {
  const texts = [
    "plain words that wrap over the pane",
    "漢字のテキストがペインの幅を超えて続きます漢字のテキスト",
    "emoji 👍🏽 and 👨‍👩‍👧 family",
    "escape \x1b[2J\x1b[H in tool output\x07",
    "",
  ];
  for (const text of texts) {
    for (const [width, height] of [
      [30, 8],
      [4, 4],
      [3, 3],
      [50, 12],
    ] as const) {
      it(`draws ${JSON.stringify(text.slice(0, 12))} as ${height} rows of exactly ${width} columns`, () => {
        for (const color of [true, false]) {
          const rows = paneRows({ agent: agent(text), width, height, focused: false, now: 0, color });
          expect(rows).toHaveLength(height);
          for (const row of rows) {
            expect(stringWidth(plain(row)), JSON.stringify(row)).toBe(width);
            // No terminal control survives but the colours.
            expect(plain(row)).not.toMatch(/[\x00-\x1f\x7f]/);
          }
        }
      });
    }
  }

  it("shows focus as a double border, colour only when asked", () => {
    const rows = paneRows({
      agent: agent("hi"),
      width: 30,
      height: 6,
      focused: true,
      now: 0,
      slotKey: 2,
      color: false,
    });
    expect(rows[0]).toBe(`╔${"═".repeat(28)}╗`);
    expect(rows[1]).toMatch(/^║ 2 agent-01 {2}[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] busy ↻1 +║$/);
    expect(rows.at(-1)).toBe(`╚${"═".repeat(28)}╝`);
    expect(rows.join("")).not.toContain("\x1b");
    const coloured = paneRows({ agent: agent("hi"), width: 30, height: 6, focused: false, now: 0, color: true });
    expect(coloured[0]).toMatch(/^\x1b\[90m╭─+╮\x1b\[0m$/);
  });

  it("keeps the last lines of the transcript, as the grid shows it", () => {
    const rows = paneRows({
      agent: agent("one\ntwo\nthree\nfour"),
      width: 20,
      height: 6,
      focused: false,
      now: 0,
      color: false,
    });
    expect(rows.slice(3, 5)).toEqual(["│ three            │", "│ four             │"]);
  });
});

describe("fitSpans", () => {
  const cases: [spans: [string][], width: number, out: string][] = [
    [[["abc"]], 5, "abc  "],
    [[["abcdef"]], 4, "abc…"],
    [[["ab"], ["cdef"]], 4, "abc…"],
    [[["ab"], ["cd"]], 4, "abcd"],
    [[["漢字漢字"]], 5, "漢字…"],
    [[["漢字漢字"]], 6, "漢字 …"],
    [[["a\x1bb"]], 3, "ab "],
  ];
  for (const [spans, width, out] of cases) {
    it(`fits ${JSON.stringify(spans)} to ${width} columns: ${JSON.stringify(out)}`, () => {
      expect(fitSpans(spans, width, false)).toBe(out);
      expect(columns(out)).toBe(width);
    });
  }
});

describe("listRows", () => {
  it("a row an agent, exactly the width, names and statuses in columns, the focused one marked", () => {
    const a = agent("first line\nthe last line");
    const b = { ...agent("漢字のテキスト", "idle"), name: "a-much-longer-agent-name-than-fits" };
    for (const width of [20, 36, 64])
      for (const row of listRows([a, b], width, 0, a.name))
        expect(columns(plain(fitSpans(row, width, false)))).toBe(width);
    const [ra, rb] = listRows([a, b], 64, 0, a.name).map((r) => fitSpans(r, 64, false));
    expect(ra).toMatch(/^▶ 1 agent-01 {17}[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] busy ↻1 +the last line +$/);
    expect(rb).toMatch(/^ {2}2 a-much-longer-agent-nam… ● idle ↻1 +漢字のテキスト +$/);
  });
});
