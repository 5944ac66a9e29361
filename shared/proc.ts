/**
 * The Linux process table from `/proc`: what the worker needs to kill a tool's whole
 * tree and the supervisor to measure and check a worker's process group.
 */
import { readdirSync, readFileSync } from "node:fs";

/** The fields of `/proc/<pid>/stat` pi-orch uses. */
export interface ProcStat {
  pid: number;
  /** `R`, `S`, `D`, `Z` (zombie), `X` (dead), ... */
  state: string;
  ppid: number;
  pgrp: number;
  /** Resident set size in pages. */
  rssPages: number;
}

/**
 * Parse one `/proc/<pid>/stat` line. The command name sits in parentheses and may itself
 * contain spaces and parentheses, so fields are counted from the last `)`.
 */
export function parseProcStat(text: string): ProcStat | null {
  const close = text.lastIndexOf(")");
  if (close === -1) return null;
  const pid = Number.parseInt(text, 10);
  // After ") ": state(3) ppid(4) pgrp(5) ... rss(24), so state is index 0, ppid 1, pgrp 2, rss 21.
  const rest = text.slice(close + 2).split(" ");
  const ppid = Number(rest[1]);
  const pgrp = Number(rest[2]);
  if (!Number.isInteger(pid) || !Number.isInteger(ppid) || !Number.isInteger(pgrp)) return null;
  return { pid, state: rest[0] ?? "", ppid, pgrp, rssPages: Number(rest[21] ?? 0) || 0 };
}

/** One process's stat, or null when it is gone (or there is no `/proc`). */
export function readProcStat(pid: number): ProcStat | null {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return null;
  }
}

/** A snapshot of the process table, or null where there is no Linux-style `/proc`. */
export function readProcTable(): ProcStat[] | null {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return null;
  }
  const table: ProcStat[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readProcStat(Number(name));
    if (stat) table.push(stat); // else it exited between readdir and read
  }
  return table.length > 0 ? table : null;
}

/** Whether a process state means it no longer runs (a zombie only waits to be reaped). */
export function isDeadState(state: string): boolean {
  return state === "Z" || state === "X";
}

/** The variable every process of a fleet agent carries its name in (set on its worker by the supervisor). */
export const AGENT_VAR = "PI_ORCH_AGENT";

/** The variable every tool process of one worker carries its tag in (the worker sets it in its tools' environment). */
export const TOOL_TAG_VAR = "PI_ORCH_TOOL_TAG";
/**
 * The tag a supervisor gives its worker to put on its tools. Not TOOL_TAG_VAR itself: a
 * `pi` the agent starts (a sub-agent) would inherit that and, at its exit, kill the tools
 * of the agent that started it. Tools never see this one.
 */
export const WORKER_TAG_VAR = "PI_ORCH_WORKER_TAG";

/**
 * Pids of processes whose environment holds `name=value` exactly (of this user: another
 * user's environ cannot be read). How leftovers that left a process group (`setsid`,
 * `setpgid`) are found again: they keep the environment they were started with.
 */
export function pidsWithEnv(name: string, value: string): number[] {
  const entry = `${name}=${value}\0`;
  const pids: number[] = [];
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return pids;
  }
  for (const pid of names) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const environ = readFileSync(`/proc/${pid}/environ`, "latin1");
      if (environ.startsWith(entry) || environ.includes(`\0${entry}`)) pids.push(Number(pid));
    } catch {
      // gone, or not ours
    }
  }
  return pids;
}
