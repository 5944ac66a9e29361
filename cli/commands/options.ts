/**
 * Option parsers shared by the commands. They throw commander's own
 * `InvalidArgumentError`, so a bad value is a usage error (exit 2) with the option named.
 */
import { InvalidArgumentError } from "commander";

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
