/**
 * What `pi-orch run` does (its flags and help are in cli/commands/run.ts): load the tasks,
 * then run them here with an in-process supervisor, or put them on a queue (`--queue`),
 * or take them from one (`--worker`).
 */
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { splitCommandLine } from "../../supervisor/worker-command.js";
import { CliError, colors, type CliContext } from "../context.js";
import { prepareFleetPackages } from "../fleet-packages.js";
import { linePrinter, livePrinter, type ProgressPrinter } from "./progress.js";
import { checkQueueFlags, runProducer, runWorker, type QueueFlags } from "./queue-commands.js";
import { buildReport } from "./report.js";
import { emitReport } from "./report-output.js";
import { TaskRun } from "./runner.js";
import { selectShard, type Shard } from "./shard.js";
import { loadTaskFile, promptTasks, TaskFileError } from "./tasks.js";
import type { RunTask } from "./types.js";

/** The flags of `pi-orch run`, as commander parsed them. */
export interface RunFlags extends QueueFlags {
  clean?: boolean;
  shard?: Shard;
}

async function loadTasks(file: string | undefined, flags: RunFlags): Promise<RunTask[]> {
  if (file !== undefined && flags.prompt !== undefined)
    throw new CliError("give a tasks file or --prompt, not both", 2);
  if (flags.count !== undefined && flags.prompt === undefined)
    throw new CliError("--count goes with --prompt (a tasks file lists its tasks)", 2);
  if (flags.prompt !== undefined) {
    if (flags.prompt.trim() === "") throw new CliError("--prompt is empty", 2);
    return promptTasks(flags.prompt, flags.count ?? 1);
  }
  if (file === undefined)
    throw new CliError('nothing to run: give a tasks file (pi-orch run tasks.json) or --prompt "TEXT" [--count N]', 2);
  try {
    return await loadTaskFile(file);
  } catch (err) {
    if (err instanceof TaskFileError) throw new CliError(err.message, 2);
    throw err;
  }
}

function parseWorkerCommand(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  let argv: string[];
  try {
    argv = splitCommandLine(text);
  } catch (err) {
    throw new CliError(`--worker-command: ${(err as Error).message}`, 2);
  }
  if (argv.length === 0)
    throw new CliError('--worker-command is empty; pass a program, e.g. --worker-command "pi --mode rpc"', 2);
  return argv;
}

/** Run `pi-orch run`: as a queue worker, as a queue producer, or here with an in-process supervisor. */
export async function runCommand(ctx: CliContext, file: string | undefined, flags: RunFlags): Promise<number> {
  checkQueueFlags(file, flags);
  // One install for every task's worker, before any starts.
  const packages = flags.package?.length
    ? await prepareFleetPackages(flags.package, { home: ctx.home(), cwd: process.cwd(), log: (l) => ctx.err(l) })
    : undefined;
  if (flags.worker)
    return runWorker(ctx, flags.worker, {
      ...flags,
      packages,
      workerCommand: parseWorkerCommand(flags.workerCommand),
      sandboxWrite: flags.sandboxWrite?.map((d) => resolve(d)),
    });
  if (flags.queue) return runProducer(ctx, await loadTasks(file, flags), flags.queue, flags);
  const all = await loadTasks(file, flags);
  const workerCommand = parseWorkerCommand(flags.workerCommand);
  const shard = flags.shard ?? null;
  const tasks = selectShard(all, shard);
  const errColors = colors(Boolean(process.stderr.isTTY) && !process.env.NO_COLOR);
  if (tasks.length === 0)
    ctx.err(`pi-orch: shard ${shard!.index}/${shard!.total} has no tasks (the list has ${all.length}); nothing to do`);

  const printer: ProgressPrinter =
    process.stderr.isTTY && tasks.length > 0
      ? livePrinter(
          process.stderr,
          tasks.map((t) => t.name),
          errColors,
        )
      : linePrinter((line) => ctx.err(line), errColors);
  const run = new TaskRun({
    tasks,
    concurrency: flags.concurrency ?? availableParallelism(),
    home: ctx.home(),
    defaults: { provider: flags.provider, model: flags.model, worktree: flags.worktree, timeout: flags.timeout },
    failFast: flags.failFast,
    keepWorktrees: flags.keepWorktrees,
    discardChanges: flags.discardChanges,
    existingWorktrees: flags.clean ? "replace" : "reuse",
    workerCommand,
    packages,
    sandbox: flags.sandbox,
    sandboxWrite: flags.sandboxWrite?.map((d) => resolve(d)),
    onProgress: (p, statusChanged) => printer.update(p, statusChanged),
    onWarning: (message) => ctx.err(`pi-orch: warning: ${message}`),
  });

  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals === 1) {
      ctx.err(`pi-orch: ${signal}: stopping the running tasks and writing what finished (again to kill them at once)`);
      run.interrupt(`interrupted (${signal})`);
    } else void run.kill();
  };
  const SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of SIGNALS) process.on(s, onSignal);
  let outcome;
  try {
    outcome = await run.run();
  } finally {
    for (const s of SIGNALS) process.off(s, onSignal);
    printer.stop();
  }

  return emitReport(ctx, buildReport({ ...outcome, shard, listed: all.length }), flags);
}
