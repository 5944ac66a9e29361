/**
 * pi's resource filters (docs/packages.md "Select package resources"): plain globs
 * include, `!glob` excludes, `+path` force-includes one exact path, `-path` force-excludes
 * one. A glob matches a file's path relative to the package, its name, or its absolute
 * path; for a skill's `SKILL.md` also its folder's. Pure.
 */
import { basename, dirname, normalize, relative } from "node:path";
import { globRegExp } from "../tools/file-walk.js";

const compiled = new Map<string, RegExp>();

function glob(pattern: string): RegExp {
  let re = compiled.get(pattern);
  if (!re) {
    re = globRegExp(pattern.startsWith("./") ? pattern.slice(2) : pattern);
    compiled.set(pattern, re);
  }
  return re;
}

/** The strings a pattern is tried on: relative path, name, absolute path (and the skill folder's). */
function candidates(file: string, baseDir: string): string[] {
  const names = [relative(baseDir, file), basename(file), file];
  if (basename(file) === "SKILL.md") {
    const folder = dirname(file);
    names.push(relative(baseDir, folder), basename(folder), folder);
  }
  return names;
}

/** Whether any glob matches the file. */
export function matchesAnyGlob(file: string, patterns: readonly string[], baseDir: string): boolean {
  const names = candidates(file, baseDir);
  return patterns.some((p) => names.some((n) => glob(normalize(p)).test(n)));
}

/** Whether any exact path (relative to `baseDir` or absolute) names the file (or a skill's folder). */
export function matchesAnyExact(file: string, patterns: readonly string[], baseDir: string): boolean {
  const rel = relative(baseDir, file);
  const skillFolder = basename(file) === "SKILL.md" ? dirname(file) : undefined;
  return patterns.some((p) => {
    const exact = normalize(p.startsWith("./") ? p.slice(2) : p);
    if (exact === rel || exact === file) return true;
    return skillFolder !== undefined && (exact === relative(baseDir, skillFolder) || exact === skillFolder);
  });
}

/** Whether an entry is one of the override forms `!x`, `+x`, `-x`. */
export function isOverride(entry: string): boolean {
  return /^[!+-]/.test(entry);
}

/** The files of `all` the patterns leave enabled, in pi's four steps (include, exclude, `+`, `-`). */
export function applyPatterns(all: readonly string[], patterns: readonly string[], baseDir: string): Set<string> {
  const includes = patterns.filter((p) => !isOverride(p));
  const excludes = patterns.filter((p) => p.startsWith("!")).map((p) => p.slice(1));
  const forceIn = patterns.filter((p) => p.startsWith("+")).map((p) => p.slice(1));
  const forceOut = patterns.filter((p) => p.startsWith("-")).map((p) => p.slice(1));
  let result = includes.length === 0 ? [...all] : all.filter((f) => matchesAnyGlob(f, includes, baseDir));
  if (excludes.length > 0) result = result.filter((f) => !matchesAnyGlob(f, excludes, baseDir));
  for (const f of all) if (!result.includes(f) && matchesAnyExact(f, forceIn, baseDir)) result.push(f);
  if (forceOut.length > 0) result = result.filter((f) => !matchesAnyExact(f, forceOut, baseDir));
  return new Set(result);
}

/**
 * A project entry with `autoload: false` is a delta over the user's entry for the same
 * package: each pattern, in order, turns the files it names on (plain, `+`) or off (`!`, `-`).
 */
export function applyDeltaPatterns(
  all: readonly string[],
  patterns: readonly string[],
  baseDir: string,
): Map<string, boolean> {
  const result = new Map<string, boolean>();
  for (const pattern of patterns) {
    const target = isOverride(pattern) ? pattern.slice(1) : pattern;
    const enabled = !pattern.startsWith("-") && !pattern.startsWith("!");
    const exact = pattern.startsWith("+") || pattern.startsWith("-");
    for (const f of all) {
      if (exact ? matchesAnyExact(f, [target], baseDir) : matchesAnyGlob(f, [target], baseDir)) result.set(f, enabled);
    }
  }
  return result;
}
