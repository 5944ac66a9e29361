/**
 * The engine of `pi-orch run`: an in-process supervisor (no daemon, no socket) in a
 * private temp folder, a pool of at most `concurrency` tasks, and per task: spawn an
 * agent (in its own worktree when asked), prompt it, follow its events until the run
 * ends, run the check, record the result, and clean up. Workers are reached only
 * through the supervisor, so any pi-compatible worker command works.
 */
import type { SandboxMode } from "../../shared/sandbox.js";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";
import { Supervisor } from "../../supervisor/supervisor.js";
import { RUNNING_STATUSES, type AgentInfo } from "../../shared/schema/agent.js";
import type { AgentTimings } from "../../supervisor/types.js";
import { changedFiles, diffWorktree, findRepository, worktreePath } from "../../supervisor/worktrees.js";
import { keyAdvice } from "../key-advice.js";
import { blankResult } from "./blank-result.js";
import { runCheck } from "./check.js";
import { RunTracker, type RunEnd } from "./tracker.js";
import {
  FINAL_STATUSES,
  type CheckResult,
  type RunTask,
  type TaskProgress,
  type TaskResult,
  type TaskStatus,
} from "./types.js";
import { readPromptAnswer, readRpcAnswer } from "../../shared/schema/rpc.js";

/** Defaults applied to tasks that do not set the field themselves. */
export interface TaskDefaults {
  provider?: string;
  model?: string;
  worktree?: boolean;
  /** Seconds per task. */
  timeout?: number;
}

/** Options of a run. */
export interface TaskRunOptions {
  tasks: RunTask[];
  /** Tasks running at once (at least 1). */
  concurrency: number;
  /** The pi-orch home: workers keep sessions and read models.json there; worktrees go to `<home>/worktrees`. */
  home: string;
  defaults?: TaskDefaults;
  /** Stop everything after the first task that does not pass. */
  failFast?: boolean;
  /** Leave worktrees (and their branches) in place for inspection. */
  keepWorktrees?: boolean;
  /** Remove every worktree at the end, uncommitted changes included (`--discard-changes`). */
  discardChanges?: boolean;
  /**
   * A worktree an earlier run left for a task (kept for its changes or `--keep-worktrees`):
   * `reuse` continues in it as it is (the default), `replace` (`--clean`) removes it and its branch first.
   */
  existingWorktrees?: "reuse" | "replace";
  /** argv of a pi-compatible worker instead of the built-in `pi --mode rpc`. */
  workerCommand?: string[];
  /** pi package sources every task's worker loads (`-e SOURCE`), installed once before (cli/fleet-packages.ts). */
  packages?: string[];
  /** The sandbox of every task's agent (`--sandbox`; default: the supervisor's, on where bwrap works). */
  sandbox?: SandboxMode;
  /** More folders the sandboxed agents may write to. */
  sandboxWrite?: string[];
  /** Folder relative task `cwd`s are resolved against (default: the current one). */
  baseDir?: string;
  /** Called on every change of a task's progress; `statusChanged` tells a new status from new activity. */
  onProgress?: (progress: Readonly<TaskProgress>, statusChanged: boolean) => void;
  /** Presence and teardown timings of the in-process supervisor. */
  timings?: Partial<AgentTimings>;
  /** Problems that are not task failures (a worktree that could not be removed). */
  onWarning?: (message: string) => void;
  /** Put a worktree task's `git diff` in its result (a queue worker sends it to a producer on another machine). */
  captureDiff?: boolean;
}

/** What `run()` resolves with. */
export interface TaskRunOutcome {
  results: TaskResult[];
  interrupted: boolean;
  startedAt: number;
  durationMs: number;
}

type StopStatus = "timed_out" | "cancelled";

interface Live {
  tracker: RunTracker;
  progress: TaskProgress;
  /** Called when an event ended the run (as the tracker has it). */
  changed: () => void;
}

/**
 * One run of a task list. `run()` once; `interrupt()` (SIGINT) cancels running tasks
 * and skips pending ones, `kill()` (a second signal) SIGKILLs every worker group now.
 * Invariant: `run()` resolves only after every worker is gone and the temp folder removed.
 */
