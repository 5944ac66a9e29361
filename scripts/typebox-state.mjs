// Which of typebox's modules hold state of their own at module level: the format registry,
// the system settings and locale, the compiler's counters and accumulators. A worker must
// have one copy of each (an extension's chunk takes them from the bundle, never a copy:
// scripts/worker-chunks.mjs), while a module of pure functions may be in both files.
import { readFileSync } from "node:fs";

/** A module of typebox's build (`node_modules/typebox/build/…`), by its path ending. */
export const TYPEBOX_MODULE = /\/node_modules\/typebox\/build\/.+\.mjs$/;

/** Mutations of a top-level binding `NAME` (a property or element set, a collection changed, a property defined). */
function mutated(source, name) {
  const n = name.replace(/\$/g, "\\$");
  return new RegExp(
    `\\b${n}(\\.\\w+|\\[[^\\]]*\\])+\\s*(=(?!=)|\\+\\+|--|[-+*|&]=)|\\b${n}(\\.\\w+)*\\.(push|pop|shift|unshift|splice|set|delete|clear|add)\\(|defineProperty\\(\\s*${n}\\b`,
  ).test(source);
}

/**
 * Whether a typebox module's source holds module-level state: a top-level `let` or `var`, a
 * top-level collection (`new Map()`…), or a top-level object or array literal that the module
 * changes. typebox's build writes every top-level statement at the line's start.
 */
export function hasModuleState(source) {
  if (/^(let|var)\s/m.test(source)) return true;
  if (/^const\s+[\w$]+\s*=\s*new\s+(Map|Set|WeakMap|WeakSet)\b/m.test(source)) return true;
  for (const m of source.matchAll(/^const\s+([\w$]+)\s*=\s*[[{]/gm)) if (mutated(source, m[1])) return true;
  return false;
}

const cache = new Map();
/** Whether the file at `path` is a typebox module with module-level state (read once per path). */
export function isStatefulTypeboxModule(path) {
  if (!TYPEBOX_MODULE.test(path)) return false;
  let stateful = cache.get(path);
  if (stateful === undefined) {
    stateful = hasModuleState(readFileSync(path, "utf8"));
    cache.set(path, stateful);
  }
  return stateful;
}
