/**
 * What the list above `pi`'s editor offers for the line being typed, as pi's
 * autocomplete does: `/` and a prefix lists the commands; a word starting with `@`
 * lists the project's files by a fuzzy query; after Tab, a path lists the entries of its
 * folder. Each suggestion carries the line it makes; Tab takes it (a path: the one
 * match, or the longest common start of several). Pure: the files come from `sources`.
 */
import { lineState, type LineState } from "./line-editor.js";
import type { SlashCommand } from "./slash-commands.js";

/** One row of the list. */
export interface Suggestion {
  /** What the row shows first (`/model`, `src/main.ts`). */
  label: string;
  /** What follows it, dimmed (a command's description). */
  detail: string;
  /** The editor's line once it is taken. */
  line: LineState;
  /** A file row: Enter takes it; a command row leaves Enter to run the command. */
  takeOnEnter: boolean;
}

/** Where the suggestions come from. */
export interface SuggestionSources {
  /** The commands a `/prefix` line completes to. */
  commands(text: string): SlashCommand[];
  /** The project's paths a fuzzy `@` query matches, best first. */
  files(query: string): string[];
  /** The entries of the folder a typed path names. */
  entries(prefix: string): string[];
}

/** Rows the list computes (it shows fewer). */
const MAX = 50;

/** The suggestions for `line`; `tabbed`: Tab was pressed on this word, so a plain path lists its folder too. */
export function suggestions(line: LineState, sources: SuggestionSources, tabbed: boolean): Suggestion[] {
  if (/^\/\S*$/.test(line.text))
    return sources.commands(line.text).map((c) => ({
      label: `/${c.name}`,
      detail: `${c.argumentHint ? `${c.argumentHint} — ` : ""}${c.unavailable ? `(${c.unavailable})` : c.description}`,
      line: lineState(`/${c.name} `),
      takeOnEnter: false,
    }));
  const before = line.text.slice(0, line.cursor);
  const after = line.text.slice(line.cursor);
  const start = before.search(/\S*$/);
  const word = before.slice(start);
  const put = (value: string, space: boolean): LineState => {
    const head = before.slice(0, start) + value + (space ? " " : "");
    return { text: head + after, cursor: head.length, pasting: false };
  };
  if (word.startsWith("@"))
    return sources
      .files(word.slice(1))
      .slice(0, MAX)
      .map((path) => ({
        label: path,
        detail: "",
        line: put(`@${quoted(path)}`, !path.endsWith("/")),
        takeOnEnter: true,
      }));
  if (!tabbed || word === "") return [];
  return sources
    .entries(word)
    .slice(0, MAX)
    .map((path) => ({ label: path, detail: "", line: put(quoted(path), false), takeOnEnter: true }));
}

/** What Tab makes of the line with these suggestions: the first command or `@` file, the one path, or the paths' longest common start. */
export function tabCompletion(line: LineState, list: readonly Suggestion[]): LineState | undefined {
  const first = list[0];
  if (!first) return undefined;
  const pathList = list.every((s) => s.takeOnEnter) && !/^@/.test(wordBefore(line));
  if (!pathList || list.length === 1) return first.line;
  const common = list.map((s) => s.line.text.slice(0, s.line.cursor)).reduce(commonStart);
  const before = line.text.slice(0, line.cursor);
  if (common.length <= before.length) return line;
  return { text: common + line.text.slice(line.cursor), cursor: common.length, pasting: false };
}

function wordBefore(line: LineState): string {
  const before = line.text.slice(0, line.cursor);
  return before.slice(before.search(/\S*$/));
}

function commonStart(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return a.slice(0, i);
}

/** A path with a space in it in quotes, as pi writes it. */
function quoted(path: string): string {
  return /\s/.test(path) ? `"${path}"` : path;
}
