/**
 * The JSON report of a run (`--json`, `--report-json`) and the exit code it implies:
 * 0 when every task passed, 1 when any did not, 130 when SIGINT ended the run. Pure.
 */
import type { Shard } from "./shard.js";
import type { RunReport, TaskResult } from "./types.js";

/** What a report is built from. */
export interface ReportInput {
  results: readonly TaskResult[];
  startedAt: number;
  durationMs: number;
  interrupted: boolean;
  shard: Shard | null;
  /** Tasks in the whole list (before `--shard`). */
  listed?: number;
}

/** Exit code of a finished run. */
export function exitCodeOf(results: readonly TaskResult[], interrupted: boolean): number {
  if (interrupted) return 130;
  return results.every((r) => r.status === "passed") ? 0 : 1;
}

/** Tasks by final status, plus the total. */
export function countResults(results: readonly TaskResult[]): RunReport["counts"] {
  const counts: RunReport["counts"] = {
    total: results.length,
    passed: 0,
    failed: 0,
    timed_out: 0,
    cancelled: 0,
    skipped: 0,
  };
  for (const r of results) counts[r.status]++;
  return counts;
}

/** Build the report document. */
export function buildReport(input: ReportInput): RunReport {
  return {
    version: 1,
    startedAt: new Date(input.startedAt).toISOString(),
    durationMs: input.durationMs,
    interrupted: input.interrupted,
    shard: input.shard,
    ...(input.listed !== undefined ? { listed: input.listed } : {}),
    counts: countResults(input.results),
    exitCode: exitCodeOf(input.results, input.interrupted),
    tasks: [...input.results],
  };
}
