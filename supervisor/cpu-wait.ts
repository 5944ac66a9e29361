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

/** Run-queue waits so far: the supervisor's own, and each of some processes of a worker by pid. */
export interface CpuWaits {
  self: number | null;
  tree: Map<number, number>;
}

/** This process's wait, read once per turn of the event loop: every ping sent in one turn shares it. */
let selfWait: number | null | undefined;

/**
 * The processes of a worker whose waits count: the leaves of the tree under `pid` (a
 * sandboxed worker's node runs two bwrap levels below it, which never run themselves),
 * at most `TREE_LIMIT` processes read. Read once per worker, so a ping costs one file.
 */
export function workerLeaves(pid: number): number[] {
  const leaves: number[] = [];
  const todo = [pid];
  for (let seen = 0; todo.length > 0 && seen < TREE_LIMIT; seen++) {
    const p = todo.shift()!;
    const children = readText(`/proc/${p}/task/${p}/children`);
    if (children === null) continue;
    const kids = children
      .trim()
      .split(/\s+/)
      .filter((c) => c !== "");
    if (kids.length === 0) leaves.push(p);
    for (const child of kids) todo.push(Number(child));
  }
  return leaves;
}

/** The waits of this process and of `pids` (a pid that is gone is left out). */
export function readCpuWaits(pids: readonly number[]): CpuWaits {
  if (selfWait === undefined) {
    selfWait = waitOf("self");
    setImmediate(() => {
      selfWait = undefined;
    });
  }
  const tree = new Map<number, number>();
  for (const p of pids) {
    const wait = waitOf(p);
    if (wait !== null) tree.set(p, wait);
  }
  return { self: selfWait, tree };
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
