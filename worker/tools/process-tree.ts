/**
 * Killing what a tool started: a whole process group plus the descendants that left it
 * (`setsid`, `setpgid`, daemonising scripts), and a registry of the live tool process
 * groups so the worker can take them all down on its way out, including the background
 * jobs of commands that have already returned.
 *
 * A process that left its group (`setsid`, `setpgid`) after its shell returned keeps its
 * parent link to the command's reaper (reaper.ts, a child subreaper), so the tree below
 * the tracked pid is complete. Without the reaper (no perl) such a process is re-parented
 * to PID 1 and found only by the tool tag; one that also cleared its environment
 * (`env -i setsid`) then escapes (a cgroup of our own would need privileges a worker does
 * not have).
 */
import {
  isDeadState,
  pidsWithEnv,
  readProcTable,
  TOOL_TAG_VAR,
  WORKER_TAG_VAR,
  type ProcStat,
} from "../../shared/proc.js";
import { randomUuid } from "../../shared/uuid.js";

let ownTag: string | undefined;

/**
 * This worker's tool tag: the one its supervisor gave (`PI_ORCH_WORKER_TAG`), else one made
 * for this process (at start-up, so from /dev/urandom: node:crypto cost a start ~3 ms).
 */
export function toolTag(): string {
  ownTag ??= process.env[WORKER_TAG_VAR] || `pi-${process.pid}-${randomUuid()}`;
  return ownTag;
}

/**
 * SIGKILL the processes carrying this worker's tool tag: what left the tools' process
 * groups (`setsid`, `setpgid`) and is found by no group or parent link (no reaper, or a
 * command that killed its reaper). Only its tools carry it (never the worker or an
 * ancestor). Not found: a process that cleared its environment (`env -i`); the reaper and
 * the sandbox end those.
 */
function killTagged(): void {
  for (const pid of pidsWithEnv(TOOL_TAG_VAR, toolTag())) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
}

/** Every process below `root` in the parent links of `table` (not `root` itself), parents before children. */
export function descendantsOf(root: number, table: readonly ProcStat[]): number[] {
  const children = new Map<number, number[]>();
  for (const { pid, ppid } of table) {
    const list = children.get(ppid);
    if (list) list.push(pid);
    else children.set(ppid, [pid]);
  }
  const found: number[] = [];
  const seen = new Set<number>([root]);
  const queue = [root];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      if (seen.has(child)) continue;
      seen.add(child);
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function signalQuietly(target: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(target, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Send `signal` to the process group led by `pid` and to every descendant of `pid`,
 * including those that moved to another group or session. Synchronous, never throws
 * (already-dead processes are fine), so it is safe in an `exit` handler.
 *
 * The descendants are collected before the group is signalled: once the group leader
 * dies its children are re-parented and can no longer be traced back to it.
 */
export function killTree(pid: number, signal: NodeJS.Signals = "SIGKILL"): void {
  const escaped = process.platform === "linux" ? descendantsOf(pid, readProcTable() ?? []) : [];
  if (!signalQuietly(-pid, signal)) signalQuietly(pid, signal);
  for (const descendant of escaped) signalQuietly(descendant, signal);
}

/**
 * Pids of the live members of process group `pgid` in `table`, leaving out `ignore`
 * (the group's own watchdog) and processes that only wait to be reaped.
 */
export function liveGroupMembers(pgid: number, table: readonly ProcStat[], ignore?: number): number[] {
  return table.filter((p) => p.pgrp === pgid && p.pid !== ignore && !isDeadState(p.state)).map((p) => p.pid);
}

/** A group whose leader has exited but whose members may still run, as `releaseWhenEmpty` takes it. */
export interface LingeringGroup {
  /** The group's watchdog, which does not count as a member; undefined while unknown. Absent: there is none. */
  watchdog?: () => number | undefined;
  onEmpty: () => void;
}

/** How often the groups of returned commands are checked for members. */
export const GROUP_POLL_MS = 500;

const liveGroups = new Set<number>();
const lingering = new Map<number, LingeringGroup>();
let poller: NodeJS.Timeout | undefined;

/** Record a tool child (the leader of its own process group) while it runs. */
export function trackChild(pid: number): void {
  liveGroups.add(pid);
}

/** Forget a tool child's group: it is empty, or was killed. */
export function untrackChild(pid: number): void {
  liveGroups.delete(pid);
  lingering.delete(pid);
  if (lingering.size === 0) stopPoller();
}

/**
 * The leader `pgid` has exited: keep its group in the registry (so teardown still kills
 * its background jobs) until no member but the group's watchdog is left, then forget it
 * and call `onEmpty`. Where there is no `/proc` the group is forgotten at once.
 */
export function releaseWhenEmpty(pgid: number, group: LingeringGroup): void {
  if (!liveGroups.has(pgid)) return group.onEmpty();
  lingering.set(pgid, group);
  checkLingering();
  if (lingering.size > 0 && poller === undefined) {
    poller = setInterval(checkLingering, GROUP_POLL_MS);
    poller.unref();
  }
}

function checkLingering(): void {
  if (lingering.size === 0) return;
  const table = readProcTable();
  for (const [pgid, group] of lingering) {
    const watchdog = group.watchdog?.();
    // Until the watchdog has said who it is, it cannot be told apart from a member.
    const unknown = group.watchdog !== undefined && watchdog === undefined;
    if (table && (unknown || liveGroupMembers(pgid, table, watchdog).length > 0)) continue;
    untrackChild(pgid);
    group.onEmpty();
  }
}

function stopPoller(): void {
  clearInterval(poller);
  poller = undefined;
}

/**
 * SIGKILL the tree of every tracked tool group and forget them. Synchronous so the
 * worker can call it from `process.on("exit")`, on SIGTERM and when stdin closes.
 */
export function killAllChildren(): void {
  for (const pid of liveGroups) killTree(pid, "SIGKILL");
  killTagged();
  const released = [...lingering.values()];
  liveGroups.clear();
  lingering.clear();
  stopPoller();
  for (const group of released) group.onEmpty();
}
