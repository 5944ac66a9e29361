/**
 * Whether a process belongs to an agent: the question the socket asks of whoever connects,
 * so that an agent's tools cannot list, read, spawn or stop agents (issue 31). The answer
 * comes from what the kernel keeps about the process, not from anything it says: its
 * parent chain (below a worker the supervisor started), its environment (the marks every
 * process of an agent is started with) and its PID namespace (a sandbox has its own).
 */
import { readFileSync, readlinkSync } from "node:fs";
import { AGENT_VAR, readProcStat, TOOL_TAG_VAR, WORKER_TAG_VAR } from "../shared/proc.js";
import { SANDBOXED_VAR } from "../shared/sandbox.js";

/** Environment variables only processes of an agent carry. */
const AGENT_MARKS = [AGENT_VAR, TOOL_TAG_VAR, WORKER_TAG_VAR, SANDBOXED_VAR];

/** What the kernel says of a process; undefined when it is gone or not readable. */
export interface ProcessFacts {
  ppid(pid: number): number | undefined;
  /** The raw `/proc/PID/environ`: NUL-separated `NAME=value` entries. */
  environ(pid: number): string | undefined;
  /** The PID namespace's id (`pid:[4026531836]`). */
  pidNamespace(pid: number): string | undefined;
}

/** The facts from this machine's `/proc`. */
export const procFacts: ProcessFacts = {
  ppid: (pid) => readProcStat(pid)?.ppid,
  environ: (pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`, "latin1");
    } catch {
      return undefined;
    }
  },
  pidNamespace: (pid) => {
    try {
      return readlinkSync(`/proc/${pid}/ns/pid`);
    } catch {
      return undefined;
    }
  },
};

/**
 * Which agent `pid` belongs to, as words for an error (`agent "fix" (pid 12 runs under
 * its worker, pid 9)`), or undefined for a process of no agent. `workers` maps the pids
 * the supervisor started (a worker, or the bwrap around one) to agent names; `selfPid`
 * is the supervisor's own pid, whose namespace is the one people run in.
 */
export function agentOfProcess(
  pid: number,
  workers: ReadonlyMap<number, string>,
  facts: ProcessFacts = procFacts,
  selfPid: number = process.pid,
): string | undefined {
  // A sandbox's processes live in its own PID namespace, and cannot leave it.
  const ns = facts.pidNamespace(pid);
  const own = facts.pidNamespace(selfPid);
  if (ns !== undefined && own !== undefined && ns !== own)
    return `a sandbox (pid ${pid} is in another PID namespace, ${ns})`;
  // Every process an agent starts keeps its worker as an ancestor until it double-forks
  // away (then init or a subreaper adopts it).
  const seen = new Set<number>();
  for (let p: number | undefined = pid; p !== undefined && p > 1 && !seen.has(p); p = facts.ppid(p)) {
    seen.add(p);
    const name = workers.get(p);
    if (name !== undefined) return `agent "${name}" (pid ${pid} runs under its worker, pid ${p})`;
  }
  // One that left the tree still carries the marks it was started with, unless it cleared them.
  const entries = (facts.environ(pid) ?? "").split("\0");
  for (const mark of AGENT_MARKS) {
    const entry = entries.find((e) => e.startsWith(`${mark}=`));
    if (entry === undefined) continue;
    const value = entry.slice(mark.length + 1);
    return mark === AGENT_VAR
      ? `agent "${value}" (pid ${pid} carries ${entry})`
      : `an agent (pid ${pid} carries ${mark})`;
  }
  return undefined;
}
