/**
 * Provider keys from a supervisor to its worker over a private channel: an inherited pipe
 * (fd 3) the worker reads once at start and closes, so the keys are in neither its argv
 * nor its environment as the kernel shows them (`/proc/PID/cmdline`, `/proc/PID/environ`),
 * where any process of the same user, the model's own bash included, could read them.
 */
import { closeSync, readFileSync } from "node:fs";

/**
 * The prefix of the variables that carry keys a supervisor took out of a sandboxed worker's
 * models.json and auth.json (supervisor/keyless-files.ts); tools never get them.
 */
export const KEY_VAR_PREFIX = "PI_ORCH_KEY_";

/** The variable that names the fd the keys come on (`3`). */
export const SECRETS_FD_VAR = "PI_ORCH_SECRETS_FD";

/**
 * Read the keys a supervisor sent (a JSON object of variable name → value) into `env`
 * (this process's memory only: its environ as the kernel shows it keeps the start's
 * values), and close the fd. Nothing happens without PI_ORCH_SECRETS_FD. A channel that
 * cannot be read is an error the caller reports: the keys it carried are not there.
 */
export function takeSecrets(env: NodeJS.ProcessEnv = process.env): void {
  const named = env[SECRETS_FD_VAR];
  if (named === undefined) return;
  delete env[SECRETS_FD_VAR];
  const fd = Number(named);
  if (!Number.isInteger(fd) || fd < 3) throw new Error(`${SECRETS_FD_VAR}=${named} is not a file descriptor above 2`);
  let text: string;
  try {
    text = readFileSync(fd, "utf8");
  } finally {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
  }
  const values = text.trim() === "" ? {} : (JSON.parse(text) as unknown);
  if (typeof values !== "object" || values === null || Array.isArray(values))
    throw new Error(`the keys on fd ${fd} are not a JSON object`);
  for (const [name, value] of Object.entries(values)) if (typeof value === "string") env[name] = value;
}
