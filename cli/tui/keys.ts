/**
 * Terminal input as keys: a read of the terminal splits into keys (escape sequences
 * whole, a bracketed paste whole, every other character alone) before anything acts on
 * it, and each key is parsed into what it is, with Alt (a leading ESC) kept apart from
 * the plain key. Pure.
 */
import type { Key } from "ink";

const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";

/**
 * Split raw input into keys: escape sequences whole, every other character alone. A
 * bracketed paste (its markers included) stays one key when `pastes` is set.
 */
export function splitKeys(raw: string, pastes = false): string[] {
  const keys: string[] = [];
  let i = 0;
  while (i < raw.length) {
    if (pastes && raw.startsWith(PASTE_START, i)) {
      const end = raw.indexOf(PASTE_END, i + PASTE_START.length);
      const stop = end < 0 ? raw.length : end + PASTE_END.length;
      keys.push(raw.slice(i, stop));
      i = stop;
      continue;
    }
    if (raw[i] !== "\x1b") {
      const cp = raw.codePointAt(i)!;
      const len = cp > 0xffff ? 2 : 1;
      keys.push(raw.slice(i, i + len));
      i += len;
      continue;
    }
    // ESC ESC is two Escapes (pressed twice quickly, read at once), not Alt+Esc.
    const seq = /^\x1b(?:\[[0-9;?]*[ -/]*[@-~]|O[@-~]|[^\x1b])?/.exec(raw.slice(i))![0];
    keys.push(seq);
    i += seq.length;
  }
  return keys;
}

const NAMED: Record<string, string> = {
  "[A": "up",
  OA: "up",
  "[B": "down",
  OB: "down",
  "[C": "right",
  OC: "right",
  "[D": "left",
  OD: "left",
  "[H": "home",
  OH: "home",
  "[1~": "home",
  "[7~": "home",
  "[F": "end",
  OF: "end",
  "[4~": "end",
  "[8~": "end",
  "[5~": "pageup",
  "[6~": "pagedown",
  "[3~": "delete",
  "[Z": "tab",
};

/** One key as ink's `useInput` would describe it (the text, and flags), except that Alt stays apart: `meta` only for a leading ESC. */
export interface ParsedKey {
  input: string;
  key: Key;
}

/** Parse one key of `splitKeys`. */
export function parseKey(seq: string): ParsedKey {
  let name = "";
  let input = "";
  let ctrl = false;
  let meta = false;
  let shift = false;
  if (seq === "\r" || seq === "\n") name = "return";
  else if (seq === "\t") name = "tab";
  else if (seq === "\x7f" || seq === "\b") name = "backspace";
  else if (seq === "\x1b") name = "escape";
  else if (seq.startsWith("\x1b[") || seq.startsWith("\x1bO")) {
    // `ESC [ 1 ; M X`: a modified arrow or Home/End; M-1 is a bit set of Shift, Alt, Ctrl.
    const modified = /^\x1b\[1;(\d+)([A-DHF])$/.exec(seq);
    const body = modified ? `[${modified[2]}` : seq.slice(1);
    name = NAMED[body] ?? "";
    if (modified) {
      const bits = Number(modified[1]) - 1;
      shift = (bits & 1) !== 0;
      meta = (bits & 2) !== 0;
      ctrl = (bits & 4) !== 0;
    }
    if (body === "[Z") shift = true;
    if (name === "" && seq.startsWith(PASTE_START)) input = seq.slice(PASTE_START.length).replace(PASTE_END, "");
  } else if (seq.startsWith("\x1b")) {
    // Alt+key: ESC then the key.
    const inner = parseKey(seq.slice(1));
    return { input: inner.input, key: { ...inner.key, meta: true } };
  } else if (seq.length === 1 && seq.charCodeAt(0) < 0x20) {
    ctrl = true;
    input = String.fromCharCode(seq.charCodeAt(0) + 96);
  } else {
    input = seq;
    shift = seq.length === 1 && /[A-Z]/.test(seq);
  }
  return {
    input,
    key: {
      upArrow: name === "up",
      downArrow: name === "down",
      leftArrow: name === "left",
      rightArrow: name === "right",
      pageDown: name === "pagedown",
      pageUp: name === "pageup",
      home: name === "home",
      end: name === "end",
      return: name === "return",
      escape: name === "escape",
      ctrl,
      shift,
      tab: name === "tab",
      backspace: name === "backspace",
      delete: name === "delete",
      meta,
      super: false,
      hyper: false,
      capsLock: false,
      numLock: false,
    },
  };
}

/**
 * A key's name in a keymap: the character (`p`, `4`, `?`), or `up`, `down`, `left`,
 * `right`, `pageup`, `pagedown`, `home`, `end`, `return`, `escape`, `tab`, `backspace`,
 * `delete`; prefixed `C-` (Ctrl), `M-` (Alt), `S-` (Shift, for named keys).
 */
export function keyName({ input, key }: ParsedKey): string {
  const named = (
    [
      ["upArrow", "up"],
      ["downArrow", "down"],
      ["leftArrow", "left"],
      ["rightArrow", "right"],
      ["pageUp", "pageup"],
      ["pageDown", "pagedown"],
      ["home", "home"],
      ["end", "end"],
      ["return", "return"],
      ["escape", "escape"],
      ["tab", "tab"],
      ["backspace", "backspace"],
      ["delete", "delete"],
    ] as const
  ).find(([flag]) => key[flag])?.[1];
  const base = named ?? input;
  return `${key.ctrl ? "C-" : ""}${key.meta ? "M-" : ""}${key.shift && named ? "S-" : ""}${base}`;
}

/** Longest terminal reply kept while its end has not come; a longer one is dropped. */
const MAX_REPLY = 4096;

/**
 * Takes the terminal's answers to our queries (an OSC, DCS or APC string, a
 * device-attributes report) out of the input before it becomes keys: `ESC ] 7501;?`
 * read as keys would be Alt+] and then typed text. Only while `expecting` (a query is
 * out): a person's Alt+] otherwise stays a key. A reply may come over several reads (ink
 * hands its `ESC ]`, its body and its `ESC \` over one at a time). Pure but for `onReply`.
 */
export class TerminalReplies {
  /** A query is out: replies are looked for. */
  expecting = false;
  private partial: string | null = null;

  constructor(private readonly onReply: (reply: string) => void) {}

  /** `text` without the replies in it; each whole reply goes to `onReply`. */
  filter(text: string): string {
    let out = "";
    let i = 0;
    while (i < text.length) {
      if (this.partial !== null) {
        const bel = text.indexOf("\x07", i);
        const st = text.indexOf("\x1b\\", i);
        const end = bel < 0 ? st : st < 0 ? bel : Math.min(bel, st);
        if (end < 0) {
          this.partial += text.slice(i);
          if (this.partial.length > MAX_REPLY) this.partial = null;
          return out;
        }
        const stop = end + (end === st ? 2 : 1);
        const reply = this.partial + text.slice(i, stop);
        this.partial = null;
        i = stop;
        this.onReply(reply);
        continue;
      }
      if (!this.expecting) return out + text.slice(i);
      const two = text.slice(i, i + 2);
      if (two === "\x1b]" || two === "\x1bP" || two === "\x1b_") {
        this.partial = two;
        i += 2;
        continue;
      }
      const report = /^\x1b\[\?[\d;]*c/.exec(text.slice(i, i + 64));
      if (report) {
        i += report[0].length;
        this.onReply(report[0]);
        continue;
      }
      out += text[i];
      i++;
    }
    return out;
  }
}
