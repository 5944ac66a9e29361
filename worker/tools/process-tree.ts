/**
 * Killing what a tool started: a whole process group plus the descendants that left it
 * (`setsid`, `setpgid`, daemonising scripts), and a registry of the live tool children
 * so the worker can take them all down on its way out.
 */
import { readProcTable, type ProcStat } from "../../shared/proc.js";

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

const liveChildren = new Set<number>();

/** Record a tool child (the leader of its own process group) while it runs. */
export function trackChild(pid: number): void {
  liveChildren.add(pid);
}

/** Forget a tool child once it has exited. */
export function untrackChild(pid: number): void {
  liveChildren.delete(pid);
}

/** Pids of the tool children currently tracked. */
export function trackedChildren(): number[] {
  return [...liveChildren];
}

/**
 * SIGKILL the tree of every tracked tool child and forget them. Synchronous so the
 * worker can call it from `process.on("exit")`, on SIGTERM and when stdin closes.
 */
export function killAllChildren(): void {
  for (const pid of liveChildren) killTree(pid, "SIGKILL");
  liveChildren.clear();
}
