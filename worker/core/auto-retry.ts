/**
 * Automatic retry of transient provider errors, in the session layer, in pi's order:
 * a run that ended with a retryable error is over (turn_end, agent_end); then
 * `auto_retry_start`, the backoff (skippable with `abort_retry`) and a new run that
 * continues the conversation. The agent loop never sees a retry.
 */
import type { WorkerEvent } from "../../shared/schema/events.js";
import type { AgentMessage, AssistantMessage } from "../../shared/schema/messages.js";
import type { ResponseFailure } from "../agent/types.js";
import { decideRetry, DEFAULT_MAX_RETRY_DELAY_MS } from "../providers/retry-delay.js";
import { maxRetryDelayMs } from "../resources/settings.js";

/** Retry settings; `enabled` follows `set_auto_retry`. */
export interface RetrySettings {
  enabled: boolean;
  maxAttempts: number;
  /** First delay; each retry doubles it (2 s, 4 s, 8 s by default). */
  baseDelayMs: number;
  /** Longest wait a provider may ask for (pi's `retry.provider.maxRetryDelayMs`); default 60 s, 0 = no cap. */
  maxRetryDelayMs?: number;
}

/** The retry settings a settings file gives (pi's defaults where it says nothing); `baseDelayMs` overrides its base delay. */
export function retrySettingsOf(settings: Parameters<typeof maxRetryDelayMs>[0], baseDelayMs?: number): RetrySettings {
  const cap = maxRetryDelayMs(settings);
  return {
    enabled: settings.retry?.enabled ?? true,
    maxAttempts: settings.retry?.maxRetries ?? 3,
    baseDelayMs: baseDelayMs ?? settings.retry?.baseDelayMs ?? 2000,
    ...(cap === undefined ? {} : { maxRetryDelayMs: cap }),
  };
}

/** The events this layer reports. */
type RetryEvent = Extract<WorkerEvent, { type: "auto_retry_start" | "auto_retry_end" }>;

/** What follows a failed run: a retry after a wait, or the report that retries ran out. */
type Plan =
  | { retry: true; failed: AssistantMessage; delayMs: number; reason: string; errorMessage: string }
  | { retry: false; finalError: string | undefined };

/** What the retry needs of the session: a way to leave the failed reply out of the context, and to start a run. */
export interface RetryTarget {
  /** As pi 1.6: the failed reply stays in the session file but leaves the model's context (a `context_edit`). */
  omit(failed: AssistantMessage): void;
  start(prompts: AgentMessage[]): { done: Promise<void> };
}

/** One session's retry state: the retries done for the current request and the skip switch. */
export class AutoRetry {
  private attempt = 0;
  private skip: AbortController | null = null;
  private lastFailure: ResponseFailure | null = null;
  private plan: Plan | null = null;

  constructor(
    readonly settings: RetrySettings,
    private readonly emit: (event: RetryEvent) => void,
  ) {}

  /** Whether a backoff wait is in progress (between a failed run and its retry). */
  get waiting(): boolean {
    return this.skip !== null;
  }

  /**
   * A reload read the settings files again: each retry setting they changed takes effect,
   * one they did not change keeps the session's value (a client's `set_auto_retry`
   * survives).
   */
  reloadSettings(before: RetrySettings, after: RetrySettings): void {
    if (before.enabled !== after.enabled) this.settings.enabled = after.enabled;
    if (before.maxAttempts !== after.maxAttempts) this.settings.maxAttempts = after.maxAttempts;
    if (before.baseDelayMs !== after.baseDelayMs) this.settings.baseDelayMs = after.baseDelayMs;
    // Removing the cap (back to the default) is a change too.
    if (before.maxRetryDelayMs !== after.maxRetryDelayMs) this.settings.maxRetryDelayMs = after.maxRetryDelayMs;
  }

  /** Stop waiting before the next attempt; no retry run starts. */
  abortWait(): void {
    this.skip?.abort();
  }

  /** What the provider said about the latest response (from the agent's `afterResponse` hook). */
  noteResponse(failure: ResponseFailure | null): void {
    this.lastFailure = failure;
  }

