/**
 * Telling a configuration error from a crash: a worker that cannot be spawned, exits
 * with the usage code 2 before it was ready, or exits before it was ready the same way
 * twice (any code, the same stderr: pi 1.6.0's `--provider requires --model` is exit 1),
 * will fail the same way on every restart, so the agent is `failed` with the worker's
 * own words instead of a crash loop. Pure.
 */

/** The usage exit code of `pi` (and of most command-line programs). */
export const USAGE_EXIT_CODE = 2;

/** What is known of a worker that ended before it was ready. */
export interface EarlyExit {
  code: number | null;
  /** Why the process could not be started at all (`spawn pi ENOENT`), else null. */
  spawnError: string | null;
  /** The end of what it wrote on stderr. */
  stderrTail: string;
  /** The program that was started. */
  file: string;
}

/** What the actor keeps of the last exit before ready (null once a worker got ready). */
export interface StartupFailure {
  code: number;
  /** Its stderr tail, trimmed, with digit runs as `#` (pids, ports, times differ between tries). */
  said: string;
}

/**
 * What follows an exit before ready that the supervisor did not cause: `failed` for a
 * configuration error; one retry at once after a first such exit (only a second start
 * can tell a configuration from a crash, and waiting a backoff for it only delays the
 * verdict); else the restart policy, as for any crash. `remember` is what to keep for
 * the next exit before ready.
 */
export type StartupVerdict =
  | { kind: "config_error"; reason: string }
  | { kind: "retry_now"; remember: StartupFailure }
  | { kind: "policy"; remember: StartupFailure | null };

/** Judge an exit before ready (never one the supervisor asked for, such as a start timeout). */
export function judgeStartupExit(
  previous: StartupFailure | null,
  exit: EarlyExit & { signal: string | null },
): StartupVerdict {
  const config = configurationError(exit);
  if (config) return { kind: "config_error", reason: config };
  // Killed by a signal: something outside the worker (the OOM killer, a person), not its configuration.
  if (exit.code === null) return { kind: "policy", remember: null };
  const said = exit.stderrTail.trim().replace(/\d+/g, "#");
  if (previous && previous.code === exit.code && previous.said === said) {
    const last = lastLine(exit.stderrTail);
    return {
      kind: "config_error",
      reason: last
        ? `the worker exited with code ${exit.code} before it was ready, twice with the same error: ${last}`
        : `the worker exited with code ${exit.code} before it was ready, twice, saying nothing on stderr`,
    };
  }
  const remember = { code: exit.code, said };
  return previous ? { kind: "policy", remember } : { kind: "retry_now", remember };
}

/** The reason to show for a configuration error known from one exit, or null when only a second start can tell. */
function configurationError(exit: EarlyExit): string | null {
  if (exit.spawnError) {
    const missing = /ENOENT/.test(exit.spawnError);
    return (
      `could not start the worker ${JSON.stringify(exit.file)}: ${exit.spawnError}` +
      (missing
        ? `; is it installed and on PATH? (from a checkout of pi-orch: --worker-command "node dist/cli/pi.js --mode rpc")`
        : "")
    );
  }
  if (exit.code !== USAGE_EXIT_CODE) return null;
  const said = lastLine(exit.stderrTail);
  return said
    ? `the worker refused its configuration: ${said}`
    : "the worker exited with code 2 (a usage error) before it was ready";
}

/**
 * The line of a stderr tail that says what went wrong: the last one naming an error (pi
 * 1.6.0 follows `Error: --provider requires --model` with a warning and doc paths), else
 * the last non-empty one.
 */
function lastLine(text: string): string | null {
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  return [...lines].reverse().find((l) => /\berror\b/i.test(l)) ?? lines.at(-1) ?? null;
}

/** Append to a tail buffer, keeping at most `max` characters. */
export function appendTail(tail: string, chunk: string, max = 4096): string {
  const next = tail + chunk;
  return next.length > max ? next.slice(next.length - max) : next;
}
