/**
 * The view state as a table: each key's action (keymap.ts) and each command's outcome
 * applied to the view, as the App dispatches them.
 */
import { describe, expect, it } from "vitest";
import type { KeyAction } from "../../../cli/tui/keymap.js";
import { lineState } from "../../../cli/tui/line-editor.js";
import { footerText, initialUi, uiReducer, type KeyContext, type UiState } from "../../../cli/tui/ui-state.js";

const AT: KeyContext = {
  agents: ["a", "b", "c"],
  focused: { name: "a", status: "busy" },
  rows: 30,
  scrollMax: 100,
};
const key = (s: UiState, action: KeyAction, at: Partial<KeyContext> = {}) =>
  uiReducer(s, { type: "key", action, at: { ...AT, ...at } });
const GRID = initialUi("grid");

describe("a key's action on the view", () => {
  it("clears the status line and the armed quit", () => {
    const s = { ...GRID, flash: { text: "x", error: true }, quitArmed: true };
    expect(key(s, { kind: "none" })).toMatchObject({ flash: null, quitArmed: false });
  });

  it("focus wraps by index and follows the stream again", () => {
    expect(key({ ...GRID, scroll: 5 }, { kind: "focus", index: 4 })).toMatchObject({ focus: "b", scroll: 0 });
    expect(key(GRID, { kind: "focus", index: 0 }, { agents: [] })).toEqual(GRID);
  });

  it("scrolls the zoomed transcript within its bounds, a page being the rows less 8", () => {
    expect(key(GRID, { kind: "scroll", to: "up" }).scroll).toBe(1);
    expect(key(GRID, { kind: "scroll", to: "page_up" }).scroll).toBe(22);
    expect(key(GRID, { kind: "scroll", to: "top" }).scroll).toBe(100);
    expect(key({ ...GRID, scroll: 3 }, { kind: "scroll", to: "page_down" }).scroll).toBe(0);
    expect(key({ ...GRID, scroll: 3 }, { kind: "scroll", to: "bottom" }).scroll).toBe(0);
  });

  it("unzoom goes back to the bottom of the stream; zoom keeps the scroll", () => {
    expect(key({ ...GRID, zoomed: true, scroll: 4 }, { kind: "unzoom" })).toMatchObject({ zoomed: false, scroll: 0 });
    expect(key({ ...GRID, scroll: 4 }, { kind: "zoom" })).toMatchObject({ zoomed: true, scroll: 4 });
  });

  it("opens the input line of the focused agent, and says why a key was refused", () => {
    expect(key(GRID, { kind: "input", input: "steer" }).input).toEqual({ kind: "steer", agent: "a" });
    expect(key(GRID, { kind: "refuse", message: "is idle: no run to abort", error: false }).flash).toEqual({
      text: "a is idle: no run to abort",
      error: false,
    });
    expect(key(GRID, { kind: "input", input: "prompt" }, { focused: null })).toEqual(GRID);
  });

  it("asks before stop and restart, saying a run is aborted; y runs it, another key cancels", () => {
    const asked = key(GRID, { kind: "stop" });
    expect(asked.confirm).toEqual({ question: "stop a and abort its run? y/n", command: "stop", agent: "a" });
    expect(key(GRID, { kind: "restart" }, { focused: { name: "b", status: "idle" } }).confirm?.question).toBe(
      "restart b? y/n",
    );
    expect(key(asked, { kind: "confirm", yes: true })).toMatchObject({ confirm: null, flash: null });
    expect(key(asked, { kind: "confirm", yes: false })).toMatchObject({
      confirm: null,
      flash: { text: "cancelled", error: false },
    });
  });

  it("scrolls the diff overlay by lines and pages (the rows less 6), never above its top", () => {
    const diff = { ...GRID, overlay: { kind: "diff" as const, title: "t", text: "x", top: 0 } };
    expect(key(diff, { kind: "diff_scroll", to: "page_down" }).overlay).toMatchObject({ top: 24 });
    expect(key(diff, { kind: "diff_scroll", to: "up" }).overlay).toMatchObject({ top: 0 });
    expect(key(diff, { kind: "close_overlay" }).overlay).toBeNull();
  });

  it("arms the quit with a word on the status line", () => {
    expect(key(initialUi("single"), { kind: "arm_quit" })).toMatchObject({
      quitArmed: true,
      flash: { text: "press Ctrl+C again to quit", error: false },
    });
  });
});

describe("the view's other changes", () => {
  it("a failed spawn brings the form back only when no other overlay opened", () => {
    const values = { name: "x", cwd: "", worktree: false, prompt: "" };
    expect(uiReducer(GRID, { type: "form_failed", values, error: "no" }).overlay).toEqual({
      kind: "new",
      values,
      error: "no",
    });
    const help = { ...GRID, overlay: { kind: "help" as const } };
    expect(uiReducer(help, { type: "form_failed", values, error: "no" })).toBe(help);
  });

  it("a new word ends what Tab asked for", () => {
    const tabbed = { ...GRID, tabbed: true };
    expect(uiReducer(tabbed, { type: "typed", line: lineState("src/a") }).tabbed).toBe(true);
    expect(uiReducer(tabbed, { type: "typed", line: lineState("src/a ") }).tabbed).toBe(false);
  });

  it("a text put into the editor mounts a new one with it", () => {
    const s = uiReducer(GRID, { type: "set_editor", text: "hi" });
    expect(s.editor).toEqual({ text: "hi", n: 1 });
    expect(s.typed.text).toBe("hi");
  });

  it("Ctrl+O and Ctrl+T toggle and say so", () => {
    expect(uiReducer(GRID, { type: "toggle_expanded" })).toMatchObject({
      expanded: true,
      flash: { text: "Tool output: expanded" },
    });
    expect(uiReducer(initialUi("single", true), { type: "toggle_thinking" })).toMatchObject({
      hideThinking: false,
      flash: { text: "Thinking blocks: visible" },
    });
  });
});

describe("the status line", () => {
  type View = Parameters<typeof footerText>[1];
  const view: View = { mode: "grid", zoomed: false, waiting: [], hint: "keys" };
  it.each<[string, Partial<UiState>, Partial<View>, string]>([
    [
      "a question first",
      { confirm: { question: "stop a? y/n", command: "stop", agent: "a" }, flash: { text: "x", error: false } },
      {},
      "stop a? y/n",
    ],
    ["then a message", { flash: { text: "sent", error: false } }, { waiting: ["b"] }, "sent"],
    ["then who waits for you", {}, { waiting: ["b", "c"] }, "b, c ask a question: focus them to answer"],
    ["the grid's keys", {}, {}, "keys"],
    ["nothing when zoomed (the view has its own)", {}, { zoomed: true }, ""],
    ["the single view's status and keys", {}, { mode: "single", status: "faux-1" }, "faux-1 · keys"],
  ])("%s", (_name, ui, v, text) => {
    expect(footerText({ ...GRID, ...ui }, { ...view, ...v })).toBe(text);
  });
});
