/**
 * The producer of `pi-orch run TASKS --queue redis://HOST:PORT/QUEUE`: puts each task
 * on a BullMQ queue under the job id `<run id>.<task name>` (a re-started producer
 * finds its jobs and adds only the missing ones), follows them (waiting, running on
 * which worker, done) and resolves with one result per task, in list order, for the
 * same report a local run writes.
 *
 * Events give the progress; a sweep of the run's jobs (at start, then every two
 * seconds) is what decides, so a result is never missed while the producer or Redis
 * was away. A job that vanished (Redis restarted without its data) is added again:
 * a task may then run twice, but it is never lost. When every task has a result the
 * run's jobs are removed, so the same command later starts a fresh run.
 */
import { Job, Queue, QueueEvents } from "bullmq";
import { blankResult } from "./blank-result.js";
import { connectionOptions, oncePerOutage } from "./queue-connection.js";
import { describeQueue, type QueueAddress } from "./queue-address.js";
import {
  checkJobData,
  checkJobProgress,
  checkJobResult,
  jobIdOf,
  queueFailureResult,
  sameTask,
  type JobData,
} from "./queue-jobs.js";
import { FINAL_STATUSES, type RunTask, type TaskProgress, type TaskResult } from "./types.js";
import type { TaskRunOutcome } from "./runner.js";

/** Options of a producer. */
export interface QueueProducerOptions {
  address: QueueAddress;
  /** The tasks, the run's defaults already applied. */
  tasks: RunTask[];
  runId: string;
  /** Extra attempts for a task that does not pass (`--retries`). */
  retries: number;
  onProgress?: (progress: Readonly<TaskProgress>, statusChanged: boolean) => void;
  /** One line per event worth a log line (resumed jobs, stalls, Redis lost). */
  onLog: (line: string) => void;
  /** Milliseconds between sweeps of the run's jobs. */
  sweepMs?: number;
}

/** A producer of one run; `run()` once, `interrupt()` to stop waiting. */
export class QueueProducer {
  private readonly progress = new Map<string, TaskProgress>();
  private readonly results = new Map<string, TaskResult>();
  private readonly byJobId = new Map<string, RunTask>();
  private queue: Queue<JobData, TaskResult> | null = null;
  private wake: (() => void) | null = null;
  private interrupted: string | null = null;

  constructor(private readonly opts: QueueProducerOptions) {
    for (const task of opts.tasks) {
      this.byJobId.set(jobIdOf(opts.runId, task.name), task);
      this.progress.set(task.name, {
        name: task.name,
        status: "pending",
        turns: 0,
        tool: null,
        startedAt: null,
        endedAt: null,
      });
    }
  }

  /** Stop waiting: tasks without a result are reported cancelled (running) or skipped (waiting), and stay on the queue. */
  interrupt(reason: string): void {
    this.interrupted = reason;
    this.wake?.();
  }

  /** Queue the tasks (those not queued yet) and wait for every result. */
  async run(): Promise<TaskRunOutcome> {
    const { address } = this.opts;
    const started = Date.now();
    const logError = oncePerOutage((message) =>
      this.opts.onLog(`queue ${describeQueue(address)}: ${message} (reconnecting)`),
    );
    const queue = new Queue<JobData, TaskResult>(address.queue, { connection: connectionOptions(address) });
    const events = new QueueEvents(address.queue, { connection: connectionOptions(address) });
    this.queue = queue;
    queue.on("error", logError);
    events.on("error", logError);
    let sweeper: NodeJS.Timeout | undefined;
    try {
      await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
      this.listen(events);
      const firstAdded = await this.enqueue(queue);
      await this.sweep();
      sweeper = setInterval(() => void this.sweep().catch(logError), this.opts.sweepMs ?? 2000);
      while (this.results.size < this.opts.tasks.length && this.interrupted === null) {
        await new Promise<void>((r) => (this.wake = r));
      }
      clearInterval(sweeper);
      const results = this.opts.tasks.map((t) => this.results.get(t.name) ?? this.unfinished(t));
      if (this.interrupted === null) await this.removeJobs(queue);
      const startedAt = Math.min(started, firstAdded);
      return { results, interrupted: this.interrupted !== null, startedAt, durationMs: Date.now() - startedAt };
    } finally {
      clearInterval(sweeper);
      await Promise.allSettled([events.close(), queue.close()]);
    }
  }

  /** Add the run's jobs that are not on the queue yet; returns when the run was first queued. */
  private async enqueue(queue: Queue<JobData, TaskResult>): Promise<number> {
    const { runId, tasks } = this.opts;
    const existing = await Promise.all(
      tasks.map((t) => Job.fromId<JobData, TaskResult>(queue, jobIdOf(runId, t.name))),
    );
    let first = Date.now();
    const missing: RunTask[] = [];
    tasks.forEach((task, i) => {
      const job = existing[i];
      if (!job) return missing.push(task);
      const data = checkJobData(job.data);
      if (!data.ok || !sameTask(data.value.task, task)) {
        throw new Error(
          `run ${runId} already has a task "${task.name}" on ${describeQueue(this.opts.address)} that differs from this one; pass another --run-id for a new run`,
        );
      }
      first = Math.min(first, job.timestamp);
    });
    if (missing.length > 0) await this.add(queue, missing);
    const resumed = tasks.length - missing.length;
    this.opts.onLog(
      resumed > 0
        ? `run ${runId}: ${resumed} of ${tasks.length} tasks were already queued (resuming), ${missing.length} added to ${describeQueue(this.opts.address)}`
        : `run ${runId}: ${tasks.length} tasks queued on ${describeQueue(this.opts.address)}; start workers with pi-orch run --worker ${describeQueue(this.opts.address)}`,
    );
    return first;
  }

