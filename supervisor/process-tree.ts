/**
 * The processes of a worker's process group, read from /proc (Linux): their summed
 * RSS for `--max-memory`, and whether any is still running for teardown. Elsewhere
 * these report `null` and callers fall back to signals.
 */
import { isDeadState, readProcTable, type ProcStat } from "../shared/proc.js";

const PAGE_BYTES = 4096;

/** Every process of the group `pgid`, or null when /proc is unavailable. */
function groupProcesses(pgid: number): ProcStat[] | null {
  return readProcTable()?.filter((p) => p.pgrp === pgid) ?? null;
}

/** RSS in bytes of all processes whose process group is `pgid`, or null when /proc is unavailable. */
export function groupRssBytes(pgid: number): number | null {
  const procs = groupProcesses(pgid);
  return procs === null ? null : procs.reduce((sum, p) => sum + p.rssPages * PAGE_BYTES, 0);
}

/**
 * Pids of the group's processes that still run. Zombies are left out: they are
 * dead and only wait for their (new) parent to reap them, yet still answer kill(0).
 */
export function liveGroupMembers(pgid: number): number[] | null {
  const procs = groupProcesses(pgid);
  return procs === null ? null : procs.filter((p) => !isDeadState(p.state)).map((p) => p.pid);
}
