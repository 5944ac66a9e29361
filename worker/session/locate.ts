/**
 * Finding session files: the default folder for a working directory, `--session` as a
 * path or an id prefix, and the latest session for `--continue`.
 */
import { closeSync, existsSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { piOrchHome, sessionsDir } from "../../shared/paths.js";
import { SessionFileError } from "./parse.js";

/** A working directory as pi encodes it into a folder name: `/home/me/app` → `--home-me-app--`. */
export function encodeCwd(cwd: string): string {
  return `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
}

/** `$PI_ORCH_HOME/sessions/<encoded cwd>/`. Not created here: `SessionStore.create` makes it. */
export function defaultSessionDir(cwd: string, home: string = piOrchHome()): string {
  return join(sessionsDir(home), encodeCwd(resolve(cwd)));
}

/** The session id inside a file name `<time>_<id>.jsonl`, or undefined for other names. */
export function sessionIdFromFileName(fileName: string): string | undefined {
  const match = /^[^_]+_(.+)\.jsonl$/.exec(basename(fileName));
  return match?.[1];
}

/** Session files (`*.jsonl`) in `dir`, as absolute paths; empty when the folder does not exist. */
export function listSessionFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isFile() && d.name.endsWith(".jsonl"))
    .map((d) => resolve(dir, d.name))
    .sort();
}

/**
 * Resolve `--session ARG`: something that looks like a path (has a slash or ends in
 * `.jsonl`) must exist; anything else is a session id prefix that must match exactly
 * one file in `dir`. Errors list the candidates so the user can type a longer prefix.
 */
export function resolveSessionArg(arg: string, dir: string): string {
  if (arg.includes("/") || arg.includes("\\") || arg.endsWith(".jsonl")) {
    const path = resolve(arg);
    if (!existsSync(path)) throw new SessionFileError(path, "does not exist");
    return path;
  }
  const prefix = arg.toLowerCase();
  const files = listSessionFiles(dir);
  const matches = files.filter((file) => sessionIdFromFileName(file)?.toLowerCase().startsWith(prefix));
  if (matches.length === 1) return matches[0];
  if (matches.length === 0) {
    const known = files.map((f) => `  ${basename(f)}`).join("\n");
    throw new Error(
      files.length === 0
        ? `no session id starts with "${arg}": ${dir} has no sessions; pass a session file path instead`
        : `no session id starts with "${arg}" in ${dir}; the sessions there are:\n${known}`,
    );
  }
  throw new Error(
    `session id prefix "${arg}" is ambiguous in ${dir}; type more of the id. It matches:\n` +
      matches.map((f) => `  ${basename(f)}`).join("\n"),
  );
}

/**
 * The most recently written session in `dir` (for `--continue`): newest mtime, ties
 * broken by the later file name (names start with the creation time). Files whose
 * first line is not a session header are ignored. Undefined when there is none.
 */
export function latestSession(dir: string): string | undefined {
  const candidates = listSessionFiles(dir)
    .filter(hasSessionHeader)
    .map((path) => ({ path, mtime: statSync(path).mtimeMs }));
  candidates.sort((a, b) => b.mtime - a.mtime || (a.path < b.path ? 1 : a.path > b.path ? -1 : 0));
  return candidates[0]?.path;
}

function hasSessionHeader(path: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const buffer = Buffer.alloc(8192);
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    const firstLine = buffer.toString("utf8", 0, read).split("\n")[0];
    const header = JSON.parse(firstLine) as { type?: unknown; id?: unknown };
    return header.type === "session" && typeof header.id === "string";
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
