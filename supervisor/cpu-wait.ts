/**
 * How long processes waited for a CPU while they could run: the kernel's run-queue
 * delay (Linux, the second field of `/proc/<pid>/schedstat`, in ns, of the process's
 * main thread: the one that runs node's event loop). Presence takes it out of a ping's
 * deadline (presence.ts, `pingTimeLeft`). Where the files are missing every wait reads
 * 0, and deadlines count wall time as before.
 */
import { readFileSync } from "node:fs";

/** Most processes of a worker's tree read: the worker, its sandbox's two bwrap processes, a few tool children. */
const TREE_LIMIT = 16;

/** The run-queue wait in ms from the text of `/proc/<pid>/schedstat` (`cpu_ns wait_ns slices`), or null. */
export function parseSchedstatWaitMs(text: string): number | null {
  const wait = Number(text.trim().split(/\s+/)[1]);
  return Number.isFinite(wait) && wait >= 0 ? wait / 1e6 : null;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

function waitOf(pid: number | "self"): number | null {
  const text = readText(`/proc/${pid}/schedstat`);
  return text === null ? null : parseSchedstatWaitMs(text);
}

/** Run-queue waits so far: the supervisor's own, and each process of one worker's tree by pid. */
export interface CpuWaits {
  self: number | null;
  tree: Map<number, number>;
}

/**
 * The waits of this process and of `pid` with its descendants (a sandboxed worker's
 * node runs two levels below the pid the supervisor started), at most `TREE_LIMIT`
 * processes; without a pid, this process's alone.
 */
export function readCpuWaits(pid: number | undefined): CpuWaits {
  const tree = new Map<number, number>();
  const todo = pid === undefined ? [] : [pid];
  while (todo.length > 0 && tree.size < TREE_LIMIT) {
    const p = todo.shift()!;
    const wait = waitOf(p);
    if (wait === null) continue;
    tree.set(p, wait);
    const children = readText(`/proc/${p}/task/${p}/children`);
    for (const child of children?.trim().split(/\s+/) ?? []) if (child !== "") todo.push(Number(child));
  }
  return { self: waitOf("self"), tree };
}

/**
 * The longest wait for a CPU since `before`, in ms: of this process, or of any one
 * process of the worker's tree (a process that started since counts from its start).
 * Pure: `after` is a later reading of the same tree.
 */
export function waitedBetween(before: CpuWaits, after: CpuWaits): number {
  let most = before.self !== null && after.self !== null ? Math.max(0, after.self - before.self) : 0;
  for (const [pid, wait] of after.tree) most = Math.max(most, wait - (before.tree.get(pid) ?? 0));
  return most;
}
