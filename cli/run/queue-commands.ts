/**
 * The two queue modes of `pi-orch run`: the producer (`TASKS --queue URL`) and the
 * worker (`--worker URL`): which flags belong to which (a flag of the other side is a
 * usage error that says where it goes), signals, progress and the report at the end.
 */
import type { SandboxMode } from "../../shared/sandbox.js";
import { availableParallelism } from "node:os";
import { CliError, colors, type CliContext } from "../context.js";
import { linePrinter, livePrinter, type ProgressPrinter } from "./progress.js";
import { buildReport } from "./report.js";
import { emitReport, type ReportFlags } from "./report-output.js";
import { describeQueue, type QueueAddress } from "./queue-address.js";
import { RUN_ID_PATTERN, runIdOf, withDefaults } from "./queue-jobs.js";
import type { RunTask } from "./types.js";

/** The flags of `pi-orch run` the queue modes look at. */
export interface QueueFlags extends ReportFlags {
  prompt?: string;
  count?: number;
  concurrency?: number;
  worktree?: boolean;
  keepWorktrees?: boolean;
  discardChanges?: boolean;
  timeout?: number;
  provider?: string;
  model?: string;
  workerCommand?: string;
  shard?: unknown;
  failFast?: boolean;
  queue?: QueueAddress;
  worker?: QueueAddress;
  retries?: number;
  runId?: string;
  stallTimeout?: number;
  sandbox?: SandboxMode;
  sandboxWrite?: string[];
  /** `--package SOURCE`, repeatable: pi packages every task's worker loads. */
  package?: string[];
}

const WORKER_FLAGS: [keyof QueueFlags, string][] = [
  ["concurrency", "--concurrency"],
  ["workerCommand", "--worker-command"],
  ["keepWorktrees", "--keep-worktrees"],
  ["discardChanges", "--discard-changes"],
  ["stallTimeout", "--stall-timeout"],
  ["sandbox", "--sandbox"],
  ["sandboxWrite", "--sandbox-write"],
  ["package", "--package"],
];
const PRODUCER_FLAGS: [keyof QueueFlags, string][] = [
  ["prompt", "--prompt"],
  ["count", "--count"],
  ["worktree", "--worktree"],
  ["timeout", "--timeout"],
  ["provider", "--provider"],
  ["model", "--model"],
  ["retries", "--retries"],
  ["runId", "--run-id"],
  ["json", "--json"],
  ["reportJson", "--report-json"],
  ["reportJunit", "--report-junit"],
];

/** Usage errors (exit 2) for flags that do not go together with --queue or --worker. */
export function checkQueueFlags(file: string | undefined, flags: QueueFlags): void {
  const given = (list: [keyof QueueFlags, string][]) =>
    list.filter(([k]) => flags[k] !== undefined).map(([, name]) => name);
  if (flags.queue && flags.worker)
    throw new CliError("--queue (produce tasks) and --worker (run them) are two commands: start them separately", 2);
  if (flags.queue) {
    if (flags.concurrency !== undefined) {
      throw new CliError(
        `--concurrency belongs to the workers, not to the producer: start each worker with pi-orch run --worker ${describeQueue(flags.queue)} --concurrency ${flags.concurrency}`,
        2,
      );
    }
    const wrong = given(WORKER_FLAGS);
    if (wrong.length > 0)
      throw new CliError(
        `${wrong.join(", ")} belong${wrong.length === 1 ? "s" : ""} to the workers: pass ${wrong.length === 1 ? "it" : "them"} to pi-orch run --worker ${describeQueue(flags.queue)}`,
        2,
      );
    if (flags.shard !== undefined)
      throw new CliError(
        "--shard splits a list statically; with --queue the workers share the list as they go: drop --shard",
        2,
      );
    if (flags.failFast)
      throw new CliError("--fail-fast does not work with --queue (workers on other machines keep going); drop it", 2);
    if (flags.runId !== undefined && !RUN_ID_PATTERN.test(flags.runId))
      throw new CliError(`--run-id "${flags.runId}": use 1-64 letters, digits, "_" or "-"`, 2);
    return;
  }
  if (flags.worker) {
    if (file !== undefined)
      throw new CliError(
        `a worker takes its tasks from the queue; give ${file} to the producer: pi-orch run ${file} --queue ${describeQueue(flags.worker)}`,
        2,
      );
    const wrong = given(PRODUCER_FLAGS);
    if (flags.shard !== undefined) wrong.push("--shard");
    if (flags.failFast) wrong.push("--fail-fast");
    if (wrong.length > 0)
      throw new CliError(
        `${wrong.join(", ")} belong${wrong.length === 1 ? "s" : ""} to the producer (pi-orch run TASKS --queue ${describeQueue(flags.worker)}), not to a worker`,
        2,
      );
    return;
  }
  for (const [key, name] of [
    ["retries", "--retries"],
    ["runId", "--run-id"],
  ] as const) {
    if (flags[key] !== undefined) throw new CliError(`${name} goes with --queue`, 2);
  }
  if (flags.stallTimeout !== undefined) throw new CliError("--stall-timeout goes with --worker", 2);
}

