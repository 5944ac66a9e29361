/** A task's result before anything of it is known. */
import type { RunTask, TaskResult } from "./types.js";

/**
 * The result of a task that has not run (or whose run is not known yet): zero counts and
 * no paths. Callers spread it and fill in what they learn.
 */
export function blankResult(task: RunTask, status: "cancelled" | "skipped", reason?: string): TaskResult {
  return {
    name: task.name,
    prompt: task.prompt,
    status,
    ...(reason === undefined ? {} : { reason }),
    finalText: "",
    turns: 0,
    toolCalls: 0,
    tokens: { input: 0, output: 0, total: 0, cost: 0 },
    startedAt: null,
    durationMs: 0,
    cwd: null,
    changedFiles: null,
    check: null,
    sessionFile: null,
    worktree: null,
  };
}
