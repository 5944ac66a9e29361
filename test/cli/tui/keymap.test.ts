/**
 * The keymap as a table: whole reads of the terminal (`4p`, two arrows, Alt+a) split into
 * keys and fed one at a time to keyAction, each against the screen the previous one left
 * (as the App does: focus moves, the zoom opens, an input line takes the rest).
 */
import { describe, expect, it } from "vitest";
import { keyName, parseKey, splitKeys } from "../../../cli/tui/keys.js";
import { keyAction, type KeyAction, type KeymapState } from "../../../cli/tui/keymap.js";

const RIGHT = "\x1b[C";
const LEFT = "\x1b[D";
const DOWN = "\x1b[B";
const SHIFT_TAB = "\x1b[Z";

/** 6 agents in a 3-column grid, 6 to a page, the first focused and busy. */
const GRID: KeymapState = { agents: 6, focus: 0, columns: 3, perPage: 6, zoomed: false, focusedStatus: "busy" };

/**
 * Feed a read key by key: the actions, and where the screen ends up. Once an input line
 * opens, the rest of the read is typed into it (`typed`).
 */
function feed(state: KeymapState, read: string): { actions: KeyAction[]; state: KeymapState; typed: string } {
  let s = state;
  const actions: KeyAction[] = [];
  const keys = splitKeys(read, true);
  while (keys.length > 0) {
    const action = keyAction(s, parseKey(keys.shift()!));
    actions.push(action);
    if (action.kind === "focus") s = { ...s, focus: action.index };
    if (action.kind === "zoom") s = { ...s, zoomed: true };
    if (action.kind === "unzoom") s = { ...s, zoomed: false };
    if (action.kind === "input") return { actions, state: s, typed: keys.join("") };
  }
  return { actions, state: s, typed: "" };
}

describe("keyAction over whole reads", () => {
  it.each<{
    name: string;
    read: string;
    state?: Partial<KeymapState>;
    actions: KeyAction[];
    focus: number;
    typed?: string;
  }>([
    {
      name: "4p + text + Enter: focus the 4th pane, open its prompt, the rest is typed into it",
      read: "4phello\r",
      actions: [
        { kind: "focus", index: 3 },
        { kind: "input", input: "prompt" },
      ],
      focus: 3,
      typed: "hello\r",
    },
    {
      name: "Right Right moves twice",
      read: RIGHT + RIGHT,
      actions: [
        { kind: "focus", index: 1 },
        { kind: "focus", index: 2 },
      ],
      focus: 2,
    },
    {
      name: "Right Down Left: each from where the last one left",
      read: RIGHT + DOWN + LEFT,
      actions: [
        { kind: "focus", index: 1 },
        { kind: "focus", index: 4 },
        { kind: "focus", index: 3 },
      ],
      focus: 3,
    },
    {
      name: "Shift+Tab wraps to the last pane, Tab back to the first",
      read: `${SHIFT_TAB}\t`,
      actions: [
        { kind: "focus", index: 5 },
        { kind: "focus", index: 0 },
      ],
      focus: 0,
    },
    {
      name: "2a: abort the second agent, not the first",
      read: "2a",
      actions: [{ kind: "focus", index: 1 }, { kind: "abort" }],
      focus: 1,
    },
    {
      name: "Alt+a is not a: nothing is aborted",
      read: "\x1ba",
      actions: [{ kind: "none" }],
      focus: 0,
    },
    {
      name: "Alt+4 is not 4",
      read: "\x1b4",
      actions: [{ kind: "none" }],
      focus: 0,
    },
    {
      name: "9 past the last pane does nothing; 6 focuses the last",
      read: "96",
      actions: [{ kind: "none" }, { kind: "focus", index: 5 }],
      focus: 5,
    },
    {
      name: "Enter zooms; in the zoom, digits are not focus keys and Esc goes back",
      read: "\r3\x1b",
      actions: [{ kind: "zoom" }, { kind: "none" }, { kind: "unzoom" }],
      focus: 0,
    },
    {
      name: "an idle agent refuses s and a, and takes p",
      read: "sap",
      state: { focusedStatus: "idle" },
      actions: [
        { kind: "refuse", message: "is idle: press p to prompt it", error: true },
        { kind: "refuse", message: "is idle: no run to abort", error: false },
        { kind: "input", input: "prompt" },
      ],
      focus: 0,
    },
    {
      name: "with no agent only n, ? and q do something",
      read: "pn",
      state: { agents: 0, focusedStatus: null },
      actions: [{ kind: "none" }, { kind: "new" }],
      focus: 0,
    },
  ])("$name", ({ read, state, actions, focus, typed }) => {
    const got = feed({ ...GRID, ...state }, read);
    expect(got.actions).toEqual(actions);
    expect(got.state.focus).toBe(focus);
    expect(got.typed).toBe(typed ?? "");
  });
});

describe("key names", () => {
  it.each([
    ["p", "p"],
    ["P", "P"],
    ["\x1bp", "M-p"],
    ["\x03", "C-c"],
    ["\r", "return"],
    ["\x1b", "escape"],
    ["\x1b[Z", "S-tab"],
    ["\x1b[1;5C", "C-right"],
    ["\x1b[1;3D", "M-left"],
    ["\x1b[5~", "pageup"],
    ["\x1bOA", "up"],
  ])("%j is %s", (seq, name) => {
    expect(keyName(parseKey(seq))).toBe(name);
  });

  it("a bracketed paste stays one key", () => {
    expect(splitKeys("a\x1b[200~x\ry\x1b[201~b", true)).toEqual(["a", "\x1b[200~x\ry\x1b[201~", "b"]);
  });
});
