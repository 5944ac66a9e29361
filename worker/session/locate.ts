/**
 * Finding session files: the default folder for a working directory, `--session` as a
 * path or an id prefix, and the latest session for `--continue`.
 */
import { closeSync, existsSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { basename, resolve } from "node:path";
import { SessionFileError } from "./parse.js";

// The default session folder is shared with the supervisor, which sandboxes a worker around it.
export { defaultSessionDir, encodeCwd } from "../../shared/paths.js";

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
 * first line is not a session header are ignored, and so are sessions that hold nothing
 * but their opening entries: a worker that stopped before its first prompt (a bad flag,
 * an RPC client that only asked `get_state`) leaves one, and continuing it would lose
 * the conversation before it. (pi writes no file until its first reply.) With `cwd`,
 * a session whose header names another working directory is skipped too: `/x/y` and
 * `/x-y` encode to the same folder, and continuing one in the other would run the
 * agent in the wrong project. Undefined when there is none.
 */
export function latestSession(dir: string, cwd?: string): string | undefined {
  const want = cwd === undefined ? undefined : resolve(cwd);
  const candidates = listSessionFiles(dir)
    .filter((path) => {
      const head = startOfFile(path);
      if (head.kind !== "conversation") return false;
      return want === undefined || head.cwd === undefined || resolve(head.cwd) === want;
    })
    .map((path) => ({ path, mtime: statSync(path).mtimeMs }));
  candidates.sort((a, b) => b.mtime - a.mtime || (a.path < b.path ? 1 : a.path > b.path ? -1 : 0));
  return candidates[0]?.path;
}

/** Entries every new session opens with; a file holding only these has no conversation. */
const OPENING_ENTRIES = new Set(["session", "model_change", "thinking_level_change"]);

/**
 * What the lines `text` begins with (a file's head) show: not a session, a session
 * with only its opening entries, or one with a conversation (any other entry, or more
 * than the head holds). Pure.
 */
export function classifySessionStart(
  text: string,
  wholeFile: boolean,
): "not-session" | "opening-only" | "conversation" {
  const lines = text.split("\n");
  try {
    const header = JSON.parse(lines[0]) as { type?: unknown; id?: unknown };
    if (header.type !== "session" || typeof header.id !== "string") return "not-session";
  } catch {
    return "not-session";
  }
  if (!wholeFile) lines.pop(); // possibly cut in the middle
  for (const line of lines.slice(1)) {
    if (line.trim() === "") continue;
    try {
      const entry = JSON.parse(line) as { type?: unknown };
      if (!OPENING_ENTRIES.has(String(entry.type))) return "conversation";
    } catch {
      return "conversation"; // damage is for the loader to report, not a reason to skip the file
    }
  }
  return wholeFile ? "opening-only" : "conversation";
}

/** The header's `cwd`, when the first line is a session header that has one. Pure. */
export function sessionHeaderCwd(text: string): string | undefined {
  try {
    const header = JSON.parse(text.split("\n", 1)[0]) as { type?: unknown; cwd?: unknown };
    return header.type === "session" && typeof header.cwd === "string" ? header.cwd : undefined;
  } catch {
    return undefined;
  }
}

/**
 * pi's rule for a session id given on the command line (`--session-id`): letters, digits,
 * `.`, `_`, `-`, starting and ending with a letter or digit, so it is safe in a file name. Pure.
 */
export function isValidSessionId(id: string): boolean {
  return /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/.test(id);
}

/**
 * The session file in `dir` whose header's id is exactly `id` (pi's `--session-id`
 * lookup), skipping one whose header names another working directory than `cwd` (a
 * shared `--session-dir`). Undefined when there is none.
 */
export function findSessionById(dir: string, id: string, cwd: string): string | undefined {
  const want = resolve(cwd);
  return listSessionFiles(dir).find((path) => {
    const head = startOfFile(path);
    return head.id === id && (head.cwd === undefined || resolve(head.cwd) === want);
  });
}

function sessionHeaderId(text: string): string | undefined {
  try {
    const header = JSON.parse(text.split("\n", 1)[0]) as { type?: unknown; id?: unknown };
    return header.type === "session" && typeof header.id === "string" ? header.id : undefined;
  } catch {
    return undefined;
  }
}

function startOfFile(path: string): { kind: ReturnType<typeof classifySessionStart>; cwd?: string; id?: string } {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const buffer = Buffer.alloc(65536);
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    const text = buffer.toString("utf8", 0, read);
    return {
      kind: classifySessionStart(text, read < buffer.length),
      cwd: sessionHeaderCwd(text),
      id: sessionHeaderId(text),
    };
  } catch {
    return { kind: "not-session" };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
