/**
 * The TUI's input line as a pure state machine over raw terminal input: a cursor
 * (←/→, Home/End, Ctrl+A/E, word moves with Ctrl/Alt+←/→), Backspace/Delete, word delete
 * (Ctrl+W, Alt+Backspace), Ctrl+U/Ctrl+K, bracketed paste of several lines, and the keys
 * of pi's actions (a keymap: pi's defaults or a user's keybindings.json): a new line
 * (Shift+Enter, Ctrl+J), submit, Tab, follow-up, interrupt, clear, exit on an empty line,
 * and the view's own actions (Ctrl+G, Ctrl+T, …) handed out. Every chunk is handled key by key, however the terminal split
 * or joined the input: `abc⏎` in one read submits `abc`, two backspaces delete two.
 */
import { DEFAULT_KEYBINDINGS, sequenceName, type ActionId } from "./keybindings.js";
import { splitKeys } from "./keys.js";

/** The text, where the cursor is (a UTF-16 index), and whether a bracketed paste is open. */
export interface LineState {
  text: string;
  cursor: number;
  pasting: boolean;
}

/** What the keys asked for beyond editing. `submit` and `tab` carry the line as it was. */
export type LineAction =
  | { kind: "submit"; text: string; cursor: number }
  | { kind: "tab"; text: string; cursor: number }
  /** pi's `app.message.followUp` (Alt+Enter). */
  | { kind: "follow_up"; text: string }
  /** pi's `app.interrupt` (Esc). */
  | { kind: "cancel" }
  /** pi's `app.exit` on an empty line (Ctrl+D). */
  | { kind: "exit" }
  /** Another of pi's actions bound to the key: the view performs it (`app.clear` after the line was cleared). */
  | { kind: "action"; id: ActionId };

/** Which of pi's actions a key (a `splitKeys` sequence) is bound to. */
export type EditorKeymap = (seq: string) => ActionId | undefined;

/** pi's default keys. */
export const DEFAULT_KEYMAP: EditorKeymap = (seq) => DEFAULT_KEYBINDINGS.action(sequenceName(seq));

/** An empty line, or one holding `text` with the cursor at its end. */
export function lineState(text = ""): LineState {
  return { text, cursor: text.length, pasting: false };
}

const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";

// Escape sequences by what they do (xterm, VT220 and rxvt variants).
const MOVES: Record<string, "left" | "right" | "home" | "end" | "wordLeft" | "wordRight" | "delete"> = {
  "\x1b[D": "left",
  "\x1bOD": "left",
  "\x1b[C": "right",
  "\x1bOC": "right",
  "\x1b[H": "home",
  "\x1bOH": "home",
  "\x1b[1~": "home",
  "\x1b[7~": "home",
  "\x1b[F": "end",
  "\x1bOF": "end",
  "\x1b[4~": "end",
  "\x1b[8~": "end",
  "\x1b[1;5D": "wordLeft",
  "\x1b[1;3D": "wordLeft",
  "\x1bb": "wordLeft",
  "\x1b[1;5C": "wordRight",
  "\x1b[1;3C": "wordRight",
  "\x1bf": "wordRight",
  "\x1b[3~": "delete",
};

/** Index of the start of the word before `i` (spaces first, then the word). */
function wordStart(text: string, i: number): number {
  let j = i;
  while (j > 0 && /\s/.test(text[j - 1]!)) j--;
  while (j > 0 && !/\s/.test(text[j - 1]!)) j--;
  return j;
}

/** Index just past the word after `i`. */
function wordEnd(text: string, i: number): number {
  let j = i;
  while (j < text.length && /\s/.test(text[j]!)) j++;
  while (j < text.length && !/\s/.test(text[j]!)) j++;
  return j;
}

function insert(s: LineState, chars: string): LineState {
  return { ...s, text: s.text.slice(0, s.cursor) + chars + s.text.slice(s.cursor), cursor: s.cursor + chars.length };
}

function removeRange(s: LineState, from: number, to: number): LineState {
  if (from >= to) return s;
  return { ...s, text: s.text.slice(0, from) + s.text.slice(to), cursor: from };
}

/**
 * Apply one chunk of raw terminal input. A line break in a paste (bracketed, or text
 * that goes on after the break in the same read) is kept as a newline; Enter at the
 * end of a read submits. Returns the new state and the actions, in order.
 */
