/**
 * A task's `check`: a shell command run in the task's directory after the agent
 * settled; exit code 0 passes. It runs in its own process group so a timeout or
 * SIGINT ends it and everything it started (`npm test` and its children).
 */
import { execa } from "execa";
import { killGroupLeftovers } from "../../supervisor/teardown.js";
import type { CheckResult } from "./types.js";

/** Characters of output kept for the report (the end, where test runners print failures). */
const OUTPUT_TAIL = 4000;

/** Run `command` with `sh -c` in `cwd`; `signal` ends it (SIGTERM to the group, SIGKILL 2 s later). */
export async function runCheck(
  command: string,
  cwd: string,
  signal: AbortSignal,
  env: Record<string, string> = {},
): Promise<CheckResult> {
  const started = Date.now();
  const proc = execa("sh", ["-c", command], {
    cwd,
    env,
    extendEnv: true,
    detached: true,
    all: true,
    stdin: "ignore",
    reject: false,
    cleanup: false,
    cancelSignal: signal,
    killSignal: "SIGTERM",
    forceKillAfterDelay: 2000,
  });
  // execa signals the shell only; the group signal reaches what the shell started.
  const onAbort = () => {
    if (proc.pid !== undefined) {
      try {
        process.kill(-proc.pid, "SIGTERM");
      } catch {
        // already gone
      }
    }
  };
  signal.addEventListener("abort", onAbort, { once: true });
  const result = await proc;
  signal.removeEventListener("abort", onAbort);
  if (proc.pid !== undefined) killGroupLeftovers(proc.pid);
  const all = String(result.all ?? "");
  return {
    command,
    exitCode: result.exitCode ?? null,
    signal: result.signal ?? null,
    passed: result.exitCode === 0 && !signal.aborted,
    durationMs: Date.now() - started,
    output: all.length > OUTPUT_TAIL ? `…${all.slice(-OUTPUT_TAIL)}` : all,
  };
}