/** `pi-orch run TASKS --queue URL`: queue, follow, report; exit codes as a local run. */
export async function runProducer(
  ctx: CliContext,
  listed: RunTask[],
  address: QueueAddress,
  flags: QueueFlags,
): Promise<number> {
  const tasks = listed.map((t) => withDefaults(t, flags));
  const runId = runIdOf(tasks, flags.runId);
  const errColors = colors(Boolean(process.stderr.isTTY) && !process.env.NO_COLOR);
  const printer: ProgressPrinter = process.stderr.isTTY
    ? livePrinter(
        process.stderr,
        tasks.map((t) => t.name),
        errColors,
      )
    : linePrinter((line) => ctx.err(line), errColors);
  // BullMQ and ioredis load only for queue runs, not at every pi-orch start.
  const { QueueProducer } = await import("./queue-producer.js");
  const producer = new QueueProducer({
    address,
    tasks,
    runId,
    retries: flags.retries ?? 0,
    onProgress: (p, statusChanged) => printer.update(p, statusChanged),
    onLog: (line) => ctx.err(`pi-orch: ${line}`),
  });
  const onSignal = (signal: NodeJS.Signals) => {
    ctx.err(
      `pi-orch: ${signal}: no longer waiting; the tasks stay on the queue (run the same command again to collect them)`,
    );
    producer.interrupt(`interrupted (${signal})`);
  };
  const SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of SIGNALS) process.on(s, onSignal);
  let outcome;
  try {
    outcome = await producer.run();
  } catch (err) {
    throw new CliError((err as Error).message);
  } finally {
    for (const s of SIGNALS) process.off(s, onSignal);
    printer.stop();
  }
  return emitReport(ctx, buildReport({ ...outcome, shard: null, listed: tasks.length }), flags);
}

/** Exit codes of a worker stopped by a signal (128 + its number). */
const SIGNAL_EXIT: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

/** `pi-orch run --worker URL`: run tasks from the queue until a signal; exit 130 / 143. */
export async function runWorker(
  ctx: CliContext,
  address: QueueAddress,
  flags: Omit<QueueFlags, "workerCommand"> & { workerCommand?: string[]; packages?: string[] },
): Promise<number> {
  const { QueueWorker } = await import("./queue-worker.js");
  const worker = new QueueWorker({
    address,
    concurrency: flags.concurrency ?? availableParallelism(),
    home: ctx.home(),
    baseDir: process.cwd(),
    workerCommand: flags.workerCommand,
    packages: flags.packages,
    sandbox: flags.sandbox,
    sandboxWrite: flags.sandboxWrite,
    keepWorktrees: flags.keepWorktrees,
    discardChanges: flags.discardChanges,
    stallTimeoutMs: Math.round((flags.stallTimeout ?? 30) * 1000),
    onLog: (line) => ctx.err(`pi-orch: ${line}`),
  });
  let first: NodeJS.Signals | null = null;
  let handingBack = false;
  let stopped!: () => void;
  const done = new Promise<void>((r) => (stopped = r));
  const onSignal = (signal: NodeJS.Signals) => {
    if (first === null) {
      first = signal;
      ctx.err(
        `pi-orch: ${signal}: taking no more tasks; ${worker.active > 0 ? `letting the ${worker.active} running finish (${signal} again hands them back to the queue)` : "none running"}`,
      );
      void worker.drain().then(stopped);
    } else if (!handingBack) {
      handingBack = true;
      ctx.err(
        `pi-orch: ${signal}: handing the running tasks back to the queue (${signal} again exits at once; the queue gives them to another worker after the stall timeout)`,
      );
      void worker.handBack().then(stopped);
    } else {
      process.exit(SIGNAL_EXIT[first] ?? 1);
    }
  };
  const SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of SIGNALS) process.on(s, onSignal);
  try {
    await worker.start();
    await done;
  } finally {
    for (const s of SIGNALS) process.off(s, onSignal);
  }
  const code = SIGNAL_EXIT[first!] ?? 1;
  // Closed, but while Redis is unreachable ioredis may still hold a reconnect timer that keeps
  // the process alive; nothing is left to report, so do not wait for it.
  setTimeout(() => process.exit(code), 1000).unref();
  return code;
}
