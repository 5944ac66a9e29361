/**
 * Option parsers shared by the commands. They throw commander's own
 * `InvalidArgumentError`, so a bad value is a usage error (exit 2) with the option named.
 */
import { InvalidArgumentError, Option } from "commander";

/** A whole number ≥ 1 (`--max-tokens 5000`). */
export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new InvalidArgumentError(`expected a whole number of at least 1, got "${value}"`);
  return n;
}

/** A whole number ≥ 0 (`--since 0`). */
export function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new InvalidArgumentError(`expected a whole number of at least 0, got "${value}"`);
  return n;
}

/** Seconds, fractions allowed (`--run-timeout 1.5`), as milliseconds. */
export function secondsToMs(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new InvalidArgumentError(`expected a number of seconds above 0, got "${value}"`);
  return Math.max(1, Math.round(n * 1000));
}

/** `a,b , c` → `["a","b","c"]`. */
export function commaList(value: string): string[] {
  const items = value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (items.length === 0) throw new InvalidArgumentError(`expected a comma-separated list of agents, got "${value}"`);
  return items;
}

/** A repeatable option's values, in order (`--sandbox-write a --sandbox-write b`). */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** `--sandbox off|on|strict` (default: `PI_ORCH_SANDBOX`, else on where bwrap works). */
export function sandboxOption(): Option {
  return new Option(
    "--sandbox <mode>",
    "run the agent in a bubblewrap sandbox: on (default where bwrap works), strict (also no network for its commands), off",
  ).choices(["off", "on", "strict"]);
}

/** What `--sandbox` does, for the help of the commands that take it. */
export const SANDBOX_HELP = `Sandbox (--sandbox, default on where bubblewrap works, or PI_ORCH_SANDBOX=off|on|strict):
the worker runs under bwrap in its own PID namespace, so everything it starts (setsid
included) ends with it; the file system is read-only but for the project (and its git
folder), /tmp, the tool caches (~/.npm, ~/.cache, ...) and --sandbox-write folders; the
supervisor's home (agents.json, the socket, logs, other agents) is not there. strict also
gives a private /tmp, hides ~/.ssh, ~/.aws and other credentials, and cuts the network of
the commands the agent runs (the model's API still works).`;
