/**
 * What the TUI's view holds besides the agents (those are the store's): the focus, the
 * zoom, the open input line, overlay and question, the status line, the scroll, and the
 * single view's editor. `uiReducer` is the one place it changes, a key's action
 * (keymap.ts) included; the App renders it and performs what a key asks of the agents
 * (commands.ts). Pure.
 */
import type { KeyAction } from "./keymap.js";
import type { Overview } from "./layout.js";
import { lineState, type LineState } from "./line-editor.js";
import type { NewAgentValues } from "./NewAgentForm.js";

/** What an input line sends. */
export type InputKind = "prompt" | "steer" | "follow_up";

/** What an input line's label says. */
export const INPUT_LABEL: Record<InputKind, string> = { prompt: "prompt", steer: "steer", follow_up: "follow-up" };

/** A full-screen overlay over the agents. */
export type Overlay =
  | { kind: "help" }
  | { kind: "new"; values?: NewAgentValues; error?: string }
  | { kind: "diff"; title: string; text: string; top: number }
  | null;

/** A destructive command waiting for y. */
export interface Confirm {
  question: string;
  command: "stop" | "restart";
  agent: string;
}

/** The view's state. */
export interface UiState {
  /** The focused agent's name (null: the first). */
  focus: string | null;
  zoomed: boolean;
  /** The overview the person chose (`v`); null: the one that suits the number of agents. */
  view: Overview | null;
  input: { kind: InputKind; agent: string } | null;
  overlay: Overlay;
  /** The status line's message until the next key. */
  flash: { text: string; error: boolean } | null;
  confirm: Confirm | null;
  /** Zoomed transcript lines scrolled up from the bottom. */
  scroll: number;
  /** Single mode: the last key was Ctrl+C. */
  quitArmed: boolean;
  /** Single mode: the editor's line as typed (for the list above it), and whether Tab asked for paths. */
  typed: LineState;
  tabbed: boolean;
  /** Single mode: a text put into the editor; a new editor (`n`) mounts with it. */
  editor: { text: string; n: number };
  /** Single mode: tool output expanded (Ctrl+O), thinking blocks hidden (Ctrl+T). */
  expanded: boolean;
  hideThinking: boolean;
}

/** What the view knows when a key's action comes. */
export interface KeyContext {
  /** The names of the agents with a pane, in order (a focus action gives an index). */
  agents: readonly string[];
  /** The focused agent, if any. */
  focused: { name: string; status: string } | null;
  /** The terminal's rows (a page of scrolling). */
  rows: number;
  /** The largest useful zoomed scroll at this size. */
  scrollMax: number;
}

/** A change of the view. */
export type UiAction =
  /** A key's action; its effects on agents are the commands'. */
  | { type: "key"; action: KeyAction; at: KeyContext }
  | { type: "focus"; agent: string }
  | { type: "say"; text: string; error?: boolean }
  /** An overlay opens or closes; `unsay` clears the status line too (a loaded diff replaces its "diffing…"). */
  | { type: "overlay"; overlay: Overlay; unsay?: boolean }
  /** A spawn from the form failed: the form again with what was typed, unless another overlay opened meanwhile. */
  | { type: "form_failed"; values: NewAgentValues; error: string }
  | { type: "close_input" }
  /** A line was sent: the zoomed view follows the stream again. */
  | { type: "sent" }
  | { type: "typed"; line: LineState }
  | { type: "tabbed"; on: boolean }
  | { type: "set_editor"; text: string }
  | { type: "toggle_expanded" }
  | { type: "toggle_thinking" };

/** The view as it opens: zoomed in single mode. */
export function initialUi(mode: "grid" | "single", hideThinking = false): UiState {
  return {
    focus: null,
    zoomed: mode === "single",
    view: null,
    input: null,
    overlay: null,
    flash: null,
    confirm: null,
    scroll: 0,
    quitArmed: false,
    typed: lineState(),
    tabbed: false,
    editor: { text: "", n: 0 },
    expanded: false,
    hideThinking,
  };
}

