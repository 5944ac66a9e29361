/**
 * What goes through the queue of `pi-orch run --queue` / `--worker`, and the pure rules
 * around it (the address is in queue-address.ts): the run id and job ids
 * that make a re-started producer find its jobs instead of adding them again, the
 * job's data and progress (checked with TypeBox when they come out of Redis), and the
 * result a producer records for a job the queue itself gave up on. No I/O.
 */
import { createHash } from "node:crypto";
import type { Static } from "typebox";
import * as Type from "typebox/type";
import { checker } from "../../shared/validate.js";
import { blankResult } from "./blank-result.js";
import { TaskResultSchema } from "./report-schema.js";
import { TaskSchema } from "./tasks.js";
import type { RunTask, TaskResult } from "./types.js";

/** A task as a worker receives it: the run's defaults already applied by the producer. */
export const JobDataSchema = Type.Object({
  runId: Type.String({ minLength: 1 }),
  task: TaskSchema,
});
export type JobData = Static<typeof JobDataSchema>;

/** What a worker reports while a task runs (BullMQ job progress). */
export const JobProgressSchema = Type.Object({
  status: Type.Union([Type.Literal("starting"), Type.Literal("running"), Type.Literal("checking")]),
  turns: Type.Number(),
  tool: Type.Union([Type.String(), Type.Null()]),
  host: Type.String(),
  startedAt: Type.Number(),
});
export type JobProgress = Static<typeof JobProgressSchema>;

/** A job's result as it comes back from Redis. */
export const checkJobResult = checker(TaskResultSchema);
/** A job's data as it comes out of Redis. */
export const checkJobData = checker(JobDataSchema);
/** A job's progress as it comes out of Redis. */
export const checkJobProgress = checker(JobProgressSchema);

/**
 * The run id: given (`--run-id`), else a hash of the tasks as the workers will get
 * them, so running the same command again after a crash finds the same jobs.
 */
export function runIdOf(tasks: readonly RunTask[], given?: string): string {
  if (given !== undefined) return given;
  return createHash("sha256").update(JSON.stringify(tasks)).digest("hex").slice(0, 16);
}

/** A job's id: the run id and the task name (BullMQ refuses ":" in custom ids). */
export function jobIdOf(runId: string, taskName: string): string {
  return `${runId}.${taskName}`;
}

/** Run ids may be chosen (`--run-id $GITHUB_RUN_ID`): letters, digits, "_" and "-". */
export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** A task with the run's defaults filled in, as the producer puts it on the queue. */
export function withDefaults(
  task: RunTask,
  defaults: { provider?: string; model?: string; worktree?: boolean; timeout?: number },
): RunTask {
  const out: RunTask = { ...task };
  if (out.provider === undefined && defaults.provider !== undefined) out.provider = defaults.provider;
  if (out.model === undefined && defaults.model !== undefined) out.model = defaults.model;
  if (out.worktree === undefined && defaults.worktree !== undefined) out.worktree = defaults.worktree;
  if (out.timeout === undefined && defaults.timeout !== undefined) out.timeout = defaults.timeout;
  return out;
}

/** The result recorded for a job BullMQ moved to failed (its worker died too often, or threw). */
export function queueFailureResult(task: RunTask, failedReason: string | undefined, attempts: number): TaskResult {
  return {
    ...blankResult(task, "cancelled", ""),
    status: "failed",
    reason: `the queue gave up on it after ${attempts} attempt${attempts === 1 ? "" : "s"}: ${failedReason || "no reason given"}`,
    attempts,
  };
}

/** Whether two tasks are the same job (a re-used `--run-id` with a changed task is an error, not a silent stale result). */
export function sameTask(a: RunTask, b: RunTask): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]) as Set<keyof RunTask>;
  for (const k of keys) if (a[k] !== b[k]) return false;
  return true;
}
