/**
 * Where pi-orch keeps its files. The supervisor's (agents.json, the socket, logs,
 * worktrees) live under one home folder so a test, or a user with `--home`, can move it
 * all at once; a worker's (models.json, settings.json, auth.json, sessions/, trust.json)
 * live in its agent directory, which is pi's unless a fleet points it elsewhere.
 */
import { mkdirSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

/** `$PI_ORCH_HOME`, else `~/.pi-orch`. */
export function piOrchHome(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.PI_ORCH_HOME;
  return fromEnv && fromEnv.length > 0 ? resolve(fromEnv) : join(homedir(), ".pi-orch");
}

/**
 * A worker's agent directory: `$PI_ORCH_HOME` when set (how a supervisor, or a user,
 * points a fleet at its own folder), else pi's `$PI_CODING_AGENT_DIR`, else pi's default
 * `~/.pi/agent`, so a standalone `pi` finds what a pi 1.6 user already keeps there.
 */
export function agentDir(env: NodeJS.ProcessEnv = process.env): string {
  for (const name of ["PI_ORCH_HOME", "PI_CODING_AGENT_DIR"]) {
    const dir = env[name];
    if (dir && dir.length > 0) return resolve(expandTilde(dir));
  }
  return join(homedir(), ".pi", "agent");
}

/** pi expands a leading `~` in `PI_CODING_AGENT_DIR` (a value quoted in a shell keeps it). */
function expandTilde(path: string): string {
  if (path === "~") return homedir();
  return path.startsWith("~/") ? join(homedir(), path.slice(2)) : path;
}

/** `<agent dir>/models.json`: custom providers and models, in pi's shape. */
export function modelsJsonPath(home = agentDir()): string {
  return join(home, "models.json");
}

/** `<agent dir>/sessions`: default root of session files. */
export function sessionsDir(home = agentDir()): string {
  return join(home, "sessions");
}

/** A working directory as pi encodes it into a folder name: `/home/me/app` → `--home-me-app--`. */
export function encodeCwd(cwd: string): string {
  return `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
}

/** `<agent dir>/sessions/<encoded cwd>/`. Not created here: `SessionStore.create` makes it. */
export function defaultSessionDir(cwd: string, home: string = agentDir()): string {
  return join(sessionsDir(home), encodeCwd(resolve(cwd)));
}

/**
 * Create the pi-orch home (and parents) private to the user (0700) if it is missing.
 * An existing folder is left as it is: `serve` checks and refuses an open one.
 */
export function ensureHome(home: string): void {
  mkdirSync(home, { recursive: true, mode: 0o700 });
}

/** `agents.json.corrupt-<ms>`: a damaged registry a supervisor set aside (it kept the complete records). */
export const DAMAGED_REGISTRY_PREFIX = "agents.json.corrupt-";

/** The damaged registries set aside in `home`, newest first, as absolute paths. */
export function damagedRegistries(home: string): string[] {
  let names: string[];
  try {
    names = readdirSync(home);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.startsWith(DAMAGED_REGISTRY_PREFIX))
    .sort((a, b) => Number(b.slice(DAMAGED_REGISTRY_PREFIX.length)) - Number(a.slice(DAMAGED_REGISTRY_PREFIX.length)))
    .map((n) => join(home, n));
}

/** `<home>/logs`: the supervisor's log and every agent's event and stderr logs. */
export function logsDir(home: string): string {
  return join(home, "logs");
}

/** `<home>/logs/supervisor.log`: where a supervisor started in the background writes. */
export function supervisorLogPath(home: string): string {
  return join(logsDir(home), "supervisor.log");
}

/** Paths of an agent's log files in `logsDir`: its events (`NAME.events.jsonl`) and its worker's stderr. */
export function agentLogPaths(logsDir: string, name: string): { events: string; stderr: string } {
  return { events: join(logsDir, `${name}.events.jsonl`), stderr: join(logsDir, `${name}.stderr.log`) };
}

/** `<home>/agents.json`: the agents a supervisor keeps for the next one. */
export function registryPath(home: string): string {
  return join(home, "agents.json");
}
