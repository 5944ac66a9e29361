/**
 * Where a resource (skill, prompt template, extension command) came from, in the
 * shape pi 0.73 reports as `sourceInfo` in `get_commands`.
 */
import { join, resolve } from "node:path";

/** pi's `sourceInfo`: the file, its scope (`user` home, `project`, or `temporary` for a CLI path) and base folder. */
export interface SourceInfo {
  path: string;
  source: "local";
  scope: "user" | "project" | "temporary";
  origin: "top-level";
  baseDir: string;
}

/** Where a resource was found: the home folder, the trusted project, or a path given on the command line or in settings. */
export type ResourceScope = "user" | "project" | "path";

/** The `sourceInfo` of a resource file found in `scope` under `baseDir`. */
export function sourceInfo(path: string, scope: ResourceScope, baseDir: string): SourceInfo {
  return { path, source: "local", scope: scope === "path" ? "temporary" : scope, origin: "top-level", baseDir };
}

/** A problem with one resource file that does not stop the worker; shown on stderr. */
export interface ResourceWarning {
  path: string;
  message: string;
}

/** `~`, `~/x` (the user's home) and relative paths (against `base`) made absolute, as pi resolves resource paths. */
export function resolveResourcePath(path: string, base: string, userHome: string): string {
  const trimmed = path.trim();
  if (trimmed === "~") return userHome;
  if (trimmed.startsWith("~/")) return join(userHome, trimmed.slice(2));
  return resolve(base, trimmed);
}
