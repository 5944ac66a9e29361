/**
 * The processes of a worker's process group, read from /proc (Linux): their summed
 * RSS for `--max-memory`, and whether any is still running for teardown. Elsewhere
 * these report `null` and callers fall back to signals.
 */
import { readdirSync, readFileSync } from "node:fs";

const PAGE_BYTES = 4096;

interface ProcStat {
  pid: number;
  state: string;
  pgrp: number;
  rssPages: number;
}

/** Every process of the group `pgid`, or null when /proc is unavailable. */
function groupProcesses(pgid: number): ProcStat[] | null {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return null;
  }
  const out: ProcStat[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited between readdir and read
    }
    // The command name (field 2) may contain spaces and parentheses: parse after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // After the name: state(3) ppid(4) pgrp(5) ... rss(24), so state is index 0, pgrp 2, rss 21.
    const pgrp = Number(fields[2]);
    if (pgrp !== pgid) continue;
    out.push({ pid: Number(entry), state: fields[0], pgrp, rssPages: Number(fields[21]) });
  }
  return out;
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
  return procs === null ? null : procs.filter((p) => p.state !== "Z" && p.state !== "X").map((p) => p.pid);
}

/** Whether `pid` runs (false for a zombie); falls back to kill(0) without /proc. */
export function processRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
    return state !== "Z" && state !== "X";
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
