/**
 * Automatic retry of transient provider errors, in the session layer: behind the
 * agent's `afterResponse` hook it decides whether a failed response is sent again,
 * waits the backoff (skippable with `abort_retry`) and reports `auto_retry_*` events.
 */
import type { WorkerEvent } from "../../shared/schema/events.js";
import type { AfterResponseContext } from "../agent/types.js";
import { decideRetry, DEFAULT_MAX_RETRY_DELAY_MS } from "../providers/retry-delay.js";

/** Retry settings; `enabled` follows `set_auto_retry`. */
export interface RetrySettings {
  enabled: boolean;
  maxAttempts: number;
  /** First delay; each retry doubles it (2 s, 4 s, 8 s by default). */
  baseDelayMs: number;
  /** Longest wait a provider may ask for (pi's `retry.provider.maxRetryDelayMs`); default 60 s, 0 = no cap. */
  maxRetryDelayMs?: number;
}

/** The events this layer reports. */
type RetryEvent = Extract<WorkerEvent, { type: "auto_retry_start" | "auto_retry_end" }>;

/** One session's retry state: the attempt count of the request in flight and the skip switch. */
export class AutoRetry {
  private attempt = 0;
  private skip: AbortController | null = null;

  constructor(
    readonly settings: RetrySettings,
    private readonly emit: (event: RetryEvent) => void,
  ) {}

  /** Stop waiting before the next attempt; the run then ends with the error. */
  abortWait(): void {
    this.skip?.abort();
  }

  /**
   * Decide about one response. A retryable failure within the budget waits and
   * repeats; the first success after retries reports `auto_retry_end`.
   */
  async afterResponse(ctx: AfterResponseContext): Promise<"accept" | "repeat"> {
    if (ctx.repeats === 0) this.attempt = 0;
    const { message, failure, signal } = ctx;
    if (!failure) {
      if (this.attempt > 0 && message.stopReason !== "aborted") this.end({ success: true, attempt: this.attempt + 1 });
      return "accept";
    }
    const s = this.settings;
    const decision = decideRetry(this.attempt + 1, failure.retryable, failure.retryHint ?? {}, {
      maxAttempts: s.maxAttempts,
      baseDelayMs: s.baseDelayMs,
      maxRetryDelayMs: s.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS,
    });
    if (!decision.retry || !s.enabled || signal.aborted) {
      if (this.attempt > 0) this.end({ success: false, attempt: this.attempt, finalError: message.errorMessage });
      return "accept";
    }
    this.attempt++;
    const delayMs = decision.delayMs;
    this.emit({
      type: "auto_retry_start",
      attempt: this.attempt,
      maxAttempts: s.maxAttempts,
      delayMs,
      errorMessage: message.errorMessage ?? "unknown error",
      delayReason: decision.reason,
    });
    this.skip = new AbortController();
    const waited = await wait(delayMs, signal, this.skip.signal);
    this.skip = null;
    if (waited === "run-aborted") {
      this.end({ success: false, attempt: this.attempt, finalError: "aborted" });
      return "repeat"; // the loop turns an aborted run into an aborted message
    }
    if (waited === "skipped") {
      // pi's words for a wait cut short by abort_retry.
      this.end({ success: false, attempt: this.attempt, finalError: "Retry cancelled" });
      return "accept";
    }
    return "repeat";
  }

  private end(fields: { success: boolean; attempt: number; finalError?: string }): void {
    this.emit({ type: "auto_retry_end", ...fields });
    this.attempt = 0;
  }
}

function wait(ms: number, run: AbortSignal, skip: AbortSignal): Promise<"elapsed" | "run-aborted" | "skipped"> {
  return new Promise((resolve) => {
    if (run.aborted) return resolve("run-aborted");
    const done = (why: "elapsed" | "run-aborted" | "skipped") => {
      clearTimeout(timer);
      run.removeEventListener("abort", onRun);
      skip.removeEventListener("abort", onSkip);
      resolve(why);
    };
    const onRun = () => done("run-aborted");
    const onSkip = () => done("skipped");
    const timer = setTimeout(() => done("elapsed"), ms);
    run.addEventListener("abort", onRun, { once: true });
    skip.addEventListener("abort", onSkip, { once: true });
  });
}
