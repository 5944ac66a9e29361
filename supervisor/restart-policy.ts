/**
 * The restart decision, OTP style: one pure function over the policy, the restart
 * history and the exit. No process, no timer: the actor applies the answer.
 */
import type { RestartPolicy, WorkerExit } from "../shared/schema/agent.js";

/** What the actor remembers between restarts of one agent; only `decideRestart` makes a new one. */
export interface RestartHistory {
  /** Times of the automatic restarts inside the period (older ones are pruned). */
  restartTimes: readonly number[];
  /** Consecutive restarts without a healthy run in between; sets the backoff delay. */
  backoffStep: number;
}

/** No restarts yet (a new agent, or after a manual restart). */
export const NO_RESTARTS: RestartHistory = { restartTimes: [], backoffStep: 0 };

/**
 * The answer: restart after a delay, give up (`failed`), or leave it down (`stopped`),
 * with the history to keep from now on (pruned to the period, plus this restart), the
 * way OTP's `add_restart` returns the new restart list with its verdict.
 */
export type RestartDecision = (
  | { action: "restart"; delayMs: number }
  | { action: "give_up"; reason: string }
  | { action: "stay_down"; reason: string }
) & { history: RestartHistory };

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
  /** When the worker that just exited was started (null when it never started). */
  startedAt: number | null,
): RestartDecision {
  const recent = history.restartTimes.filter((t) => t > now - policy.periodMs);
  const kept: RestartHistory = { restartTimes: recent, backoffStep: history.backoffStep };
  const normal = isNormalExit(exit);
  if (policy.restart === "temporary") {
    return { action: "stay_down", reason: `${describeExit(exit)}; restart policy is temporary`, history: kept };
  }
  if (policy.restart === "transient" && normal) {
    return { action: "stay_down", reason: `${describeExit(exit)}; restart policy is transient`, history: kept };
  }
  if (recent.length >= policy.intensity) {
    return {
      action: "give_up",
      reason: `failed after ${recent.length} restart${recent.length === 1 ? "" : "s"} in ${formatSeconds(policy.periodMs)}`,
      history: kept,
    };
  }
  const healthy = startedAt !== null && now - startedAt >= policy.resetAfterMs;
  const step = healthy ? 0 : history.backoffStep;
  // 2 ** step overflows to Infinity long after the cap, so min() keeps it finite.
  const delayMs = Math.min(policy.backoffInitialMs * 2 ** step, policy.backoffMaxMs);
  return { action: "restart", delayMs, history: { restartTimes: [...recent, now], backoffStep: step + 1 } };
}

/** `exited with code 1`, `killed by SIGKILL`, `unresponsive (no answer to get_state in 10s)`. */
export function describeExit(exit: WorkerExit): string {
  if (exit.reason !== "exit")
    return exit.message ? `${exit.reason.replace(/_/g, " ")}: ${exit.message}` : exit.reason.replace(/_/g, " ");
  if (exit.signal) return `killed by ${exit.signal}`;
  return `exited with code ${exit.code ?? "unknown"}`;
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(1)}s`;
}
