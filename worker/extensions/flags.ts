/**
 * Flags that extensions register (`pi.registerFlag`): the `pi` CLI accepts
 * `--name` / `--name value` for them, and only for them. Pure: the CLI passes the
 * words commander did not know.
 */
import type { RegisteredFlag } from "./api.js";

/** Words split into flag values for registered flags, the remaining words, and unknown options. */
export interface SplitFlags {
  values: Map<string, boolean | string>;
  rest: string[];
  unknown: string[];
}

/** Take `--name`, `--no-name`, `--name=value` and `--name value` for registered flags out of `words`. */
export function splitExtensionFlags(words: string[], flags: readonly RegisteredFlag[]): SplitFlags {
  const byName = new Map(flags.map((f) => [f.name, f]));
  const values = new Map<string, boolean | string>();
  const rest: string[] = [];
  const unknown: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    const m = /^--(no-)?([a-z][a-z0-9-]*)(?:=(.*))?$/.exec(word);
    if (!m) {
      if (word.startsWith("-") && word !== "-") unknown.push(word);
      else rest.push(word);
      continue;
    }
    const flag = byName.get(m[2]);
    if (!flag) {
      unknown.push(word);
      continue;
    }
    if (flag.type === "string") {
      const value = m[3] ?? words[++i];
      if (value === undefined) unknown.push(word);
      else values.set(flag.name, value);
    } else {
      values.set(flag.name, m[1] ? false : m[3] === undefined ? true : m[3] !== "false");
    }
  }
  return { values, rest, unknown };
}
