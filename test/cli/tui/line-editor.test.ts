import { describe, expect, it } from "vitest";
import { applyInput, lineState, visibleLine, type LineAction, type LineState } from "../../../cli/tui/line-editor.js";
import { splitKeys } from "../../../cli/tui/keys.js";
import { bindingsFrom, sequenceName } from "../../../cli/tui/keybindings.js";

/** Feed the chunks one after another, as separate reads. */
function feed(chunks: string[], start: LineState = lineState()): { state: LineState; actions: LineAction[] } {
  let state = start;
  const actions: LineAction[] = [];
  for (const chunk of chunks) {
    const r = applyInput(state, chunk);
    state = r.state;
    actions.push(...r.actions);
  }
  return { state, actions };
}

const LEFT = "\x1b[D";
const RIGHT = "\x1b[C";

describe("line editor", () => {
  it.each([
    ["Left moves the cursor", ["abcd", LEFT, "X"], "abcXd", 4],
    ["Right after Left", ["ab", LEFT, LEFT, RIGHT, "X"], "aXb", 2],
    ["Home and End", ["bc", "\x1b[H", "a", "\x1b[F", "d"], "abcd", 4],
    ["Home/End as VT220 and SS3 keys", ["bc", "\x1b[1~", "a", "\x1bOF", "d"], "abcd", 4],
    ["Ctrl+A / Ctrl+E", ["bc", "\x01", "a", "\x05", "d"], "abcd", 4],
    ["two backspaces in one read", ["abcd", "\x7f\x7f"], "ab", 2],
    ["backspace at the cursor", ["abcd", LEFT, "\x7f"], "abd", 2],
    ["Delete removes under the cursor", ["abcd", "\x1b[H", "\x1b[3~"], "bcd", 0],
    ["Ctrl+W deletes the word before", ["git commit  --amend", "\x17"], "git commit  ", 12],
    ["Alt+Backspace deletes the word before", ["one two", "\x1b\x7f"], "one ", 4],
    ["word left / right", ["one two", "\x1b[1;5D", "X", "\x1b[1;5C", "Y"], "one XtwoY", 9],
    ["Ctrl+U deletes to the start", ["one two", LEFT, LEFT, LEFT, "\x15"], "two", 0],
    ["Ctrl+K deletes to the end", ["one two", "\x1b[H", "\x1bf", "\x0b"], "one", 3],
    ["all keys in one read", [`abcd${LEFT}X\x7f\x7f\x1b[H!`], "!abd", 1],
    ["up and down change nothing", ["ab", "\x1b[A", "\x1b[B"], "ab", 2],
    ["a surrogate pair moves as one", ["a😀", LEFT, "X"], "aX😀", 2],
  ])("%s", (_what, chunks, text, cursor) => {
    const { state, actions } = feed(chunks);
    expect(state.text).toBe(text);
    expect(state.cursor).toBe(cursor);
    expect(actions).toEqual([]);
  });

  it.each([
    ["Enter alone", ["abc", "\r"], [{ kind: "submit", text: "abc", cursor: 3 }], ""],
    ["text and Enter in one read", ["abc\r"], [{ kind: "submit", text: "abc", cursor: 3 }], ""],
    ["CR LF is one Enter", ["abc\r\n"], [{ kind: "submit", text: "abc", cursor: 3 }], ""],
    ["a paste without brackets keeps its breaks", ["one\rtwo"], [], "one\ntwo"],
    [
      "a bracketed paste keeps its breaks, then Enter sends",
      ["\x1b[200~one\r\ntwo\n\x1b[201~", "\r"],
      [{ kind: "submit", text: "one\ntwo\n", cursor: 8 }],
      "",
    ],
    ["Esc cancels", ["ab", "\x1b"], [{ kind: "cancel" }], "ab"],
    ["Tab is the other submit", ["ab\t"], [{ kind: "tab", text: "ab", cursor: 2 }], "ab"],
    ["Alt+Enter is pi's follow-up", ["ab\x1b\r"], [{ kind: "follow_up", text: "ab" }], ""],
    ["Ctrl+J is a new line", ["a\nb"], [], "a\nb"],
    ["Ctrl+D on an empty line exits", ["\x04"], [{ kind: "exit" }], ""],
    ["Ctrl+D with text deletes forward", ["ab\x01\x04"], [], "b"],
    ["Ctrl+C clears, and the view is told", ["ab\x03"], [{ kind: "action", id: "app.clear" }], ""],
    [
      "Ctrl+G, Ctrl+T, Alt+Up go to the view",
      ["a\x07\x14\x1b[1;3A"],
      [
        { kind: "action", id: "app.editor.external" },
        { kind: "action", id: "app.thinking.toggle" },
        { kind: "action", id: "app.message.dequeue" },
      ],
      "a",
    ],
  ])("%s", (_what, chunks, actions, left) => {
    const r = feed(chunks);
    expect(r.actions).toEqual(actions);
    expect(r.state.text).toBe(left);
  });

  it("follows a keymap: a rebound key does the action, the old key only edits", () => {
    const { bindings } = bindingsFrom({ "app.editor.external": "ctrl+e", "tui.input.submit": ["ctrl+s"] });
    const keymap = (seq: string) => bindings.action(sequenceName(seq));
    const r = applyInput(lineState("ab"), "\x07\x05\r\x13", keymap);
    expect(r.actions).toEqual([
      { kind: "action", id: "app.editor.external" },
      { kind: "submit", text: "ab", cursor: 2 },
    ]);
  });

  it("splits raw input into keys, escape sequences whole", () => {
    expect(splitKeys("a\x1b[1;5Db\x1b[200~\x1bOH\x1b\x7f\x1b")).toEqual([
      "a",
      "\x1b[1;5D",
      "b",
      "\x1b[200~",
      "\x1bOH",
      "\x1b\x7f",
      "\x1b",
    ]);
    expect(splitKeys("\x1b\x1b")).toEqual(["\x1b", "\x1b"]);
  });

  it("shows a window that keeps the cursor in view, newlines as ↵", () => {
    expect(visibleLine({ text: "ab\ncd", cursor: 2, pasting: false }, 10)).toEqual({
      before: "ab",
      at: "↵",
      after: "cd",
    });
    expect(visibleLine({ text: "abcdefghij", cursor: 10, pasting: false }, 5)).toEqual({
      before: "…hij",
      at: " ",
      after: "",
    });
    expect(visibleLine({ text: "abcdefghij", cursor: 0, pasting: false }, 5)).toEqual({
      before: "",
      at: "a",
      after: "bcde",
    });
  });
});
