/**
 * `SYSTEM.md` (replaces the base system prompt) and `APPEND_SYSTEM.md` (appended to
 * it), looked up as pi does: the project's `.pi/` first, then the home folder. A
 * project file counts only in a trusted project; `--system-prompt` and
 * `--append-system-prompt` win over both.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The files found, with their text. */
export interface SystemFiles {
  system?: { path: string; text: string };
  append?: { path: string; text: string };
  /** Project files left out because the project is not trusted. */
  skippedProject: string[];
}

/** Find `SYSTEM.md` and `APPEND_SYSTEM.md` for a worker start. */
export function findSystemFiles(opts: { home: string; projectDir: string; trusted: boolean }): SystemFiles {
  const found: SystemFiles = { skippedProject: [] };
  const pick = (name: string) => {
    const project = join(opts.projectDir, name);
    if (existsSync(project)) {
      if (opts.trusted) return { path: project, text: readFileSync(project, "utf8") };
      found.skippedProject.push(project);
    }
    const global = join(opts.home, name);
    return existsSync(global) ? { path: global, text: readFileSync(global, "utf8") } : undefined;
  };
  const system = pick("SYSTEM.md");
  const append = pick("APPEND_SYSTEM.md");
  if (system) found.system = system;
  if (append) found.append = append;
  return found;
}