  private async add(queue: Queue<JobData, TaskResult>, tasks: readonly RunTask[]): Promise<void> {
    const { runId, retries } = this.opts;
    await queue.addBulk(
      tasks.map((task) => ({
        name: task.name,
        data: { runId, task },
        opts: { jobId: jobIdOf(runId, task.name), attempts: retries + 1, removeOnComplete: false, removeOnFail: false },
      })),
    );
  }

  private listen(events: QueueEvents): void {
    events.on("active", ({ jobId }) => {
      const task = this.byJobId.get(jobId);
      if (task) this.setProgress(task.name, { status: "starting", startedAt: Date.now(), turns: 0, tool: null });
    });
    events.on("progress", ({ jobId, data }) => {
      const task = this.byJobId.get(jobId);
      const p = checkJobProgress(data);
      if (task && p.ok) this.setProgress(task.name, p.value);
    });
    events.on("stalled", ({ jobId }) => {
      const task = this.byJobId.get(jobId);
      if (!task) return;
      const host = this.progress.get(task.name)?.host;
      this.opts.onLog(
        `${task.name}: its worker${host ? ` ${host}` : ""} stopped answering; the task is back on the queue for another worker`,
      );
      this.setProgress(task.name, { status: "pending", tool: null });
    });
    const settle = ({ jobId }: { jobId: string }) => {
      if (this.byJobId.has(jobId)) void this.collect(jobId).catch(() => {});
    };
    events.on("completed", settle);
    events.on("failed", settle);
    events.on("waiting", ({ jobId }) => {
      const task = this.byJobId.get(jobId);
      if (task && this.progress.get(task.name)?.status !== "pending")
        this.setProgress(task.name, { status: "pending", tool: null });
    });
  }

  private setProgress(name: string, change: Partial<TaskProgress>): void {
    const p = this.progress.get(name);
    if (!p || FINAL_STATUSES.has(p.status)) return;
    const statusChanged = change.status !== undefined && change.status !== p.status;
    const before = `${p.turns}\0${p.tool}\0${p.host}`;
    Object.assign(p, change);
    if (statusChanged || before !== `${p.turns}\0${p.tool}\0${p.host}`) this.opts.onProgress?.(p, statusChanged);
  }

  /** Look at every job still without a result. */
  private async sweep(): Promise<void> {
    const open = [...this.byJobId].filter(([, t]) => !this.results.has(t.name));
    await Promise.all(open.map(([jobId]) => this.collect(jobId)));
  }

  /** Record a job's result if it has one; add it again if it vanished. */
  private async collect(jobId: string): Promise<void> {
    const task = this.byJobId.get(jobId)!;
    if (this.results.has(task.name) || !this.queue) return;
    // The state first: once it is final the job's fields are too (read the other way round,
    // a job that finishes in between looks completed without its result).
    const state = await this.queue.getJobState(jobId);
    if (this.results.has(task.name)) return;
    if (state === "unknown") {
      this.opts.onLog(
        `${task.name}: its job is gone from Redis (restarted without persistence? see "appendonly"); adding it again`,
      );
      await this.add(this.queue, [task]);
      this.setProgress(task.name, { status: "pending", tool: null });
      return;
    }
    if (state !== "completed" && state !== "failed") return;
    const job = await Job.fromId<JobData, TaskResult>(this.queue, jobId);
    if (this.results.has(task.name) || !job) return;
    let result: TaskResult;
    if (state === "completed") {
      const checked = checkJobResult(job.returnvalue);
      result = checked.ok
        ? (checked.value as TaskResult)
        : queueFailureResult(
            task,
            `the worker sent a result this producer cannot read (${checked.errors[0]})`,
            job.attemptsStarted || 1,
          );
    } else {
      result = queueFailureResult(task, job.failedReason, job.attemptsStarted || 1);
    }
    this.results.set(task.name, result);
    const p = this.progress.get(task.name)!;
    if (p.startedAt === null && result.startedAt !== null) p.startedAt = result.startedAt;
    this.setProgress(task.name, {
      status: result.status,
      endedAt: Date.now(),
      tool: null,
      turns: result.turns,
      ...(result.host ? { host: result.host } : {}),
    });
    this.wake?.();
  }

  private unfinished(task: RunTask): TaskResult {
    const p = this.progress.get(task.name)!;
    const running = p.status !== "pending";
    const where = running && p.host ? ` (running on ${p.host})` : "";
    return {
      ...blankResult(
        task,
        running ? "cancelled" : "skipped",
        `${this.interrupted}: the task is still on the queue${where}; run the same command again to collect its result`,
      ),
      startedAt: p.startedAt,
    };
  }

  private async removeJobs(queue: Queue<JobData, TaskResult>): Promise<void> {
    await Promise.all(
      [...this.byJobId.keys()].map(async (jobId) => {
        try {
          await (await Job.fromId(queue, jobId))?.remove();
        } catch (err) {
          this.opts.onLog(`could not remove job ${jobId} from the queue: ${(err as Error).message}`);
        }
      }),
    );
  }
}
