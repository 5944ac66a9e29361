/**
 * Files for the editor's completions, as pi offers them: `@` searches the project's
 * files and folders by a fuzzy query (pi asks `fd`; here a bounded walk of the working
 * directory without `.git` and `node_modules`), Tab lists the entries of the folder a
 * typed path names. Folders end in `/`. `fuzzyPaths` is the pure ranking.
 */
import { readdirSync, type Dirent } from "node:fs";
import { homedir } from "node:os";
import { resolve } from "node:path";

/** At most this many paths are walked for `@`: a home folder as the cwd stays quick. */
const WALK_LIMIT = 20_000;
/** A walk is reused this long: typing `@src/m` walks once. */
const WALK_TTL_MS = 5_000;
const SKIP = new Set([".git", "node_modules"]);

let walked: { cwd: string; at: number; paths: string[] } | null = null;

/** The project's files and folders under `cwd`, relative, folders with a trailing `/`, breadth first, bounded. */
export function projectPaths(cwd: string, now = Date.now()): string[] {
  if (walked && walked.cwd === cwd && now - walked.at < WALK_TTL_MS) return walked.paths;
  const paths: string[] = [];
  const queue = [""];
  while (queue.length > 0 && paths.length < WALK_LIMIT) {
    const dir = queue.shift()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(resolve(cwd, dir), { withFileTypes: true });
    } catch {
      continue; // unreadable: left out, as fd leaves it out
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      if (SKIP.has(e.name)) continue;
      const rel = `${dir}${e.name}`;
      if (e.isDirectory()) {
        paths.push(`${rel}/`);
        queue.push(`${rel}/`);
      } else paths.push(rel);
      if (paths.length >= WALK_LIMIT) break;
    }
  }
  walked = { cwd, at: now, paths };
  return paths;
}

/**
 * The paths a fuzzy `query` matches (its characters in order, case ignored), best first:
 * a match inside the last path segment before one across folders, a contiguous one
 * before a scattered one, then the shorter path. An empty query keeps the walk's order. Pure.
 */
export function fuzzyPaths(paths: readonly string[], query: string, limit: number): string[] {
  if (query === "") return paths.slice(0, limit);
  const q = query.toLowerCase();
  const scored: { path: string; score: number }[] = [];
  for (const path of paths) {
    const p = path.toLowerCase();
    let at = 0;
    for (const ch of q) {
      at = p.indexOf(ch, at);
      if (at < 0) break;
      at++;
    }
    if (at < 0) continue;
    const name = p.replace(/\/$/, "").split("/").at(-1)!;
    const score = (name.includes(q) ? 0 : p.includes(q) ? 1000 : 2000) + (name.startsWith(q) ? 0 : 500) + p.length;
    scored.push({ path, score });
  }
  scored.sort((a, b) => a.score - b.score || a.path.localeCompare(b.path));
  return scored.slice(0, limit).map((s) => s.path);
}

/**
 * The entries of the folder `prefix` names, whose names start with what follows its
 * last `/` (`src/ma` → `src/main.ts`, `src/maps/`), as `prefix` wrote the folder (`~/`
 * kept). Hidden entries only when the name typed starts with `.`.
 */
export function pathEntries(cwd: string, prefix: string): string[] {
  const slash = prefix.lastIndexOf("/");
  const dir = prefix.slice(0, slash + 1);
  const base = prefix.slice(slash + 1);
  const where = dir.startsWith("~/") ? resolve(homedir(), dir.slice(2)) : resolve(cwd, dir || ".");
  let entries: Dirent[];
  try {
    entries = readdirSync(where, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => e.name.startsWith(base) && (base.startsWith(".") || !e.name.startsWith(".")))
    .map((e) => `${dir}${e.name}${e.isDirectory() ? "/" : ""}`)
    .sort();
}