export class TaskRun {
  private sup: Supervisor | null = null;
  private readonly stops = new Map<string, (status: StopStatus, reason: string) => void>();
  private readonly live = new Map<string, Live>();
  private stopping: string | null = null;
  private interrupted = false;

  constructor(private readonly opts: TaskRunOptions) {}

  /** Cancel the running tasks (recorded as `cancelled`) and skip the rest. */
  interrupt(reason = "interrupted (SIGINT)"): void {
    this.interrupted = true;
    this.stopAll(reason);
  }

  /** SIGKILL every worker's process group now. */
  async kill(): Promise<void> {
    await this.sup?.killAll();
  }

  /** Run every task; resolves with the results in task order. */
  async run(): Promise<TaskRunOutcome> {
    const { tasks } = this.opts;
    const startedAt = Date.now();
    const stateDir = mkdtempSync(join(tmpdir(), "pi-orch-run-"));
    let sup: Supervisor;
    try {
      sup = Supervisor.open({
        home: stateDir,
        worktreesDir: join(this.opts.home, "worktrees"),
        timings: this.opts.timings,
        onWarning: this.opts.onWarning,
      });
    } catch (err) {
      rmSync(stateDir, { recursive: true, force: true });
      throw err;
    }
    this.sup = sup;
    const sub = sup.subscribe({ sink: { write: (m) => this.onMessage(m) } });
    const results: TaskResult[] = new Array(tasks.length);
    let next = 0;
    const lane = async () => {
      for (;;) {
        const i = next++;
        if (i >= tasks.length) return;
        if (this.stopping !== null) {
          results[i] = this.skipped(tasks[i], this.stopping);
          continue;
        }
        results[i] = await this.runOne(tasks[i]);
        if (this.opts.failFast && results[i].status !== "passed" && this.stopping === null) {
          this.stopAll(
            `cancelled by --fail-fast: task "${tasks[i].name}" ${results[i].status === "timed_out" ? "timed out" : "failed"}`,
          );
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.max(1, Math.min(this.opts.concurrency, tasks.length)) }, lane));
    } finally {
      sub.close();
      await sup.shutdown();
      rmSync(stateDir, { recursive: true, force: true });
    }
    return { results, interrupted: this.interrupted, startedAt, durationMs: Date.now() - startedAt };
  }

  private stopAll(reason: string): void {
    this.stopping ??= reason;
    for (const stop of this.stops.values()) stop("cancelled", reason);
  }

  private onMessage(m: IpcStreamMessage): void {
    if (m.type !== "event") return;
    const live = this.live.get(m.agent);
    if (!live) return;
    const { tracker, progress } = live;
    const end = tracker.apply(m.event);
    if (tracker.turns !== progress.turns || tracker.tool !== progress.tool) {
      progress.turns = tracker.turns;
      progress.tool = tracker.tool;
      this.opts.onProgress?.(progress, false);
    }
    if (end) live.changed();
  }

  private setStatus(progress: TaskProgress, status: TaskStatus): void {
    if (progress.status === status) return;
    progress.status = status;
    if (FINAL_STATUSES.has(status)) progress.endedAt = Date.now();
    this.opts.onProgress?.(progress, true);
  }

  private skipped(task: RunTask, why: string): TaskResult {
    const progress: TaskProgress = {
      name: task.name,
      status: "pending",
      turns: 0,
      tool: null,
      startedAt: null,
      endedAt: null,
    };
    this.setStatus(progress, "skipped");
    return {
      ...blankResult(task, "skipped"),
      status: "skipped",
      reason: `not started: ${why}`,
    };
  }

  private async runOne(task: RunTask): Promise<TaskResult> {
    const sup = this.sup!;
    const defaults = this.opts.defaults ?? {};
    const name = task.name;
    const timeout = task.timeout ?? defaults.timeout;
    const progress: TaskProgress = {
      name,
      status: "pending",
      turns: 0,
      tool: null,
      startedAt: Date.now(),
      endedAt: null,
    };
    const tracker = new RunTracker();
    const waiting = new Set<(e: RunEnd) => void>();
    // The run's end as the tracker has it now or once it has one (the prompt's answer may undo an early one).
    const ended = (): Promise<RunEnd> =>
      new Promise((r) => {
        if (tracker.end) r(tracker.end);
        else waiting.add(r);
      });
    const onEnding = () => {
      const end = tracker.end;
      if (!end) return;
      for (const r of waiting) r(end);
      waiting.clear();
    };
    this.live.set(name, { tracker, progress, changed: onEnding });

    const abort = new AbortController();
    let stopped: { status: StopStatus; reason: string } | null = null;
    const stop = (status: StopStatus, reason: string) => {
      if (stopped) return;
      stopped = { status, reason };
      abort.abort();
    };
    this.stops.set(name, stop);
    const timer =
      timeout === undefined
        ? null
        : setTimeout(() => {
            const doing =
              progress.status === "checking"
                ? "during the check"
                : tracker.tool
                  ? `while running ${tracker.tool}`
                  : `while ${progress.status}`;
            stop("timed_out", `timed out after ${timeout}s ${doing}`);
          }, timeout * 1000);
    this.setStatus(progress, "starting");

    let info: AgentInfo | null = null;
    let failure: string | null = null;
    let check: CheckResult | null = null;
    let changed: string[] | null = null;
    let diff: string | undefined;
    let kept = false;
    let sessionFile: string | null = null;
    try {
      const cwd = resolve(this.opts.baseDir ?? process.cwd(), task.cwd ?? ".");
      const inWorktree = Boolean(task.worktree ?? defaults.worktree);
      const leftover =
        inWorktree && this.opts.existingWorktrees !== "replace"
          ? await leftoverWorktree(sup.worktreesDir, cwd, name)
          : null;
      info = await sup.spawn({
        name,
        cwd,
        provider: task.provider ?? defaults.provider,
        model: task.model ?? defaults.model,
        restart: "temporary",
        workerCommand: this.opts.workerCommand,
        ...(this.opts.packages?.length ? { packages: this.opts.packages } : {}),
        sandbox: this.opts.sandbox,
        sandboxWrite: this.opts.sandboxWrite,
        // Sessions and models.json belong to the user's home, not to this run's temp folder.
        env: { PI_ORCH_HOME: this.opts.home },
        worktree: inWorktree ? { owner: "run", existing: this.opts.existingWorktrees ?? "reuse" } : undefined,
      });
      if (leftover)
        this.opts.onWarning?.(
          `task "${name}": continuing in the worktree an earlier run left at ${leftover} (pass --clean to start afresh)`,
        );
      if (!stopped) {
        if (!RUNNING_STATUSES.has(info.status)) {
          failure = `the worker did not start (${info.status}${info.statusReason ? `: ${info.statusReason}` : ""})`;
        } else {
          const response = readRpcAnswer(name, "prompt", await sup.rpc(name, { type: "prompt", message: task.prompt }));
          if (!response.success)
            failure = `the worker refused the prompt: ${keyAdvice(response.error ?? "no reason given", "run", this.opts.home)}`;
          else {
            if (!stopped) this.setStatus(progress, "running");
            // A task that is an extension command (`/cmd`) starting no run is done at its answer.
            const answer = readPromptAnswer(response);
            if (answer.settles) tracker.learnSettles();
            const noRun = answer.disposition === "handled";
            const end = noRun ? ({ kind: "ended" } as const) : await untilAborted(ended(), abort.signal);
            if (noRun && !tracker.started && tracker.extensionError !== null)
              failure = `the command failed: ${tracker.extensionError}`;
            else if (end === null) await this.abortRun(name, ended);
            else if (end.kind === "exited") failure = end.reason;
            else if (tracker.stopReason === "error")
              failure = `the agent stopped with an error: ${tracker.errorMessage ?? "unknown error"}`;
            else if (tracker.stopReason === "aborted") failure = "the agent's run was aborted";
          }
        }
      }
      sessionFile = await this.sessionFileOf(name);
      await sup.stop(name);
      info = sup.status(name);
      changed = info.worktree ? await changedFiles(info.worktree) : [...tracker.touched];
      if (this.opts.captureDiff && info.worktree && changed.length > 0) diff = await diffWorktree(info.worktree);
      if (!failure && !stopped && task.check) {
        this.setStatus(progress, "checking");
        check = await runCheck(task.check, info.cwd, abort.signal);
        if (!stopped && !check.passed) {
          failure = `check failed: \`${task.check}\` exited with ${check.exitCode !== null ? `code ${check.exitCode}` : `signal ${check.signal}`}`;
        }
      }
    } catch (err) {
      failure ??= (err as Error).message;
    } finally {
      if (timer) clearTimeout(timer);
      this.stops.delete(name);
      kept = await this.cleanup(name, info, (changed?.length ?? 0) > 0);
      this.live.delete(name);
    }
    const finalStop = stopped as { status: StopStatus; reason: string } | null;
    const status: TaskResult["status"] = finalStop ? finalStop.status : failure ? "failed" : "passed";
    const result: TaskResult = {
      ...blankResult(task, "skipped"),
      status,
      ...(finalStop ? { reason: finalStop.reason } : failure ? { reason: failure } : {}),
      finalText: tracker.finalText,
      turns: tracker.turns,
      toolCalls: tracker.toolCalls,
      tokens: tracker.tokens,
      startedAt: progress.startedAt,
      durationMs: Date.now() - progress.startedAt!,
      cwd: info?.cwd ?? null,
      changedFiles: changed,
      check,
      sessionFile,
      worktree: info?.worktree ? { ...info.worktree, kept } : null,
      ...(diff !== undefined ? { diff } : {}),
    };
    this.setStatus(progress, status);
    return result;
  }

  /** Ask the worker to abort its run and give it a moment to end it; the stop that follows is forceful anyway. */
  private async abortRun(name: string, ended: () => Promise<RunEnd>): Promise<void> {
    const sup = this.sup!;
    try {
      await sup.rpc(name, { type: "abort" }, { timeoutMs: 2000 });
    } catch {
      return; // not running any more
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([ended(), new Promise((r) => (timer = setTimeout(r, 3000)))]);
    clearTimeout(timer);
  }

  private async sessionFileOf(name: string): Promise<string | null> {
    const sup = this.sup!;
    try {
      const state = readRpcAnswer(name, "get_state", await sup.rpc(name, { type: "get_state" }, { timeoutMs: 2000 }));
      const file = state.success ? state.data.sessionFile : undefined;
      if (file !== undefined) return file;
    } catch {
      // not running: fall back to what the supervisor last learned
    }
    try {
      return sup.status(name).sessionFile;
    } catch {
      return null;
    }
  }

  /**
   * Stop the agent and remove its worktree, unless it is to be kept: `--keep-worktrees`,
   * or uncommitted changes in it (work is never thrown away; the summary names the path).
   * Returns whether the worktree was kept.
   */
  private async cleanup(name: string, info: AgentInfo | null, hasChanges: boolean): Promise<boolean> {
    const sup = this.sup!;
    try {
      await sup.stop(name);
    } catch {
      return false; // the spawn failed: there is no agent
    }
    if (!info?.worktree) return false;
    if (this.opts.keepWorktrees || (hasChanges && !this.opts.discardChanges)) return true;
    try {
      // The branch goes too unless the agent committed on it: an empty branch is clutter, commits are work.
      await sup.remove(name, { force: true, deleteBranch: "if-no-commits" });
    } catch (err) {
      this.opts.onWarning?.(
        `task "${name}": could not remove its worktree ${info.worktree.path}: ${(err as Error).message}`,
      );
      return true;
    }
    return false;
  }
}

/** The folder of the worktree an earlier run left for this task, if there is one. */
async function leftoverWorktree(worktreesDir: string, cwd: string, name: string): Promise<string | null> {
  try {
    const path = worktreePath(worktreesDir, await findRepository(cwd), name);
    return existsSync(path) ? path : null;
  } catch {
    return null; // not a repository: the spawn says so
  }
}

/** The promise's value, or null as soon as `signal` aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | null> {
  if (signal.aborted) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(null);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}
