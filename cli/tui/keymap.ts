/**
 * The TUI's keys as data: which key does what in the grid, the zoomed view, the single
 * view, a confirm question and the help and diff overlays, and `keyAction`, the pure
 * function from what the screen shows and one key (cli/tui/keys.ts) to the action to
 * take. The view state takes the action (ui-state.ts), the commands perform what it asks
 * of agents (commands.ts); nothing here touches React, so a table test can feed whole
 * reads (`4p`, `→→`) key by key.
 */
import { keyName, type ParsedKey } from "./keys.js";
import type { Overview } from "./layout.js";

/** What a key may ask for, by name. */
export type Command =
  | "focus_next"
  | "focus_prev"
  | "focus_down"
  | "focus_up"
  | "page_next"
  | "page_prev"
  | "zoom"
  | "unzoom"
  | "scroll_up"
  | "scroll_down"
  | "scroll_page_up"
  | "scroll_page_down"
  | "scroll_top"
  | "scroll_bottom"
  | "prompt"
  | "steer"
  | "follow_up"
  | "abort"
  | "stop"
  | "restart"
  | "diff"
  | "new"
  | "help"
  | "quit"
  | "view";

/** Keys of every agent view (grid or zoomed), by key name (see keyName). */
const AGENT_KEYS: Readonly<Record<string, Command>> = {
  p: "prompt",
  s: "steer",
  f: "follow_up",
  a: "abort",
  x: "stop",
  r: "restart",
  d: "diff",
  n: "new",
  "?": "help",
  q: "quit",
};

/** The grid's own keys; `1`…`9` focus the pane of that number on the page. */
export const GRID_KEYS: Readonly<Record<string, Command>> = {
  ...AGENT_KEYS,
  right: "focus_next",
  tab: "focus_next",
  "S-tab": "focus_prev",
  left: "focus_prev",
  down: "focus_down",
  up: "focus_up",
  pagedown: "page_next",
  pageup: "page_prev",
  return: "zoom",
  v: "view",
};

/** The zoomed view's keys. */
export const ZOOM_KEYS: Readonly<Record<string, Command>> = {
  ...AGENT_KEYS,
  escape: "unzoom",
  up: "scroll_up",
  down: "scroll_down",
  pageup: "scroll_page_up",
  pagedown: "scroll_page_down",
  home: "scroll_top",
  end: "scroll_bottom",
};

/** What the keymap needs to know of the screen. */
export interface KeymapState {
  /** `grid`: pi-orch tui. `single`: pi on a terminal, whose editor takes every key not handled here. */
  mode: "grid" | "single";
  /** Agents with a pane, and the focused one's index among them. */
  agents: number;
  focus: number;
  /** Of the overview shown: the grid's, or the list's (one column, a row an agent). */
  columns: number;
  perPage: number;
  overview: Overview;
  zoomed: boolean;
  /** The focused agent's status ("idle", "busy", ...), or null with no agent. */
  focusedStatus: string | null;
  /** The overlay that takes the keys, if any (the new-agent form takes them itself). */
  overlay: "help" | "diff" | null;
  /** A question (stop? restart?) waits for y. */
  confirming: boolean;
  /** Ctrl+C was the last key: another one quits (single mode). */
  quitArmed: boolean;
  /** Single mode: the names of the keys bound to pi's `app.clear` (Ctrl+C unless keybindings.json says otherwise). */
  clearKeys: readonly string[];
}

/** What to do. */
export type KeyAction =
  | { kind: "none" }
  | { kind: "focus"; index: number }
  | { kind: "zoom" }
  | { kind: "unzoom" }
  /** In the zoomed view's transcript: a line or a page back (`up`) or on, or to either end. */
  | { kind: "scroll"; to: "up" | "down" | "page_up" | "page_down" | "top" | "bottom" }
  | { kind: "input"; input: "prompt" | "steer" | "follow_up" }
  /** Nothing to do, and why: `error` when the key asked for something that cannot be (a steer to an idle agent). */
  | { kind: "refuse"; message: string; error: boolean }
  /** Single mode's first Ctrl+C: abort a busy agent, and the next one quits. */
  | { kind: "arm_quit" }
  /** Draw the whole screen again (Ctrl+L in the grid). */
  | { kind: "redraw" }
  /** Switch the overview: panes in a grid, or a list beside the focused agent's pane. */
  | { kind: "view"; to: Overview }
  /** The answer to the question asked: y (yes) or any other key. */
  | { kind: "confirm"; yes: boolean }
  | { kind: "close_overlay" }
  /** In the diff overlay: a line or a page up or down. */
  | { kind: "diff_scroll"; to: "up" | "down" | "page_up" | "page_down" }
  | { kind: Extract<Command, "abort" | "stop" | "restart" | "diff" | "new" | "help" | "quit"> };

