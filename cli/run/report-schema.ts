/**
 * TypeBox schemas of a task result and of the JSON report, for the places a report or
 * result comes in from outside the process: `pi-orch report merge` reading shard
 * reports, and a queue producer reading results a worker sent through Redis.
 * Fields a newer writer adds are let through; fields this reader needs are checked.
 */
import * as Type from "typebox/type";

const Status = Type.Union(["passed", "failed", "timed_out", "cancelled", "skipped"].map((s) => Type.Literal(s)));
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

/** A task's check as reports carry it. */
export const CheckResultSchema = Type.Object({
  command: Type.String(),
  exitCode: Nullable(Type.Number()),
  signal: Nullable(Type.String()),
  passed: Type.Boolean(),
  durationMs: Type.Number(),
  output: Type.String(),
});

/** One task's result (`TaskResult`). */
export const TaskResultSchema = Type.Object({
  name: Type.String({ minLength: 1 }),
  prompt: Type.String(),
  status: Status,
  reason: Type.Optional(Type.String()),
  finalText: Type.String(),
  turns: Type.Number(),
  toolCalls: Type.Number(),
  tokens: Type.Object({
    input: Type.Number(),
    output: Type.Number(),
    total: Type.Number(),
    cost: Type.Optional(Type.Number()),
  }),
  startedAt: Nullable(Type.Number()),
  durationMs: Type.Number(),
  cwd: Nullable(Type.String()),
  changedFiles: Nullable(Type.Array(Type.String())),
  check: Nullable(CheckResultSchema),
  sessionFile: Nullable(Type.String()),
  worktree: Nullable(
    Type.Object({
      path: Type.String(),
      branch: Type.String(),
      base: Type.String(),
      repo: Type.String(),
      kept: Type.Boolean(),
    }),
  ),
  attempts: Type.Optional(Type.Integer({ minimum: 1 })),
  host: Type.Optional(Type.String()),
  diff: Type.Optional(Type.String()),
});

/** The JSON report (`RunReport`). */
export const RunReportSchema = Type.Object({
  version: Type.Literal(1),
  startedAt: Type.String(),
  durationMs: Type.Number({ minimum: 0 }),
  interrupted: Type.Boolean(),
  shard: Nullable(Type.Object({ index: Type.Integer({ minimum: 1 }), total: Type.Integer({ minimum: 1 }) })),
  listed: Type.Optional(Type.Integer({ minimum: 0 })),
  counts: Type.Object({
    total: Type.Number(),
    passed: Type.Number(),
    failed: Type.Number(),
    timed_out: Type.Number(),
    cancelled: Type.Number(),
    skipped: Type.Number(),
  }),
  exitCode: Type.Number(),
  tasks: Type.Array(TaskResultSchema),
});
