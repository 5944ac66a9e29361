/**
 * One worker process: spawn it in its own process group, read its stdout as
 * lines and its stderr as text, write protocol lines to its stdin, signal its group,
 * and report its exit once. It knows nothing of the agent's state: everything it sees
 * goes to the callbacks, which the actor turns into messages.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { SECRETS_FD_VAR } from "../shared/secrets.js";
import { JsonlWriter, readLines } from "../shared/jsonl.js";
import { USAGE_EXIT_CODE } from "./config-error.js";
import { steadyNow } from "../shared/clock.js";
import { lowerWorkerPriority } from "./priority.js";
import { groupRssBytes } from "./process-tree.js";
import { killGroupLeftovers, killWorker, stopWorker, type TeardownOptions, type WorkerHandle } from "./teardown.js";
import type { WorkerLauncher } from "./worker-launcher.js";

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
  /** The pid of a worker whose start was reported later (`spawnedLater`); undefined when it did not start. */
  onSpawned?: (pid: number | undefined) => void;
  /** The process ended (or never started: `spawnError`); called exactly once. */
  onExit: (code: number | null, signal: string | null, spawnError: string | null) => void;
}

/** A started (or failed to start) worker process. */
export interface WorkerProcess {
  /** Undefined when the spawn failed; `onExit` then follows with the spawn error. */
  readonly pid: number | undefined;
  /** The pid is not known yet: `onSpawned` gives it (before any line or exit). */
  readonly spawnedLater: boolean;
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

/**
 * Spawn a worker: through `launcher` (one session for all workers, worker-launcher.ts) when
 * given and usable, else detached in a session of its own. Invariant: the callbacks are
 * only called after this returns; with the launcher the pid comes later, by `onSpawned`.
 */
export function spawnWorkerProcess(opts: WorkerProcessOptions, launcher?: WorkerLauncher | null): WorkerProcess {
  const secrets = opts.secrets && Object.keys(opts.secrets).length > 0 ? opts.secrets : undefined;
  const life = exitOnce(opts.onExit);
  if (launcher?.usable) return launchedWorker(opts, secrets, life, launcher);
  return directWorker(opts, secrets, life);
}

/** The one report of a worker's end, and a promise of it. */
interface ExitOnce {
  exited: Promise<void>;
  report(code: number | null, signal: string | null, spawnError: string | null): void;
}

function exitOnce(onExit: WorkerProcessOptions["onExit"]): ExitOnce {
  let markExited!: () => void;
  const exited = new Promise<void>((r) => (markExited = r));
  let reported = false;
  return {
    exited,
    report: (code, signal, spawnError) => {
      if (reported) return;
      reported = true;
      onExit(code, signal, spawnError);
      markExited();
    },
  };
}

/** A worker that never started: no pid, its exit (with the reason) already reported or on its way. */
function notStarted(life: ExitOnce, startedAt: number): WorkerProcess {
  return {
    pid: undefined,
    spawnedLater: false,
    startedAt,
    write: () => undefined,
    stop: () => life.exited,
    kill: () => life.exited,
    killLeftovers: () => undefined,
    lowerPriority: () => undefined,
    rssBytes: () => null,
  };
}

/** The worker spawned by node, detached: a session, so an autogroup, of its own. */
function directWorker(
  opts: WorkerProcessOptions,
  secrets: Record<string, string> | undefined,
  life: ExitOnce,
): WorkerProcess {
  const { report } = life;
  // node's own spawn, not execa's: a fleet's supervisor starts every worker on its one
  // thread, and execa's option handling, promise and stream bookkeeping cost as much CPU
  // again as the fork itself (bench/fleet.ts, profiled) for none of its features here.
  let proc: ChildProcess;
  try {
    proc = spawn(opts.file, opts.args, {
      cwd: opts.cwd,
      // A variable set to undefined is left out: the supervisor's own value is not inherited.
      env: workerEnv(opts, secrets),
      // Own process group: teardown signals reach the worker's tool children too. Not
      // killed when the supervisor exits: a worker exits when its stdin closes.
      detached: true,
      // fd 3: the keys, written once below and closed.
      stdio: secrets ? ["pipe", "pipe", "pipe", "pipe"] : ["pipe", "pipe", "pipe"],
    });
  } catch (err) {
    // Arguments node refuses before any process exists (a NUL byte in an argument).
    queueMicrotask(() => report(null, null, (err as Error).message || "could not start the worker"));
    return notStarted(life, steadyNow());
  }
  // A process that never started (ENOENT, EACCES) has no pid and is told as "error".
  proc.on("error", (err) => {
    if (proc.pid === undefined) report(null, null, err.message || "could not start the worker");
  });
  const started = attach(opts, secrets, life, proc.pid, {
    stdin: proc.stdin,
    stdout: proc.stdout,
    stderr: proc.stderr,
    fd3: secrets ? ((proc.stdio[3] as Writable | null | undefined) ?? null) : null,
  });
  proc.on("exit", (code, signal) => {
    if (proc.pid !== undefined) started.exit(code, signal);
  });
  return started.worker;
}

/**
 * The worker started by the launcher: its pid, pipes and exit come from the launcher, so
 * this stands in for it until then (writes wait, a stop waits for the start). Where the
 * launcher cannot serve, the worker is spawned directly instead.
 */
function launchedWorker(
  opts: WorkerProcessOptions,
  secrets: Record<string, string> | undefined,
  life: ExitOnce,
  launcher: WorkerLauncher,
): WorkerProcess {
  const startedAt = steadyNow();
  let inner: WorkerProcess | null = null;
  const pending: unknown[] = [];
  let settle!: (w: WorkerProcess) => void;
  const settled = new Promise<WorkerProcess>((r) => (settle = r));
  let exit: ((code: number | null, signal: string | null) => void) | null = null;
  const become = (w: WorkerProcess) => {
    inner = w;
    for (const value of pending.splice(0)) w.write(value);
    settle(w);
  };
  launcher.launch(
    { file: opts.file, args: opts.args, cwd: opts.cwd, env: workerEnv(opts, secrets), fd3: secrets !== undefined },
    {
      started: (pid, stdio) => {
        // Lowered once it answered: its start no longer needs the session at full weight.
        const started = attach(opts, secrets, life, pid, stdio, () => launcher.settled(pid));
        exit = started.exit;
        opts.onSpawned?.(pid);
        become(started.worker);
      },
      failed: (message) => {
        if (message === null) {
          const direct = directWorker(opts, secrets, life);
          opts.onSpawned?.(direct.pid);
          return become(direct);
        }
        opts.onSpawned?.(undefined);
        life.report(null, null, message);
        become(notStarted(life, startedAt));
      },
      exited: (code, signal) => exit?.(code, signal),
    },
  );
  return {
    get pid() {
      return inner?.pid;
    },
    spawnedLater: true,
    startedAt,
    write: (value) => {
      if (inner) inner.write(value);
      else pending.push(value);
    },
    stop: (teardown) => settled.then((w) => w.stop(teardown)),
    kill: () => settled.then((w) => w.kill()),
    killLeftovers: () => inner?.killLeftovers(),
    lowerPriority: (nice) => inner?.lowerPriority(nice),
    rssBytes: () => inner?.rssBytes() ?? null,
  };
}

/** The worker's environment: the supervisor's, the command's own, and where its keys are. */
function workerEnv(opts: WorkerProcessOptions, secrets: Record<string, string> | undefined): NodeJS.ProcessEnv {
  return { ...process.env, ...opts.env, ...(secrets ? { [SECRETS_FD_VAR]: "3" } : {}) };
}

/** The supervisor's ends of a started worker's pipes. */
interface WorkerStdio {
  stdin: Writable | null;
  stdout: Readable | null;
  stderr: Readable | null;
  fd3: Writable | null;
}

/**
 * Wire a started worker: its keys on fd 3, lines from stdout, stderr text, protocol lines
 * to stdin, teardown of its group. `exit` is to be called with how it ended. `inSession`:
 * it is in the workers' shared session (the launcher's), whose nice is not its own to set,
 * and which hears when it was lowered.
 */
function attach(
  opts: WorkerProcessOptions,
  secrets: Record<string, string> | undefined,
  life: ExitOnce,
  pid: number | undefined,
  stdio: WorkerStdio,
  inSession?: () => void,
): { worker: WorkerProcess; exit: (code: number | null, signal: string | null) => void } {
  const { report, exited } = life;
  const exit = (code: number | null, signal: string | null) => {
    // A usage error's message is the last thing on stderr, which may drain after "exit": wait for it, briefly.
    if (code === USAGE_EXIT_CODE && stdio.stderr && !stdio.stderr.readableEnded) {
      const timer = setTimeout(() => report(code, signal, null), 500);
      stdio.stderr.once("close", () => {
        clearTimeout(timer);
        report(code, signal, null);
      });
    } else report(code, signal, null);
  };
  stdio.stdin?.on("error", () => {});
  if (secrets && stdio.fd3) {
    stdio.fd3.on("error", () => undefined);
    stdio.fd3.end(JSON.stringify(secrets));
  }
  const writer = stdio.stdin ? new JsonlWriter(stdio.stdin) : null;
  const handle: WorkerHandle = {
    pid,
    exited,
    stdin: stdio.stdin,
    sendAbort: () => void writer?.write(opts.abortCommand()),
  };
  if (stdio.stdout) {
    readLines(stdio.stdout, {
      maxLineBytes: opts.maxLineBytes,
      onLine: opts.onLine,
      onError: (err) => opts.onLineTooLong(`worker wrote an oversized stdout line: ${err.message}`, err.head),
    });
  }
  stdio.stderr?.on("data", (chunk: Buffer | string) => opts.onStderr(chunk.toString()));
  const worker: WorkerProcess = {
    pid,
    spawnedLater: false,
    startedAt: steadyNow(),
    write: (value) => void writer?.write(value),
    stop: (teardown) => stopWorker(handle, teardown),
    kill: () => killWorker(handle),
    killLeftovers: () => killGroupLeftovers(handle.pid),
    lowerPriority: (nice) => {
      if (handle.pid !== undefined) lowerWorkerPriority(handle.pid, nice, !inSession);
      inSession?.();
    },
    rssBytes: () => (handle.pid === undefined ? null : groupRssBytes(handle.pid)),
  };
  return { worker, exit };
}
