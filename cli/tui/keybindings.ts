/**
 * pi's named key actions for `pi` on a terminal, as pi 1.6.0 reads them from
 * `<agent dir>/keybindings.json`: each action we perform, its default keys in pi's
 * syntax (`ctrl+g`, `alt+enter`), a user's file replacing an action's keys (an empty
 * list unbinds it), pi's old names (`expandTools`) read as the new ids. A key is matched
 * by the name `keys.ts` gives it (`C-g`, `M-return`). Pure but for `loadKeybindings`.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { KeybindingValue } from "../../shared/schema/keybindings.js";
import { checker } from "../../shared/validate.js";
import { keyName, parseKey } from "./keys.js";

/** The actions this terminal performs, pi's ids, with pi's default keys and what they do (as `/hotkeys` lists them). */
export const ACTIONS = {
  "tui.input.submit": { keys: ["enter"], what: "send the prompt; while the agent runs: steer it" },
  "tui.input.newLine": { keys: ["shift+enter", "ctrl+j"], what: "a new line in the editor" },
  "tui.input.tab": { keys: ["tab"], what: "complete a /command or a path; with text while the agent runs: follow-up" },
  "app.message.followUp": { keys: ["alt+enter"], what: "queue a follow-up (waits until the agent is done)" },
  "app.message.dequeue": { keys: ["alt+up"], what: "queued messages back into the editor" },
  "app.interrupt": { keys: ["escape"], what: "abort the running turn (twice on an idle agent: /tree)" },
  "app.clear": { keys: ["ctrl+c"], what: "clear the editor (twice: quit)" },
  "app.exit": { keys: ["ctrl+d"], what: "quit on an empty editor" },
  "app.suspend": { keys: ["ctrl+z"], what: "suspend to the shell (fg resumes)" },
  "app.editor.external": { keys: ["ctrl+g"], what: "edit the prompt in $VISUAL / $EDITOR" },
  "app.model.select": { keys: ["ctrl+l"], what: "pick a model" },
  "app.model.cycleForward": { keys: ["ctrl+p"], what: "next model" },
  "app.thinking.cycle": { keys: ["shift+tab"], what: "cycle the thinking level" },
  "app.thinking.toggle": { keys: ["ctrl+t"], what: "hide or show thinking blocks" },
  "app.tools.expand": { keys: ["ctrl+o"], what: "expand or fold tool output" },
  "app.message.copy": { keys: ["ctrl+x"], what: "copy the last agent message" },
  "app.session.new": { keys: [], what: "/new" },
  "app.session.tree": { keys: [], what: "/tree" },
  "app.session.fork": { keys: [], what: "/fork" },
  "app.session.resume": { keys: [], what: "/resume" },
} as const satisfies Record<string, { keys: readonly string[]; what: string }>;

/** One action id. */
export type ActionId = keyof typeof ACTIONS;

/** pi's names before 1.x, read as the ids they became (pi migrates them the same way). */
const LEGACY: Readonly<Record<string, ActionId>> = {
  submit: "tui.input.submit",
  newLine: "tui.input.newLine",
  tab: "tui.input.tab",
  followUp: "app.message.followUp",
  dequeue: "app.message.dequeue",
  interrupt: "app.interrupt",
  clear: "app.clear",
  exit: "app.exit",
  suspend: "app.suspend",
  externalEditor: "app.editor.external",
  selectModel: "app.model.select",
  cycleModelForward: "app.model.cycleForward",
  cycleThinkingLevel: "app.thinking.cycle",
  toggleThinking: "app.thinking.toggle",
  expandTools: "app.tools.expand",
  newSession: "app.session.new",
  tree: "app.session.tree",
  fork: "app.session.fork",
  resume: "app.session.resume",
};

const BASE_NAMES: Readonly<Record<string, string>> = {
  esc: "escape",
  escape: "escape",
  enter: "return",
  return: "return",
  tab: "tab",
  space: " ",
  backspace: "backspace",
  delete: "delete",
  home: "home",
  end: "end",
  pageup: "pageup",
  pagedown: "pagedown",
  up: "up",
  down: "down",
  left: "left",
  right: "right",
};

/**
 * A key in pi's syntax as `keyName` names what the terminal sends: `ctrl+g` → `C-g`,
 * `alt+enter` → `M-return`, `shift+tab` → `S-tab`, `shift+a` → `A`. A key a terminal
 * cannot tell apart without the kitty protocol (`ctrl+shift+p`, `super+k`) gets a
 * name no key has.
 */
