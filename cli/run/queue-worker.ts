/**
 * The consumer of `pi-orch run --worker redis://HOST:PORT/QUEUE`: a BullMQ worker that
 * takes tasks while it has free slots and runs each exactly as a local `pi-orch run`
 * task (a `TaskRun` of one: worktree, timeout, check), reports progress and the host
 * while it runs, and completes the job with the task's result, worktree diff included.
 *
 * Failure semantics: a task that does not pass completes its job with the failed result
 * (no retry) unless the job has attempts left (`--retries`), then it is thrown so BullMQ
 * runs it again. A worker that dies loses its job lock; after the stall timeout another
 * worker's stalled check puts the job back on the queue. `drain()` stops taking work and
 * lets the running tasks finish; `handBack()` aborts them and moves their jobs back to
 * waiting, so no task is lost and none runs twice to completion.
 */
import type { SandboxMode } from "../../shared/sandbox.js";
import { hostname } from "node:os";
import { Worker, WaitingError, UnrecoverableError, type Job } from "bullmq";
import { connectionOptions, oncePerOutage } from "./queue-connection.js";
import { describeQueue, type QueueAddress } from "./queue-address.js";
import { checkJobData, type JobData, type JobProgress } from "./queue-jobs.js";
import { TaskRun } from "./runner.js";
import { formatDuration } from "./summary.js";
import type { TaskResult } from "./types.js";

/** Options of a queue worker. */
export interface QueueWorkerOptions {
  address: QueueAddress;
  /** Tasks at once. */
  concurrency: number;
  /** The pi-orch home (sessions, models.json, worktrees). */
  home: string;
  /** Relative task `cwd`s are resolved against this folder (this machine's checkout). */
  baseDir: string;
  workerCommand?: string[];
  /** pi package sources every task's worker loads (installed once, cli/fleet-packages.ts). */
  packages?: string[];
  /** The sandbox of every task's agent (default: the supervisor's). */
  sandbox?: SandboxMode;
  sandboxWrite?: string[];
  keepWorktrees?: boolean;
  discardChanges?: boolean;
  /** A job whose worker has not renewed its lock for this long is given to another worker. */
  stallTimeoutMs: number;
  /** The name the producer shows for this worker (default `HOST:PID`). */
  host?: string;
  /** One line per event worth a log line (a task taken, finished, handed back; Redis lost). */
  onLog: (line: string) => void;
}

interface Running {
  run: TaskRun;
  handedBack: boolean;
}

/** Longest diff sent back through Redis; a larger one is cut (the worktree keeps the whole). */
const MAX_DIFF = 1_000_000;

/** One queue worker; `start()` once, then `drain()` or `handBack()` to end it. */
export class QueueWorker {
  readonly host: string;
  private worker: Worker<JobData, TaskResult> | null = null;
  private readonly running = new Map<string, Running>();
  private closing: Promise<void> | null = null;

  constructor(private readonly opts: QueueWorkerOptions) {
    this.host = opts.host ?? `${hostname()}:${process.pid}`;
  }

  /** Connect and start taking tasks; resolves once connected. */
  async start(): Promise<void> {
    const { address } = this.opts;
    const worker = new Worker<JobData, TaskResult>(address.queue, (job, token) => this.process(job, token), {
      connection: connectionOptions(address),
      concurrency: this.opts.concurrency,
      lockDuration: this.opts.stallTimeoutMs,
      stalledInterval: Math.max(500, Math.round(this.opts.stallTimeoutMs / 2)),
      // A job whose worker died twice is more likely to kill workers than to have been unlucky.
      maxStalledCount: 2,
      autorun: false,
    });
    this.worker = worker;
    worker.on(
      "error",
      oncePerOutage((message) => this.opts.onLog(`queue ${describeQueue(address)}: ${message} (reconnecting)`)),
    );
    await worker.waitUntilReady();
    void worker.run().catch((err: Error) => this.opts.onLog(`the worker stopped: ${err.message}`));
    this.opts.onLog(
      `worker ${this.host} takes tasks from ${describeQueue(address)} (concurrency ${this.opts.concurrency})`,
    );
  }

  /** Tasks running now. */
  get active(): number {
    return this.running.size;
  }

  /** Stop taking work; resolves when the running tasks finished and the connection is closed. */
  drain(): Promise<void> {
    // With nothing running there is nothing to report back: close at once, even while Redis is unreachable
    // (a graceful close would wait for it to come back).
    this.closing ??= (this.worker?.close(this.running.size === 0) ?? Promise.resolve()).then(() => undefined);
    return this.closing;
  }

  /** Abort the running tasks and put their jobs back on the queue for another worker; resolves when closed. */
  handBack(): Promise<void> {
    for (const r of this.running.values()) {
      r.handedBack = true;
      r.run.interrupt("handed back to the queue: the worker is stopping");
    }
    return this.drain();
  }

  private async process(job: Job<JobData, TaskResult>, token: string | undefined): Promise<TaskResult> {
    const checked = checkJobData(job.data);
    if (!checked.ok) throw new UnrecoverableError(`job ${job.id} is not a pi-orch task: ${checked.errors.join("; ")}`);
    const { task } = checked.value;
    const jobId = job.id ?? task.name;
    const started = Date.now();
    const attempt = job.attemptsStarted;
    this.opts.onLog(`${task.name}: started${attempt > 1 ? ` (attempt ${attempt})` : ""}`);
    const send = (p: JobProgress) => void job.updateProgress(p).catch(() => {});
    const run = new TaskRun({
      tasks: [task],
      concurrency: 1,
      home: this.opts.home,
      baseDir: this.opts.baseDir,
      workerCommand: this.opts.workerCommand,
      packages: this.opts.packages,
      sandbox: this.opts.sandbox,
      sandboxWrite: this.opts.sandboxWrite,
      keepWorktrees: this.opts.keepWorktrees,
      discardChanges: this.opts.discardChanges,
      captureDiff: true,
      onProgress: (p) => {
        if (p.status === "starting" || p.status === "running" || p.status === "checking") {
          send({ status: p.status, turns: p.turns, tool: p.tool, host: this.host, startedAt: p.startedAt ?? started });
        }
      },
      onWarning: (message) => this.opts.onLog(`warning: ${message}`),
    });
    const entry: Running = { run, handedBack: false };
    this.running.set(jobId, entry);
    let result: TaskResult;
    try {
      result = (await run.run()).results[0];
    } finally {
      this.running.delete(jobId);
    }
    if (entry.handedBack) {
      await job.moveToWait(token);
      this.opts.onLog(`${task.name}: handed back to the queue`);
      throw new WaitingError();
    }
    const diff =
      result.diff !== undefined && result.diff.length > MAX_DIFF
        ? `${result.diff.slice(0, MAX_DIFF)}\n… (cut at ${MAX_DIFF} characters; the whole diff is in ${result.worktree?.path ?? "the worktree"})\n`
        : result.diff;
    const out: TaskResult = { ...result, ...(diff !== undefined ? { diff } : {}), attempts: attempt, host: this.host };
    const verdict = `${task.name}: ${out.status.replace("_", " ")} after ${formatDuration(Date.now() - started)}`;
    if (out.status !== "passed" && job.attemptsMade + 1 < (job.opts.attempts ?? 1)) {
      this.opts.onLog(`${verdict}; retrying (${job.attemptsMade + 1} of ${job.opts.attempts} attempts used)`);
      throw new Error(out.reason ?? out.status);
    }
    this.opts.onLog(verdict);
    return out;
  }
}
