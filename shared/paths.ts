/**
 * Where pi-orch keeps its files. Everything lives under one home folder so a test,
 * or a user with `--home`, can move it all at once.
 */
import { mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

/** `$PI_ORCH_HOME`, else `~/.pi-orch`. */
export function piOrchHome(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.PI_ORCH_HOME;
  return fromEnv && fromEnv.length > 0 ? resolve(fromEnv) : join(homedir(), ".pi-orch");
}

/** `$PI_ORCH_HOME/models.json`: custom providers and models, in pi's shape. */
export function modelsJsonPath(home = piOrchHome()): string {
  return join(home, "models.json");
}

/** `$PI_ORCH_HOME/sessions`: default root of session files. */
export function sessionsDir(home = piOrchHome()): string {
  return join(home, "sessions");
}

/**
 * Create the pi-orch home (and parents) private to the user (0700) if it is missing.
 * An existing folder is left as it is: `serve` checks and refuses an open one.
 */
export function ensureHome(home: string): void {
  mkdirSync(home, { recursive: true, mode: 0o700 });
}
