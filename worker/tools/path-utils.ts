/**
 * How tools turn the path a model wrote into a file system path: relative to the agent's
 * working directory, absolute paths as given, `~` expanded.
 */
import { existsSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, resolve } from "node:path";

// Models copy paths out of rich text, where spaces are often no-break or thin spaces.
const UNICODE_SPACES = /[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g;

/**
 * Normalise a path as a model writes it: a leading `@` (the mention syntax of chat UIs)
 * dropped, exotic spaces made plain, `~` and `~/...` expanded to the home folder.
 */
export function expandPath(path: string): string {
  const plain = (path.startsWith("@") ? path.slice(1) : path).replace(UNICODE_SPACES, " ");
  if (plain === "~") return homedir();
  if (plain.startsWith("~/")) return homedir() + plain.slice(1);
  return plain;
}

/** The absolute path of `path` for an agent working in `cwd` (which must be absolute). */
export function resolveToCwd(path: string, cwd: string): string {
  const expanded = expandPath(path);
  return isAbsolute(expanded) ? expanded : resolve(cwd, expanded);
}

/**
 * Like `resolveToCwd`, for a file that should already exist: when the path as written is
 * missing, try the spellings macOS gives file names (decomposed accents, a narrow
 * no-break space before AM/PM in screenshot names, a curly apostrophe). Returns the
 * plain resolution when none exists, so the caller's "not found" names what was asked.
 */
export function resolveExistingPath(path: string, cwd: string): string {
  const resolved = resolveToCwd(path, cwd);
  if (existsSync(resolved)) return resolved;
  const nfd = resolved.normalize("NFD");
  const variants = [
    resolved.replace(/ (AM|PM)\./gi, "\u202F$1."),
    nfd,
    resolved.replace(/'/g, "\u2019"),
    nfd.replace(/'/g, "\u2019"),
  ];
  return variants.find((v) => v !== resolved && existsSync(v)) ?? resolved;
}

/** True when `path` exists and is a directory (symbolic links followed). */
export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
