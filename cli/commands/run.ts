/**
 * `pi-orch run`: fan a task list out over agents with an in-process supervisor (no
 * daemon, no socket), show progress, print a summary, write JSON/JUnit reports, and
 * exit 0 (all passed), 1 (any failed or timed out), 2 (usage or task file), 130 (SIGINT).
 */
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { InvalidArgumentError, type Command } from "commander";
import { splitCommandLine } from "../../supervisor/worker-command.js";
import { CliError, colors, runAction, type CliContext } from "../context.js";
import { linePrinter, livePrinter, type ProgressPrinter } from "../run/progress.js";
import { buildReport } from "../run/report.js";
import { TaskRun } from "../run/runner.js";
import { parseShard, selectShard, type Shard } from "../run/shard.js";
import { emitReport } from "../run/report-output.js";
import { loadTaskFile, promptTasks, TaskFileError } from "../run/tasks.js";
import type { RunTask } from "../run/types.js";
import { parseQueueUrl, type QueueAddress } from "../run/queue-jobs.js";
import { checkQueueFlags, runProducer, runWorker, type QueueFlags } from "../run/queue-commands.js";
import { prepareFleetPackages } from "../fleet-packages.js";
import { collect, nonNegativeInt, positiveInt, SANDBOX_HELP, sandboxOption } from "./options.js";

interface RunFlags extends QueueFlags {
  clean?: boolean;
  shard?: Shard;
}

function seconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new InvalidArgumentError(`expected a number of seconds above 0, got "${value}"`);
  return n;
}

function queueOption(value: string): QueueAddress {
  try {
    return parseQueueUrl(value);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

function shardOption(value: string): Shard {
  try {
    return parseShard(value);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

/** Register `run`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command("run")
    .argument("[tasks-file]", "tasks: a JSON array, a JSONL file, or a .ts/.js module default-exporting the array")
    .description("run many tasks in parallel, each in its own agent (and worktree), then check, summarise and report")
    .option("--prompt <text>", "run this one prompt instead of a task file")
    .option("--count <n>", "with --prompt: run it N times (tasks task-1 … task-N)", positiveInt)
    .option("--concurrency <n>", `tasks at once (default: the number of CPUs, ${availableParallelism()})`, positiveInt)
    .option("--worktree", 'run every task in its own git worktree (a task\'s own "worktree" field wins)')
    .option("--keep-worktrees", "leave the worktrees and their branches in place when done")
    .option(
      "--discard-changes",
      "remove every worktree when done, uncommitted changes included (CI runs that keep only reports)",
    )
    .option(
      "--clean",
      "start afresh: remove the worktrees and branches an earlier run left for these tasks, changes included (default: continue in them)",
    )
    .option("--timeout <seconds>", "per task, agent and check together; then the task is aborted and fails", seconds)
    .option("--provider <name>", "default provider of the tasks (anthropic, openai, faux, or one from models.json)")
    .option("--model <id>", "default model of the tasks")
    .option("--worker-command <cmd>", 'a pi-compatible worker instead of the built-in one, e.g. "pi --mode rpc"')
    .addOption(sandboxOption())
    .option("--sandbox-write <dir>", "with the sandbox: one more folder the agents may write to (repeatable)", collect)
    .option(
      "--package <source>",
      "a pi package every task's agent loads (npm:NAME, git:HOST/OWNER/REPO, a folder; repeatable), installed once first",
      collect,
    )
    .option(
      "--shard <I/N>",
      "run only the I-th of N deterministic slices of the task list (for a CI matrix)",
      shardOption,
    )
    .option("--fail-fast", "stop everything after the first task that fails")
    .option("--json", "print the JSON report on stdout instead of the summary")
    .option("--report-json <file>", "write the JSON report to this file")
    .option("--report-junit <file>", "write a JUnit XML report (one test case per task) to this file")
    .option(
      "--queue <redis://host:port/queue>",
      "put the tasks on a Redis (BullMQ) queue for --worker processes on any machine, and report when all are done",
      queueOption,
    )
    .option("--retries <n>", "with --queue: run a task that did not pass up to N more times", nonNegativeInt)
    .option(
      "--run-id <id>",
      "with --queue: the run's id (default: a hash of the tasks, so the same command resumes a run after a crash)",
    )
    .option(
      "--worker <redis://host:port/queue>",
      "take tasks from that queue and run them here until SIGINT/SIGTERM",
      queueOption,
    )
    .option(
      "--stall-timeout <seconds>",
      "with --worker: a task whose worker has been silent this long goes to another worker (default 30)",
      seconds,
    )
    .addHelpText(
      "after",
      `
A task is {name, prompt, cwd?, provider?, model?, worktree?, timeout?, check?}.
"check" is a shell command run in the task's folder after the agent finished; its
exit code decides pass or fail. Relative "cwd"s are relative to the current folder.
Workers keep their sessions under the pi-orch home (--home); the run's own state
lives in a temp folder that is removed at the end. Clean worktrees are removed when
a task is done (its branch too, unless the agent committed on it); one with changes
is kept and named in the summary; --keep-worktrees
leaves them for pi-orch worktrees diff or git. A re-run continues in the worktree an
earlier run left for a task; --clean removes it (and its branch) first. See them with
pi-orch worktrees list.

Exit codes: 0 every task passed, 1 a task failed or timed out, 2 a usage or task-file
error (the message names the task and the field), 130 interrupted by Ctrl-C (the
running tasks are stopped and the reports hold what finished).

${SANDBOX_HELP}

More than one machine: the producer (pi-orch run TASKS --queue URL) queues the tasks
and writes the reports; each machine runs pi-orch run --worker URL [--concurrency N]
(worker flags: --concurrency, --worker-command, --keep-worktrees, --discard-changes,
--stall-timeout, --sandbox, --sandbox-write). A worker stops taking tasks on SIGINT/SIGTERM and lets its running
tasks finish (a second signal hands them back to the queue), then exits 130/143.

Examples:
  pi-orch run --provider faux --prompt "list the files" --count 4
  pi-orch run tasks.json --worktree --concurrency 8 --timeout 600 --report-junit junit.xml
  pi-orch run tasks.ts --shard 2/4 --fail-fast --json > report.json
  pi-orch run tasks.json --queue redis://10.0.0.5:6379/agents --report-junit junit.xml
  pi-orch run --worker redis://10.0.0.5:6379/agents --concurrency 4`,
    )
    .action((file: string | undefined, flags: RunFlags) => runAction(ctx, () => runCommand(ctx, file, flags)));
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

async function runCommand(ctx: CliContext, file: string | undefined, flags: RunFlags): Promise<number> {
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