export function specName(spec: string): string {
  const parts = spec.toLowerCase().split("+");
  // `ctrl++`: the key is `+` itself.
  const base = parts.at(-1) === "" ? "+" : parts.at(-1)!;
  const mods = new Set(parts.slice(0, parts.at(-1) === "" ? -2 : -1));
  const named = BASE_NAMES[base];
  const shiftLetter = mods.has("shift") && /^[a-z]$/.test(base) && !mods.has("ctrl");
  const key = named ?? (shiftLetter ? base.toUpperCase() : base);
  const shift = mods.has("shift") && !shiftLetter ? (named && named !== " " ? "S-" : "shift+") : "";
  return `${mods.has("super") ? "super+" : ""}${mods.has("ctrl") ? "C-" : ""}${mods.has("alt") ? "M-" : ""}${shift}${key}`;
}

/** Sequences keys.ts reads otherwise: Ctrl+J (`\n`) and the kitty / xterm forms of Shift+Enter and Alt+Enter. */
const SEQUENCE_NAMES: Readonly<Record<string, string>> = {
  "\n": "C-j",
  "\x1b[13;2u": "S-return",
  "\x1b[27;2;13~": "S-return",
  "\x1b[13;3u": "M-return",
  "\x1b[27;3;13~": "M-return",
};

/** The name of one key of `splitKeys` (a raw sequence). */
export function sequenceName(seq: string): string {
  return SEQUENCE_NAMES[seq] ?? keyName(parseKey(seq));
}

/** The actions' keys after a user's file: which action a key name performs, and the keys of each (pi's syntax). */
export class Keybindings {
  private readonly byName = new Map<string, ActionId>();

  constructor(private readonly keys: Readonly<Record<ActionId, readonly string[]>>) {
    // An action the user bound wins a key it shares with a default (pi checks in its own order).
    const ids = Object.keys(keys) as ActionId[];
    for (const id of ids)
      for (const spec of keys[id]) if (!this.byName.has(specName(spec))) this.byName.set(specName(spec), id);
  }

  /** The action a key (its `keyName` / `sequenceName`) performs, if any. */
  action(name: string): ActionId | undefined {
    return this.byName.get(name);
  }

  /** The keys of an action, in pi's syntax, as configured. */
  keysOf(id: ActionId): readonly string[] {
    return this.keys[id];
  }
}

/** pi's defaults. */
export const DEFAULT_KEYBINDINGS = bindings({});

const checkValue = checker(KeybindingValue);

/** The bindings from a parsed `keybindings.json` object; what was not used, and why. Pure. */
export function bindingsFrom(raw: Record<string, unknown>): { bindings: Keybindings; ignored: string[] } {
  const user: Partial<Record<ActionId, readonly string[]>> = {};
  const ignored: string[] = [];
  for (const [key, value] of Object.entries(raw)) {
    if (key === "$schema") continue;
    const id = (Object.hasOwn(ACTIONS, key) ? key : LEGACY[key]) as ActionId | undefined;
    if (!id) {
      ignored.push(`${key} (not an action this terminal has)`);
      continue;
    }
    // pi: a new id beside its old name wins.
    if (id !== key && Object.hasOwn(raw, id)) continue;
    const checked = checkValue(value);
    if (!checked.ok) {
      ignored.push(`${key} (${checked.errors.join("; ")})`);
      continue;
    }
    user[id] = typeof checked.value === "string" ? [checked.value] : checked.value;
  }
  return { bindings: bindings(user), ignored };
}

function bindings(user: Partial<Record<ActionId, readonly string[]>>): Keybindings {
  const configured = Object.keys(user) as ActionId[];
  const rest = (Object.keys(ACTIONS) as ActionId[]).filter((id) => !configured.includes(id));
  const keys = {} as Record<ActionId, readonly string[]>;
  for (const id of [...configured, ...rest]) keys[id] = user[id] ?? ACTIONS[id].keys;
  return new Keybindings(keys);
}

/**
 * `<agentDir>/keybindings.json` read as pi reads it; a file that is not a JSON object
 * is not used (pi ignores it too), and the notices say what was left out and why.
 */
export function loadKeybindings(agentDir: string): { bindings: Keybindings; notices: string[] } {
  const path = join(agentDir, "keybindings.json");
  if (!existsSync(path)) return { bindings: DEFAULT_KEYBINDINGS, notices: [] };
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8").replace(/^\uFEFF/, ""));
  } catch (err) {
    return {
      bindings: DEFAULT_KEYBINDINGS,
      notices: [`${path} is not JSON (${(err as Error).message}): pi's default keys apply`],
    };
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    return { bindings: DEFAULT_KEYBINDINGS, notices: [`${path} is not a JSON object: pi's default keys apply`] };
  const { bindings: b, ignored } = bindingsFrom(raw as Record<string, unknown>);
  return { bindings: b, notices: ignored.length > 0 ? [`${path}: left out ${ignored.join(", ")}`] : [] };
}
