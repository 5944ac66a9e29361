/**
 * `pi-orch run`: fan a task list out over agents with an in-process supervisor (no
 * daemon, no socket), show progress, print a summary, write JSON/JUnit reports, and
 * exit 0 (all passed), 1 (any failed or timed out), 2 (usage or task file), 130 (SIGINT).
 * Here its flags and help; what it does is in cli/run/run-command.ts.
 */
import { availableParallelism } from "node:os";
import { InvalidArgumentError, type Command } from "commander";
import { runAction, type CliContext } from "../context.js";
import { parseShard, type Shard } from "../run/shard.js";
import { parseQueueUrl, type QueueAddress } from "../run/queue-address.js";
import type { RunFlags } from "../run/run-command.js";
import { collect, nonNegativeInt, positiveInt, SANDBOX_HELP, sandboxOption } from "./options.js";

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
    .action((file: string | undefined, flags: RunFlags) =>
      // The runner, the in-process supervisor and the queue load only for a run.
      runAction(ctx, async () => (await import("../run/run-command.js")).runCommand(ctx, file, flags)),
    );
}