/**
 * The action for one key, in the order the screen takes keys: Ctrl+C, Ctrl+L, a question
 * asked, an overlay, then the agent views (in single mode only their scroll keys and
 * Alt+?: the editor takes the rest). Pure.
 */
export function keyAction(state: KeymapState, key: ParsedKey): KeyAction {
  const { input: ch, key: k } = key;
  const clear = state.mode === "single" ? state.clearKeys.includes(keyName(key)) : k.ctrl && ch === "c";
  if (clear) return state.mode === "grid" || state.quitArmed ? { kind: "quit" } : { kind: "arm_quit" };
  if (k.ctrl && ch === "l" && state.mode === "grid") return { kind: "redraw" };
  if (state.confirming) return { kind: "confirm", yes: ch === "y" || ch === "Y" };
  if (state.overlay === "help")
    return k.escape || ch === "?" || ch === "q" ? { kind: "close_overlay" } : { kind: "none" };
  if (state.overlay === "diff") {
    if (k.escape || ch === "q" || ch === "d") return { kind: "close_overlay" };
    if (k.upArrow) return { kind: "diff_scroll", to: "up" };
    if (k.downArrow) return { kind: "diff_scroll", to: "down" };
    if (k.pageUp) return { kind: "diff_scroll", to: "page_up" };
    if (k.pageDown || ch === " ") return { kind: "diff_scroll", to: "page_down" };
    return { kind: "none" };
  }
  const action = agentKeyAction({ ...state, zoomed: state.zoomed || state.mode === "single" }, key);
  if (state.mode === "grid" || action.kind === "scroll") return action;
  return ch === "?" && k.meta ? { kind: "help" } : { kind: "none" };
}

/** The action of a key in the grid or the zoomed view. */
function agentKeyAction(state: KeymapState, key: ParsedKey): KeyAction {
  const name = keyName(key);
  if (!state.zoomed && /^[1-9]$/.test(name)) {
    const page = state.perPage > 0 ? Math.floor(state.focus / state.perPage) : 0;
    const i = page * state.perPage + Number(name) - 1;
    return i < state.agents && Number(name) <= state.perPage ? { kind: "focus", index: i } : { kind: "none" };
  }
  const command = (state.zoomed ? ZOOM_KEYS : GRID_KEYS)[name];
  if (command === undefined) return { kind: "none" };
  const { agents, focus, columns, perPage } = state;
  const page = perPage > 0 ? Math.floor(focus / perPage) : 0;
  const wrap = (i: number) => ((i % agents) + agents) % agents;
  const idle = state.focusedStatus === "idle";
  if (state.focusedStatus === null && !["new", "help", "quit"].includes(command)) return { kind: "none" };
  switch (command) {
    case "focus_next":
      return { kind: "focus", index: wrap(focus + 1) };
    case "focus_prev":
      return { kind: "focus", index: wrap(focus - 1) };
    case "focus_down":
      return { kind: "focus", index: Math.min(agents - 1, focus + columns) };
    case "focus_up":
      return { kind: "focus", index: Math.max(0, focus - columns) };
    case "page_next":
      return { kind: "focus", index: Math.min(agents - 1, (page + 1) * perPage) };
    case "page_prev":
      return { kind: "focus", index: Math.max(0, (page - 1) * perPage) };
    case "zoom":
      return { kind: "zoom" };
    case "view":
      return { kind: "view", to: state.overview === "list" ? "grid" : "list" };
    case "unzoom":
      return { kind: "unzoom" };
    case "scroll_up":
      return { kind: "scroll", to: "up" };
    case "scroll_down":
      return { kind: "scroll", to: "down" };
    case "scroll_page_up":
      return { kind: "scroll", to: "page_up" };
    case "scroll_page_down":
      return { kind: "scroll", to: "page_down" };
    case "scroll_top":
      return { kind: "scroll", to: "top" };
    case "scroll_bottom":
      return { kind: "scroll", to: "bottom" };
    case "steer":
    case "follow_up":
      // pi would hold a steer or follow-up for an idle agent and mix it into the next prompt.
      return idle
        ? { kind: "refuse", message: "is idle: press p to prompt it", error: true }
        : { kind: "input", input: command };
    case "prompt":
      return { kind: "input", input: "prompt" };
    case "abort":
      return idle ? { kind: "refuse", message: "is idle: no run to abort", error: false } : { kind: "abort" };
    default:
      return { kind: command };
  }
}
