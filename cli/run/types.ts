/**
 * Types of `pi-orch run`: a task as written in a task file, its live progress, its
 * result, and the report built from the results. Nothing here does I/O.
 */
import type { WorktreeInfo } from "../../shared/schema/agent.js";

/** One task of a task file, validated (see `TaskSchema`). */
export interface RunTask {
  name: string;
  prompt: string;
  /** Working directory (default: the current one); relative paths are relative to it. */
  cwd?: string;
  provider?: string;
  model?: string;
  /** Run in a fresh git worktree of the repository around `cwd`. */
  worktree?: boolean;
  /** Seconds for the whole task, agent and check together. */
  timeout?: number;
  /** Shell command run in the task's directory after the agent settles; exit 0 passes. */
  check?: string;
}

/** Where a task is. The last five are final. */
export type TaskStatus =
  | "pending"
  | "starting"
  | "running"
  | "checking"
  | "passed"
  | "failed"
  | "timed_out"
  | "cancelled"
  | "skipped";

/** Final statuses. */
export const FINAL_STATUSES: ReadonlySet<TaskStatus> = new Set([
  "passed",
  "failed",
  "timed_out",
  "cancelled",
  "skipped",
]);

/** What the live display shows of a task. */
export interface TaskProgress {
  name: string;
  status: TaskStatus;
  turns: number;
  /** Name of the tool running now, if any. */
  tool: string | null;
  startedAt: number | null;
  endedAt: number | null;
  /** The queue worker running it (queue runs only). */
  host?: string;
}

/** Token counts summed over the task's assistant messages, and their cost in dollars as the worker priced them. */
export interface TokenCounts {
  input: number;
  output: number;
  total: number;
  /** Absent in reports written before it was recorded. */
  cost?: number;
}

/** The outcome of a task's `check`. */
export interface CheckResult {
  command: string;
  exitCode: number | null;
  signal: string | null;
  passed: boolean;
  durationMs: number;
  /** The tail of its combined stdout and stderr. */
  output: string;
}

/** Everything known about one task after the run. */
export interface TaskResult {
  name: string;
  prompt: string;
  status: Exclude<TaskStatus, "pending" | "starting" | "running" | "checking">;
  /** Why it did not pass (absent when it passed). */
  reason?: string;
  /** The last assistant text of the run. */
  finalText: string;
  turns: number;
  toolCalls: number;
  tokens: TokenCounts;
  startedAt: number | null;
  durationMs: number;
  cwd: string | null;
  /** Files that differ from the start: from git for worktree tasks, else the paths of edit/write calls. */
  changedFiles: string[] | null;
  check: CheckResult | null;
  sessionFile: string | null;
  /** The worktree, and whether it was kept (`--keep-worktrees`). */
  worktree: (WorktreeInfo & { kept: boolean }) | null;
  /** Times the task was started; above 1 when a queue worker died or `--retries` ran it again (queue runs only). */
  attempts?: number;
  /** The machine (queue worker) that ran the last attempt (queue runs only). */
  host?: string;
  /** `git diff` of a worktree task against its base, so the producer of a queue run has the work of a machine it cannot see. */
  diff?: string;
}

/** The JSON report (`--json`, `--report-json`). */
export interface RunReport {
  version: 1;
  startedAt: string;
  durationMs: number;
  /** True when SIGINT ended the run early; tasks that had not finished are `cancelled` or `skipped`. */
  interrupted: boolean;
  shard: { index: number; total: number } | null;
  /** Tasks in the list before `--shard` picked its slice, so `report merge` can tell a missing task. */
  listed?: number;
  counts: Record<TaskResult["status"], number> & { total: number };
  exitCode: number;
  tasks: TaskResult[];
}
