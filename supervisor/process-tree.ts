/**
 * The processes of a worker's process group, read from /proc (Linux): their summed
 * RSS for `--max-memory`, and whether any is still running for teardown. Elsewhere
 * these report `null` and callers fall back to signals.
 *
 * Reading /proc means reading every process's stat file, and a fleet asks once per
 * worker: a thousand workers exiting together asked a thousand times over three
 * thousand processes. So one reading, grouped by process group, answers every question
 * asked in the same turn of the event loop. It is a little old by the time it answers,
 * which is safe for what is asked: a process that ended since still counts as running
 * (a signal too many, a poll more), and a new one can only come from a member that was
 * running when it was read.
 */
import { isDeadState, readProcTable, type ProcStat } from "../shared/proc.js";

const PAGE_BYTES = 4096;

/** The reading of this turn by process group; undefined until asked, null where there is no /proc. */
let byGroup: Map<number, ProcStat[]> | null | undefined;

/** Every process of the group `pgid`, or null when /proc is unavailable. */
function groupProcesses(pgid: number): ProcStat[] | null {
  if (byGroup === undefined) {
    const table = readProcTable();
    byGroup = table && new Map();
    for (const p of table ?? []) {
      const members = byGroup!.get(p.pgrp);
      if (members) members.push(p);
      else byGroup!.set(p.pgrp, [p]);
    }
    // Forgotten once this turn's callbacks have run: the next turn reads /proc again.
    setImmediate(() => {
      byGroup = undefined;
    });
  }
  return byGroup === null ? null : (byGroup.get(pgid) ?? []);
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
