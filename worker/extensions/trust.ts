/**
 * Whether this run trusts the project: its `.pi/` extensions, settings, skills, prompt
 * templates and SYSTEM.md load only then. Decisions are kept as pi 1.6.0 keeps them, in
 * `<agent dir>/trust.json` as `{"/abs/folder": true|false}`, and a folder's decision is
 * the nearest one recorded for it or a folder above it; so a pi user's decisions hold
 * here, and pi reads ours. The file of older versions of ours,
 * `{"trusted": {"/abs/project/root": true}}`, is read too, and rewritten in pi's shape
 * on the next decision.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { writeFileAtomic } from "../../shared/atomic-write.js";

/** Folder → decision; `null` is pi's "no decision here" (kept as it is). */
type TrustFile = Record<string, boolean | null>;

/** What a project's `.pi/` may hold that needs trust (pi 1.6.0's list). */
const TRUST_REQUIRING = [
  "settings.json",
  "mcp.json",
  "extensions",
  "skills",
  "prompts",
  "themes",
  "SYSTEM.md",
  "APPEND_SYSTEM.md",
];

/** `<agent dir>/trust.json`. */
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

/**
 * The decision recorded for `cwd`: the one for the folder itself or the nearest folder
 * above it, as pi looks it up; undefined when there is none (or the file cannot be read).
 */
export function recordedTrust(home: string, cwd: string): boolean | undefined {
  let file: TrustFile;
  try {
    file = readTrustFile(home);
  } catch {
    return undefined;
  }
  for (let dir = canonical(cwd); ; dir = dirname(dir)) {
    const decision = file[dir];
    if (decision === true || decision === false) return decision;
    if (dirname(dir) === dir) return undefined;
  }
}

/** Record a decision for the project of `cwd` (its root); the file is replaced atomically (temp file + rename), in pi's shape. */
export function recordTrust(home: string, cwd: string, value: boolean): void {
  const file = readTrustFile(home);
  file[projectRoot(cwd)] = value;
  const sorted = Object.fromEntries(
    Object.keys(file)
      .sort()
      .map((k) => [k, file[k]]),
  );
  writeFileAtomic(trustFilePath(home), `${JSON.stringify(sorted, null, 2)}\n`);
}

/** Whether the project's `.pi/` holds anything trust gates; without it pi counts the project as trusted. */
export function needsTrust(cwd: string): boolean {
  const dir = join(projectRoot(cwd), ".pi");
  return TRUST_REQUIRING.some((entry) => existsSync(join(dir, entry)));
}

/** The trust flags of a worker start. */
export interface TrustFlags {
  /** `--trust`: trust the project and record it. */
  trust?: boolean;
  /** `--approve` (true) / `--no-approve` (false): trust it or not for this run only, whatever is recorded. */
  approve?: boolean;
}

/** pi 1.6's `defaultProjectTrust` (agent-directory settings only): what applies when nothing else decided. */
export type DefaultProjectTrust = "ask" | "always" | "never";

/** A `project_trust` handler's yes or no (undecided answers never get here). */
export interface ExtensionTrustDecision {
  trusted: boolean;
  /** Record it in trust.json (pi's `remember: true`); otherwise it holds for this process only. */
  remember: boolean;
}

/** What a start's trust decision may consult besides the flags and trust.json. */
export interface TrustSources {
  /** `defaultProjectTrust` from the agent directory's settings.json (never the project's). */
  defaultProjectTrust?: DefaultProjectTrust;
  /**
   * The `project_trust` event, run on the user's and the command line's extensions (the
   * project's are not loaded before trust); called only when the decision is open.
   */
  askExtensions?: () => Promise<ExtensionTrustDecision | undefined>;
}

/**
 * The trust decision of a worker start, in pi 1.6.0's order: `--approve` / `--no-approve`
 * for this run (recorded nowhere); ours' `--trust`, which trusts and records (a failure to
 * record is reported and the run still trusts); a project with nothing that needs trust is
 * trusted unless a decision says otherwise; then the first yes or no of a `project_trust`
 * handler (recorded when it says `remember`); the recorded decision; else
 * `defaultProjectTrust`: "always" trusts, "ask" and "never" do not (no terminal to ask on;
 * pi's answer in print, json and rpc modes).
 */
export async function resolveTrust(
  home: string,
  cwd: string,
  flags: TrustFlags,
  warn: (message: string) => void,
  sources: TrustSources = {},
): Promise<boolean> {
  if (flags.approve !== undefined) return flags.approve;
  if (flags.trust) {
    record(home, cwd, true, warn);
    return true;
  }
  if (!needsTrust(cwd)) return recordedTrust(home, cwd) ?? true;
  const asked = await sources.askExtensions?.();
  if (asked !== undefined) {
    if (asked.remember) record(home, cwd, asked.trusted, warn);
    return asked.trusted;
  }
  return recordedTrust(home, cwd) ?? sources.defaultProjectTrust === "always";
}

function record(home: string, cwd: string, value: boolean, warn: (message: string) => void): void {
  try {
    recordTrust(home, cwd, value);
  } catch (err) {
    warn(`could not record the trust decision in ${trustFilePath(home)}: ${(err as Error).message}`);
  }
}

function readTrustFile(home: string): TrustFile {
  const path = trustFilePath(home);
  if (!existsSync(path)) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8").replace(/^\uFEFF/, ""));
  } catch (err) {
    throw new Error(`${path} is not valid JSON (${(err as Error).message}); fix it or delete it`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error(`${path} must look like {"/abs/project/path": true}; fix it or delete it`);
  }
  const file: TrustFile = {};
  for (const [key, value] of Object.entries(parsed)) {
    // Older versions of ours nested the decisions under "trusted".
    if (key === "trusted" && typeof value === "object" && value !== null && !Array.isArray(value)) {
      for (const [folder, decision] of Object.entries(value))
        if (typeof decision === "boolean") file[folder] = decision;
    } else if (value === true || value === false || value === null) file[key] = value;
  }
  return file;
}

/**
 * `path` with its links resolved, by the kernel (realpath(3)) in one call: node's own
 * realpathSync lstat()s each component, and a start asks for the project's root four times
 * (~0.5 ms of its CPU).
 */
function canonical(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return resolve(path);
  }
}
