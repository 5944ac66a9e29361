/**
 * The restart decision, OTP style: one pure function over the policy, the restart
 * history and the exit. No process, no timer: the actor applies the answer.
 */
import type { RestartPolicy, WorkerExit } from "../shared/schema/agent.js";

/** What the actor remembers between restarts of one agent. */
export interface RestartHistory {
  /** Times of the automatic restarts so far (only those inside the period matter). */
  restartTimes: readonly number[];
  /** Consecutive restarts without a healthy run in between; sets the backoff delay. */
  backoffStep: number;
  /** When the worker that just exited was started (null when it never started). */
  startedAt: number | null;
}

/** The answer: restart after a delay, give up (`failed`), or leave it down (`stopped`). */
export type RestartDecision =
  | { action: "restart"; delayMs: number; nextBackoffStep: number }
  | { action: "give_up"; reason: string }
  | { action: "stay_down"; reason: string };

/** An exit is normal only when the worker ended by itself with code 0. */
export function isNormalExit(exit: WorkerExit): boolean {
  return exit.reason === "exit" && exit.code === 0 && exit.signal === null;
}

/**
 * Decide what follows a worker's exit. Invariant: call it only for exits the
 * supervisor did not ask for (a requested stop never restarts).
 */
export function decideRestart(
  policy: RestartPolicy,
  history: RestartHistory,
  exit: WorkerExit,
  now: number,
): RestartDecision {
  const normal = isNormalExit(exit);
  if (policy.restart === "temporary") {
    return { action: "stay_down", reason: `${describeExit(exit)}; restart policy is temporary` };
  }
  if (policy.restart === "transient" && normal) {
    return { action: "stay_down", reason: `${describeExit(exit)}; restart policy is transient` };
  }
  const recent = history.restartTimes.filter((t) => t > now - policy.periodMs);
  if (recent.length >= policy.intensity) {
    return {
      action: "give_up",
      reason: `failed after ${recent.length} restart${recent.length === 1 ? "" : "s"} in ${formatSeconds(policy.periodMs)}`,
    };
  }
  const healthy = history.startedAt !== null && now - history.startedAt >= policy.resetAfterMs;
  const step = healthy ? 0 : history.backoffStep;
  // 2 ** step overflows to Infinity long after the cap, so min() keeps it finite.
  const delayMs = Math.min(policy.backoffInitialMs * 2 ** step, policy.backoffMaxMs);
  return { action: "restart", delayMs, nextBackoffStep: step + 1 };
}

/** `exited with code 1`, `killed by SIGKILL`, `unresponsive (no answer to get_state in 10s)`. */
export function describeExit(exit: WorkerExit): string {
  if (exit.reason !== "exit") return exit.message ? `${exit.reason.replace(/_/g, " ")}: ${exit.message}` : exit.reason.replace(/_/g, " ");
  if (exit.signal) return `killed by ${exit.signal}`;
  return `exited with code ${exit.code ?? "unknown"}`;
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(1)}s`;
}
