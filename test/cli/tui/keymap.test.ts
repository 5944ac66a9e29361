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
const GRID: KeymapState = {
  mode: "grid",
  agents: 6,
  focus: 0,
  columns: 3,
  perPage: 6,
  overview: "grid",
  zoomed: false,
  focusedStatus: "busy",
  overlay: null,
  confirming: false,
  quitArmed: false,
  clearKeys: [],
};
/** pi on a terminal: one agent, zoomed, Ctrl+C bound to pi's app.clear. */
const SINGLE: KeymapState = { ...GRID, mode: "single", agents: 1, columns: 1, perPage: 1, clearKeys: ["C-c"] };

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
      name: "v switches the grid to the list; there ↓ moves a row, PgDn a page of rows",
      read: `v${DOWN}\x1b[6~`,
      state: { agents: 64, columns: 1, perPage: 27, overview: "list" },
      actions: [
        { kind: "view", to: "grid" },
        { kind: "focus", index: 1 },
        { kind: "focus", index: 27 },
      ],
      focus: 27,
    },
    {
      name: "v in the grid asks for the list",
      read: "v",
      actions: [{ kind: "view", to: "list" }],
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

describe("keyAction before the agent views", () => {
  const CTRL_C = parseKey("\x03");
  it.each<{ name: string; state: Partial<KeymapState>; key: string; action: KeyAction }>([
    { name: "Ctrl+C quits the grid at once", state: {}, key: "\x03", action: { kind: "quit" } },
    { name: "Ctrl+L redraws the grid", state: {}, key: "\x0c", action: { kind: "redraw" } },
    {
      name: "Ctrl+L in the single view is pi's (the editor takes it)",
      state: SINGLE,
      key: "\x0c",
      action: { kind: "none" },
    },
    {
      name: "y answers the question yes",
      state: { confirming: true },
      key: "y",
      action: { kind: "confirm", yes: true },
    },
    { name: "Y too", state: { confirming: true }, key: "Y", action: { kind: "confirm", yes: true } },
    {
      name: "any other key says no (a: no abort)",
      state: { confirming: true },
      key: "a",
      action: { kind: "confirm", yes: false },
    },
    { name: "Ctrl+C still quits while asking", state: { confirming: true }, key: "\x03", action: { kind: "quit" } },
    { name: "Esc closes the help", state: { overlay: "help" }, key: "\x1b", action: { kind: "close_overlay" } },
    { name: "? closes the help", state: { overlay: "help" }, key: "?", action: { kind: "close_overlay" } },
    { name: "p does nothing under the help", state: { overlay: "help" }, key: "p", action: { kind: "none" } },
    { name: "d closes the diff", state: { overlay: "diff" }, key: "d", action: { kind: "close_overlay" } },
    {
      name: "↓ scrolls the diff",
      state: { overlay: "diff" },
      key: "\x1b[B",
      action: { kind: "diff_scroll", to: "down" },
    },
    {
      name: "Space pages the diff",
      state: { overlay: "diff" },
      key: " ",
      action: { kind: "diff_scroll", to: "page_down" },
    },
    {
      name: "PgUp pages the diff back",
      state: { overlay: "diff" },
      key: "\x1b[5~",
      action: { kind: "diff_scroll", to: "page_up" },
    },
    { name: "the diff takes no focus key", state: { overlay: "diff" }, key: "\x1b[C", action: { kind: "none" } },
    { name: "single: the first Ctrl+C arms the quit", state: SINGLE, key: "\x03", action: { kind: "arm_quit" } },
    { name: "single: the second quits", state: { ...SINGLE, quitArmed: true }, key: "\x03", action: { kind: "quit" } },
    {
      name: "single: a rebound clear key arms it",
      state: { ...SINGLE, clearKeys: ["C-x"] },
      key: "\x18",
      action: { kind: "arm_quit" },
    },
    {
      name: "single: Ctrl+C is not clear once rebound",
      state: { ...SINGLE, clearKeys: ["C-x"] },
      key: "\x03",
      action: { kind: "none" },
    },
    { name: "single: PgUp scrolls", state: SINGLE, key: "\x1b[5~", action: { kind: "scroll", to: "page_up" } },
    { name: "single: p is typed, not a prompt key", state: SINGLE, key: "p", action: { kind: "none" } },
    { name: "single: ? is typed", state: SINGLE, key: "?", action: { kind: "none" } },
    { name: "single: Alt+? opens the help", state: SINGLE, key: "\x1b?", action: { kind: "help" } },
  ])("$name", ({ state, key, action }) => {
    expect(keyAction({ ...GRID, ...state }, parseKey(key))).toEqual(action);
  });

  it("Ctrl+C is a key name the single view's clear keys match", () => {
    expect(keyName(CTRL_C)).toBe("C-c");
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