export function applyInput(
  state: LineState,
  raw: string,
  keymap: EditorKeymap = DEFAULT_KEYMAP,
): { state: LineState; actions: LineAction[] } {
  let s = state;
  const actions: LineAction[] = [];
  const keys = splitKeys(raw);
  keys.forEach((key, i) => {
    const rest = keys.slice(i + 1);
    if (key === PASTE_START) return void (s = { ...s, pasting: true });
    if (key === PASTE_END) return void (s = { ...s, pasting: false });
    if (key === "\n" && i > 0 && keys[i - 1] === "\r") return; // \r\n is one line break
    if (s.pasting) {
      if (key === "\r" || key === "\n") s = insert(s, "\n");
      else if (key === "\t" || !/^[\x00-\x1f\x7f]/.test(key)) s = insert(s, key);
      return;
    }
    const action = keymap(key);
    switch (action) {
      case undefined:
        break;
      case "tui.input.newLine":
        s = insert(s, "\n");
        return;
      case "tui.input.submit":
        // Followed by more text in the same read (a paste without brackets): a newline.
        if (rest.some((k) => k !== "\r" && k !== "\n" && k !== PASTE_END)) return void (s = insert(s, "\n"));
        actions.push({ kind: "submit", text: s.text, cursor: s.cursor });
        s = lineState();
        return;
      case "tui.input.tab":
        actions.push({ kind: "tab", text: s.text, cursor: s.cursor });
        return;
      case "app.message.followUp":
        actions.push({ kind: "follow_up", text: s.text });
        s = lineState();
        return;
      case "app.interrupt":
        actions.push({ kind: "cancel" });
        return;
      case "app.clear":
        s = lineState();
        actions.push({ kind: "action", id: action });
        return;
      case "app.exit":
        // Bound to Ctrl+D, which deletes forward on a line with text (pi's deleteCharForward).
        if (s.text === "") return void actions.push({ kind: "exit" });
        break;
      default:
        actions.push({ kind: "action", id: action });
        return;
    }
    switch (key) {
      case "\x7f":
      case "\b":
        s = removeRange(s, Math.max(0, s.cursor - 1), s.cursor);
        return;
      case "\x17": // Ctrl+W
      case "\x1b\x7f": // Alt+Backspace
      case "\x1b\b":
        s = removeRange(s, wordStart(s.text, s.cursor), s.cursor);
        return;
      case "\x1bd": // Alt+D
        s = { ...removeRange(s, s.cursor, wordEnd(s.text, s.cursor)), cursor: s.cursor };
        return;
      case "\x04": // Ctrl+D: delete forward
        s = moveCursor(s, "delete");
        return;
      case "\x15": // Ctrl+U
        s = removeRange(s, 0, s.cursor);
        return;
      case "\x0b": // Ctrl+K
        s = { ...s, text: s.text.slice(0, s.cursor) };
        return;
      case "\x01": // Ctrl+A
        s = { ...s, cursor: 0 };
        return;
      case "\x05": // Ctrl+E
        s = { ...s, cursor: s.text.length };
        return;
      case "\x02": // Ctrl+B
        s = { ...s, cursor: Math.max(0, s.cursor - 1) };
        return;
      case "\x06": // Ctrl+F
        s = { ...s, cursor: Math.min(s.text.length, s.cursor + 1) };
        return;
    }
    const move = MOVES[key];
    if (move) {
      s = moveCursor(s, move);
      return;
    }
    // Other control characters and unknown sequences (↑, ↓, F-keys) change nothing.
    if (/^[\x00-\x1f\x7f]/.test(key)) return;
    s = insert(s, key);
  });
  return { state: s, actions };
}

function moveCursor(s: LineState, move: (typeof MOVES)[string]): LineState {
  switch (move) {
    case "left":
      return { ...s, cursor: Math.max(0, s.cursor - (isLowSurrogate(s.text, s.cursor - 1) ? 2 : 1)) };
    case "right":
      return { ...s, cursor: Math.min(s.text.length, s.cursor + (isLowSurrogate(s.text, s.cursor + 1) ? 2 : 1)) };
    case "home":
      return { ...s, cursor: 0 };
    case "end":
      return { ...s, cursor: s.text.length };
    case "wordLeft":
      return { ...s, cursor: wordStart(s.text, s.cursor) };
    case "wordRight":
      return { ...s, cursor: wordEnd(s.text, s.cursor) };
    case "delete":
      return {
        ...removeRange(s, s.cursor, s.cursor + (isLowSurrogate(s.text, s.cursor + 1) ? 2 : 1)),
        cursor: s.cursor,
      };
  }
}

function isLowSurrogate(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return c >= 0xdc00 && c <= 0xdfff;
}

/**
 * What the line shows in `room` columns: a window of the text that keeps the cursor in
 * view, newlines as `↵`, split at the cursor so the caller can draw it.
 */
export function visibleLine(s: LineState, room: number): { before: string; at: string; after: string } {
  const shown = s.text.replace(/\n/g, "↵");
  const width = Math.max(1, room);
  let start = 0;
  if (s.cursor >= width) start = s.cursor - width + 1;
  const end = start + width;
  const before = (start > 0 ? "…" : "") + shown.slice(start > 0 ? start + 1 : start, s.cursor);
  const at = shown[s.cursor] ?? " ";
  const after = shown.slice(s.cursor + 1, Math.max(s.cursor + 1, end));
  return { before, at, after };
}
