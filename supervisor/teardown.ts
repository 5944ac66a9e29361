/**
 * Stopping a worker and everything it started. Workers run in their own process
 * group, so signalling the group (negative pid) also reaches tool children such as
 * a `bash -c "sleep 60"` that the worker itself would leave behind.
 */
import type { Writable } from "node:stream";
import { liveGroupMembers } from "./process-tree.js";

/** What teardown needs of a running worker. */
export interface WorkerHandle {
  /** Pid of the worker, which is also its process group id (spawned detached). */
  pid: number | undefined;
  /** Settles when the worker process has exited and been reaped. */
  exited: Promise<unknown>;
  stdin: Writable | null;
  /** Ask the worker to abort its run (a pi `abort` command). */
  sendAbort?: () => void;
}

/** Timings of a graceful stop. */
export interface TeardownOptions {
  /** Wait after closing stdin before SIGTERM (default 5 s). */
  graceMs: number;
  /** Wait after SIGTERM before SIGKILL (default 2 s). */
  killGraceMs: number;
  /** Send `abort` first (skip for a worker that is hung or stopped). */
  abort: boolean;
}

/** How a teardown ended, for the logs and tests. */
export interface TeardownResult {
  /** The last signal the group needed, or null when closing stdin was enough. */
  escalatedTo: "SIGTERM" | "SIGKILL" | null;
}

/** Send `signal` to the whole process group led by `pgid`; false when nothing was there. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw err;
  }
}

/**
 * Whether any process of the group still runs (zombies waiting to be reaped do not count).
 * The kernel is asked first (signal 0 to the group): a group with no process left, the
 * usual end of a stop, needs no reading of /proc, which costs a read of every process's
 * stat file (3,000 of them in a fleet of 1,000 sandboxed agents, once per turn in which
 * a worker exits). Only a group that still has members is read, to tell zombies apart
 * (`members`: its running pids, null where there is no /proc).
 */
export function groupAlive(pgid: number, members: (pgid: number) => number[] | null = liveGroupMembers): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  return members(pgid)?.length !== 0;
}

/**
 * Graceful stop: `abort`, close stdin, wait `graceMs`, SIGTERM the group, wait
 * `killGraceMs`, SIGKILL the group. Resolves once the worker exited and its group is
 * empty. Invariant: the handle must come from a detached spawn (pid == pgid).
 */
export async function stopWorker(handle: WorkerHandle, opts: TeardownOptions): Promise<TeardownResult> {
  const pgid = handle.pid;
  if (opts.abort) {
    try {
      handle.sendAbort?.();
    } catch {
      // A worker whose stdin already broke cannot be asked; the signals below still work.
    }
  }
  handle.stdin?.end();
  if (pgid === undefined) {
    await handle.exited;
    return { escalatedTo: null };
  }
  if (await settledWithin(handle.exited, opts.graceMs)) {
    // The worker exited by itself; only leftovers of its group remain to be ended. Asked
    // in the next turn, once the exits this one brings (a fleet stopping) are all in: they
    // share one reading of /proc (process-tree.ts).
    await new Promise((r) => setImmediate(r));
    if (!groupAlive(pgid)) return { escalatedTo: null };
  }
  signalGroup(pgid, "SIGTERM");
  // A stopped (SIGSTOP) process only acts on SIGTERM once continued.
  signalGroup(pgid, "SIGCONT");
  if ((await settledWithin(handle.exited, opts.killGraceMs)) && (await groupGoneWithin(pgid, opts.killGraceMs))) {
    return { escalatedTo: "SIGTERM" };
  }
  signalGroup(pgid, "SIGKILL");
  await handle.exited;
  return { escalatedTo: "SIGKILL" };
}

/** Immediate stop for a worker that cannot be reasoned with: SIGKILL the group and wait for the exit. */
export async function killWorker(handle: WorkerHandle): Promise<void> {
  handle.stdin?.destroy();
  if (handle.pid !== undefined) signalGroup(handle.pid, "SIGKILL");
  await handle.exited;
}

/** Kill whatever is left of a group whose leader already exited (orphaned tool children). */
export function killGroupLeftovers(pgid: number | undefined): void {
  if (pgid !== undefined && groupAlive(pgid)) signalGroup(pgid, "SIGKILL");
}

function settledWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    promise.then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      () => {
        clearTimeout(timer);
        resolve(true);
      },
    );
  });
}

/** Group members are not our children, so there is no event for their exit: poll briefly. */
async function groupGoneWithin(pgid: number, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (groupAlive(pgid)) {
    if (performance.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}
