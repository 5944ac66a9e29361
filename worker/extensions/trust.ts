/**
 * Which projects may run their own extensions (`.pi/extensions/`): decisions are
 * kept in `$PI_ORCH_HOME/trust.json` as `{"trusted": {"/abs/project/root": true|false}}`,
 * keyed by the project root, so every folder of a repository shares one decision.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { writeFileAtomic } from "../../shared/atomic-write.js";

interface TrustFile {
  trusted: Record<string, boolean>;
}

/** `$PI_ORCH_HOME/trust.json`. */
export function trustFilePath(home: string): string {
  return join(home, "trust.json");
}

/** The project a folder belongs to: the nearest folder with a `.git` (a repository or a worktree), else the folder itself. */
export function projectRoot(cwd: string): string {
  const start = canonical(cwd);
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, ".git"))) return dir;
    if (dirname(dir) === dir) return start;
  }
}

/** True when the project of `cwd` was recorded as trusted. A missing or unreadable file trusts nothing. */
export function isTrusted(home: string, cwd: string): boolean {
  try {
    return readTrustFile(home).trusted[projectRoot(cwd)] === true;
  } catch {
    return false;
  }
}

/** Record a decision for the project of `cwd`; the file is replaced atomically (temp file + rename). */
export function recordTrust(home: string, cwd: string, value: boolean): void {
  const path = trustFilePath(home);
  const file = readTrustFile(home);
  file.trusted[projectRoot(cwd)] = value;
  writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`);
}

/**
 * The trust decision of a worker start: `--trust` trusts the project and records
 * it (a failure to record is reported and the run still trusts); otherwise the
 * recorded decision.
 */
export function resolveTrust(
  home: string,
  cwd: string,
  trustFlag: boolean | undefined,
  warn: (message: string) => void,
): boolean {
  if (!trustFlag) return isTrusted(home, cwd);
  try {
    recordTrust(home, cwd, true);
  } catch (err) {
    warn(`could not record the trust decision in ${trustFilePath(home)}: ${(err as Error).message}`);
  }
  return true;
}

function readTrustFile(home: string): TrustFile {
  const path = trustFilePath(home);
  if (!existsSync(path)) return { trusted: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new Error(`${path} is not valid JSON (${(err as Error).message}); fix it or delete it`);
  }
  const trusted = (parsed as Partial<TrustFile> | null)?.trusted;
  if (typeof trusted !== "object" || trusted === null || Array.isArray(trusted)) {
    throw new Error(`${path} must look like {"trusted": {"/abs/project/path": true}}; fix it or delete it`);
  }
  return { trusted: { ...trusted } };
}

function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}
