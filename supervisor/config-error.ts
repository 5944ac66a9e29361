/**
 * Telling a configuration error from a crash: a worker that cannot be spawned, or
 * exits with the usage code 2 before it was ready, will fail the same way on every
 * restart, so the agent is `failed` at once with the worker's own words. Pure.
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

/** The reason to show for a configuration error, or null when the exit is a crash to restart. */
export function configurationError(exit: EarlyExit): string | null {
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

/** The last non-empty line of a text. */
function lastLine(text: string): string | null {
  return (
    text
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean)
      .at(-1) ?? null
  );
}

/** Append to a tail buffer, keeping at most `max` characters. */
export function appendTail(tail: string, chunk: string, max = 4096): string {
  const next = tail + chunk;
  return next.length > max ? next.slice(next.length - max) : next;
}