  /**
   * The run is ending (its `agent_end` is about to go out, `messages` are the run's):
   * decide now, as pi does at agent_end, so the event can say `willRetry`. The
   * decision is carried out by `follow` after the run settled.
   */
  onAgentEnd(messages: readonly AgentMessage[]): boolean {
    const last = messages.at(-1);
    this.plan = last?.role === "assistant" ? this.decide(last, this.lastFailure) : null;
    // Waiting from the decision on: the session stays busy (and abort_retry can skip the
    // retry) while the extensions' agent_end handlers run, before the backoff starts.
    if (this.plan?.retry) this.skip = new AbortController();
    return this.plan?.retry === true;
  }

  /**
   * Follow a run through its automatic retries, as pi does: each failed run ends
   * (agent_end), then auto_retry_start, the wait, and a new run continuing the
   * conversation. Settles when the last run settled and no retry follows.
   */
  async follow(agent: RetryTarget, run: Promise<void>): Promise<void> {
    for (;;) {
      await run;
      const plan = this.plan;
      this.plan = null;
      if (!plan) return;
      if (!plan.retry) {
        // pi reports the end of retries that ran out; a UI showing "retrying" needs it in every case.
        this.end({ success: false, attempt: this.attempt, finalError: plan.finalError });
        return;
      }
      if (!(await this.waitToRetry(plan, agent))) return;
      run = agent.start([]).done;
    }
  }

  /**
   * A finished assistant message (its `message_end` went out). As pi, any answer
   * that is not an error after retries reports `auto_retry_end` with success, an
   * aborted one too: the retry itself got through.
   */
  onMessageEnd(message: AssistantMessage): void {
    if (message.stopReason !== "error" && this.attempt > 0) this.end({ success: true, attempt: this.attempt });
  }

  /** What to do after a run that ended with `last`: null when there is nothing to retry or report. */
  private decide(last: AssistantMessage, failure: ResponseFailure | null): Plan | null {
    if (last.stopReason !== "error" || !failure) return null;
    const s = this.settings;
    const decision = decideRetry(this.attempt + 1, failure.retryable, failure.retryHint ?? {}, {
      maxAttempts: s.maxAttempts,
      baseDelayMs: s.baseDelayMs,
      maxRetryDelayMs: s.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS,
    });
    if (decision.retry && s.enabled) {
      return {
        retry: true,
        failed: last,
        delayMs: decision.delayMs,
        reason: decision.reason,
        errorMessage: last.errorMessage ?? "unknown error",
      };
    }
    return this.attempt > 0 ? { retry: false, finalError: last.errorMessage } : null;
  }

  /**
   * Report, leave the failed reply out of the context (pi's order: after auto_retry_start,
   * before the wait, so a cancelled retry leaves it out too) and wait one backoff; false
   * when `abort_retry` cut it short (then no retry run starts).
   */
  private async waitToRetry(plan: Extract<Plan, { retry: true }>, agent: RetryTarget): Promise<boolean> {
    this.attempt++;
    this.emit({
      type: "auto_retry_start",
      attempt: this.attempt,
      maxAttempts: this.settings.maxAttempts,
      delayMs: plan.delayMs,
      errorMessage: plan.errorMessage,
      delayReason: plan.reason,
    });
    agent.omit(plan.failed);
    this.skip ??= new AbortController();
    const skipped = await wait(plan.delayMs, this.skip.signal);
    this.skip = null;
    if (skipped) {
      // pi's words for a wait cut short by abort_retry (or abort).
      this.end({ success: false, attempt: this.attempt, finalError: "Retry cancelled" });
      return false;
    }
    return true;
  }

  private end(fields: { success: boolean; attempt: number; finalError?: string }): void {
    this.emit({ type: "auto_retry_end", ...fields });
    this.attempt = 0;
  }
}

/** Wait `ms`; resolves true when `skip` aborted first. */
function wait(ms: number, skip: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (skip.aborted) return resolve(true);
    const done = (skipped: boolean) => {
      clearTimeout(timer);
      skip.removeEventListener("abort", onSkip);
      resolve(skipped);
    };
    const onSkip = () => done(true);
    const timer = setTimeout(() => done(false), ms);
    skip.addEventListener("abort", onSkip, { once: true });
  });
}
