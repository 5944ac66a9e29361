/**
 * One worker process: spawn it detached in its own process group, read its stdout as
 * lines and its stderr as text, write protocol lines to its stdin, signal its group,
 * and report its exit once. It knows nothing of the agent's state: everything it sees
 * goes to the callbacks, which the actor turns into messages.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { Writable } from "node:stream";
import { SECRETS_FD_VAR } from "../shared/secrets.js";
import { JsonlWriter, readLines } from "../shared/jsonl.js";
import { USAGE_EXIT_CODE } from "./config-error.js";
import { steadyNow } from "../shared/clock.js";
import { lowerWorkerPriority } from "./priority.js";
import { groupRssBytes } from "./process-tree.js";
import { killGroupLeftovers, killWorker, stopWorker, type TeardownOptions, type WorkerHandle } from "./teardown.js";

/** What to start and where each thing the process says goes. */
export interface WorkerProcessOptions {
  file: string;
  args: readonly string[];
  cwd: string;
  /** Added to the supervisor's own environment. */
  env: Record<string, string | undefined>;
  /** Longest accepted stdout line, in bytes. */
  maxLineBytes?: number;
  /** Provider keys for the worker, sent on fd 3 (shared/secrets.ts) rather than in its environment. */
  secrets?: Record<string, string>;
  /** The `abort` command sent before a graceful stop (it carries a request id of the actor's). */
  abortCommand: () => Record<string, unknown>;
  /** One complete stdout line. */
  onLine: (line: string) => void;
  /** A stdout line over `maxLineBytes` was dropped; `head` is its start. */
  onLineTooLong: (message: string, head: string) => void;
  /** A chunk of stderr as it came. */
  onStderr: (text: string) => void;
  /** The process ended (or never started: `spawnError`); called exactly once. */
  onExit: (code: number | null, signal: string | null, spawnError: string | null) => void;
}

/** A started (or failed to start) worker process. */
export interface WorkerProcess {
  /** Undefined when the spawn failed; `onExit` then follows with the spawn error. */
  readonly pid: number | undefined;
  /** When it was spawned. */
  readonly startedAt: number;
  /** Queue one protocol line; throws when the value cannot be serialised. */
  write(value: unknown): void;
  /** Graceful stop of the group (abort, close stdin, SIGTERM, SIGKILL); resolves when all of it is gone. */
  stop(opts: TeardownOptions): Promise<unknown>;
  /** SIGKILL the group now; resolves when the worker is reaped. */
  kill(): Promise<void>;
  /** After the worker's own exit: end what its group left running. */
  killLeftovers(): void;
  /** Lower the group to `nice` (0 leaves it at the supervisor's weight). */
  lowerPriority(nice: number): void;
  /** RSS of the whole group in bytes, or null when it cannot be read. */
  rssBytes(): number | null;
}

/** Spawn a worker. Invariant: the callbacks are only called after this returns. */
export function spawnWorkerProcess(opts: WorkerProcessOptions): WorkerProcess {
  const secrets = opts.secrets && Object.keys(opts.secrets).length > 0 ? opts.secrets : undefined;
  let markExited!: () => void;
  const exited = new Promise<void>((r) => (markExited = r));
  let reported = false;
  const report = (code: number | null, signal: string | null, spawnError: string | null) => {
    if (reported) return;
    reported = true;
    opts.onExit(code, signal, spawnError);
    markExited();
  };
  // node's own spawn, not execa's: a fleet's supervisor starts every worker on its one
  // thread, and execa's option handling, promise and stream bookkeeping cost as much CPU
  // again as the fork itself (bench/fleet.ts, profiled) for none of its features here.
  let proc: ChildProcess;
  try {
    proc = spawn(opts.file, opts.args, {
      cwd: opts.cwd,
      // A variable set to undefined is left out: the supervisor's own value is not inherited.
      env: { ...process.env, ...opts.env, ...(secrets ? { [SECRETS_FD_VAR]: "3" } : {}) },
      // Own process group: teardown signals reach the worker's tool children too. Not
      // killed when the supervisor exits: a worker exits when its stdin closes.
      detached: true,
      // fd 3: the keys, written once below and closed.
      stdio: secrets ? ["pipe", "pipe", "pipe", "pipe"] : ["pipe", "pipe", "pipe"],
    });
  } catch (err) {
    // Arguments node refuses before any process exists (a NUL byte in an argument).
    queueMicrotask(() => report(null, null, (err as Error).message || "could not start the worker"));
    return {
      pid: undefined,
      startedAt: steadyNow(),
      write: () => undefined,
      stop: () => exited,
      kill: () => exited,
      killLeftovers: () => undefined,
      lowerPriority: () => undefined,
      rssBytes: () => null,
    };
  }
  // A process that never started (ENOENT, EACCES) has no pid and is told as "error".
  proc.on("error", (err) => {
    if (proc.pid === undefined) report(null, null, err.message || "could not start the worker");
  });
  proc.on("exit", (code, signal) => {
    if (proc.pid === undefined) return;
    // A usage error's message is the last thing on stderr, which may drain after "exit": wait for it, briefly.
    if (code === USAGE_EXIT_CODE && proc.stderr && !proc.stderr.readableEnded) {
      const timer = setTimeout(() => report(code, signal, null), 500);
      proc.stderr.once("close", () => {
        clearTimeout(timer);
        report(code, signal, null);
      });
    } else report(code, signal, null);
  });
  proc.stdin?.on("error", () => {});
  if (secrets) {
    const channel = proc.stdio[3] as Writable | undefined;
    channel?.on("error", () => undefined);
    channel?.end(JSON.stringify(secrets));
  }
  const writer = new JsonlWriter(proc.stdin!);
  const handle: WorkerHandle = {
    pid: proc.pid,
    exited,
    stdin: proc.stdin,
    sendAbort: () => void writer.write(opts.abortCommand()),
  };
  if (proc.stdout) {
    readLines(proc.stdout, {
      maxLineBytes: opts.maxLineBytes,
      onLine: opts.onLine,
      onError: (err) => opts.onLineTooLong(`worker wrote an oversized stdout line: ${err.message}`, err.head),
    });
  }
  proc.stderr?.on("data", (chunk: Buffer | string) => opts.onStderr(chunk.toString()));
  return {
    pid: proc.pid,
    startedAt: steadyNow(),
    write: (value) => void writer.write(value),
    stop: (teardown) => stopWorker(handle, teardown),
    kill: () => killWorker(handle),
    killLeftovers: () => killGroupLeftovers(handle.pid),
    lowerPriority: (nice) => {
      if (handle.pid !== undefined) lowerWorkerPriority(handle.pid, nice);
    },
    rssBytes: () => (handle.pid === undefined ? null : groupRssBytes(handle.pid)),
  };
}