/** The view after `action`. Pure. */
export function uiReducer(s: UiState, action: UiAction): UiState {
  switch (action.type) {
    case "key":
      return keyReducer({ ...s, flash: null, quitArmed: false }, action.action, action.at);
    case "focus":
      return { ...s, focus: action.agent };
    case "say":
      return { ...s, flash: { text: action.text, error: action.error ?? false } };
    case "overlay":
      return { ...s, overlay: action.overlay, flash: action.unsay ? null : s.flash };
    case "form_failed":
      return s.overlay === null ? { ...s, overlay: { kind: "new", values: action.values, error: action.error } } : s;
    case "close_input":
      return { ...s, input: null };
    case "sent":
      return { ...s, scroll: 0 };
    case "typed":
      // A new word (or an empty line) ends what Tab asked for.
      return {
        ...s,
        typed: action.line,
        tabbed: s.tabbed && !/(^|\s)$/.test(action.line.text.slice(0, action.line.cursor)),
      };
    case "tabbed":
      return { ...s, tabbed: action.on };
    case "set_editor":
      return { ...s, editor: { text: action.text, n: s.editor.n + 1 }, typed: lineState(action.text) };
    case "toggle_expanded":
      return {
        ...s,
        expanded: !s.expanded,
        flash: { text: `Tool output: ${s.expanded ? "collapsed" : "expanded"}`, error: false },
      };
    case "toggle_thinking":
      return {
        ...s,
        hideThinking: !s.hideThinking,
        flash: { text: `Thinking blocks: ${s.hideThinking ? "visible" : "hidden"}`, error: false },
      };
  }
}

const say = (s: UiState, text: string, error = false): UiState => ({ ...s, flash: { text, error } });

/** What a key's action does to the view (the flash already cleared). */
function keyReducer(s: UiState, a: KeyAction, at: KeyContext): UiState {
  const name = at.focused?.name;
  const busy = at.focused?.status === "busy";
  switch (a.kind) {
    case "arm_quit":
      return say({ ...s, quitArmed: true }, "press Ctrl+C again to quit");
    case "confirm":
      return a.yes ? { ...s, confirm: null } : say({ ...s, confirm: null }, "cancelled");
    case "close_overlay":
      return { ...s, overlay: null };
    case "diff_scroll": {
      if (s.overlay?.kind !== "diff") return s;
      const page = Math.max(1, at.rows - 6);
      const by = { up: -1, down: 1, page_up: -page, page_down: page }[a.to];
      return { ...s, overlay: { ...s.overlay, top: Math.max(0, s.overlay.top + by) } };
    }
    case "scroll": {
      if (a.to === "bottom") return { ...s, scroll: 0 };
      const page = Math.max(1, at.rows - 8);
      const by = { up: 1, down: -1, page_up: page, page_down: -page, top: Number.MAX_SAFE_INTEGER }[a.to];
      return { ...s, scroll: Math.max(0, Math.min(at.scrollMax, s.scroll + by)) };
    }
    case "help":
      return { ...s, overlay: { kind: "help" } };
    case "new":
      return { ...s, overlay: { kind: "new" } };
    case "focus": {
      const agent = at.agents[(a.index + at.agents.length) % at.agents.length];
      return agent === undefined ? s : { ...s, focus: agent, scroll: 0 };
    }
    case "zoom":
      return { ...s, zoomed: true };
    case "unzoom":
      return { ...s, zoomed: false, scroll: 0 };
    case "view":
      return { ...s, view: a.to };
    case "refuse":
      return name ? say(s, `${name} ${a.message}`, a.error) : s;
    case "input":
      return name ? { ...s, input: { kind: a.input, agent: name } } : s;
    case "stop":
    case "restart":
      return name
        ? {
            ...s,
            confirm: {
              question: `${a.kind} ${name}${busy ? " and abort its run" : ""}? y/n`,
              command: a.kind,
              agent: name,
            },
          }
        : s;
    default:
      return s;
  }
}

/** What the status line says, most urgent first. */
export function footerText(
  s: UiState,
  view: { mode: "grid" | "single"; zoomed: boolean; waiting: readonly string[]; status?: string; hint: string },
): string {
  if (s.confirm) return s.confirm.question;
  if (s.flash) return s.flash.text;
  const { waiting } = view;
  if (waiting.length > 0)
    return `${waiting.join(", ")} ${waiting.length === 1 ? "asks" : "ask"} a question: focus ${waiting.length === 1 ? "it" : "them"} to answer`;
  if (view.mode === "single") return [view.status, view.hint].filter(Boolean).join(" · ");
  return view.zoomed ? "" : view.hint;
}
