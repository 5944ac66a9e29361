/**
 * How long to wait before retrying a failed model request, and whether to retry at all.
 * Pure: the providers read the hint from the response headers, the retry loop decides
 * with `decideRetry`. With many agents on one key rate limits are the normal case, so
 * the wait the provider asks for wins over our own backoff.
 */

/** What the provider's response said about retrying. */
export interface RetryHint {
  /** The wait the provider asked for, in ms (from now). */
  delayMs?: number;
  /** Which header gave `delayMs`, with its value, for messages: `retry-after: 30`. */
  source?: string;
  /** `x-should-retry`: the provider's own verdict, when it sent one. */
  shouldRetry?: boolean;
}

/** Reads one response header by lower-case name (both SDKs expose a fetch `Headers`). */
export type HeaderLookup = (name: string) => string | null | undefined;

/** A header reader for whatever an SDK error carries: a fetch `Headers`, a plain record, or nothing. */
export function headerLookup(headers: unknown): HeaderLookup {
  if (headers && typeof (headers as { get?: unknown }).get === "function") {
    return (name) => (headers as { get(name: string): string | null }).get(name);
  }
  if (headers && typeof headers === "object") {
    const record = headers as Record<string, unknown>;
    const byLower = new Map(Object.entries(record).map(([k, v]) => [k.toLowerCase(), v]));
    return (name) => {
      const value = byLower.get(name);
      return typeof value === "string" ? value : Array.isArray(value) ? String(value[0]) : undefined;
    };
  }
  return () => undefined;
}

/** Rate-limit families whose reset headers say when a limit refills: [remaining header, reset header]. */
const ANTHROPIC_LIMITS = ["requests", "tokens", "input-tokens", "output-tokens"].map((limit) => [
  `anthropic-ratelimit-${limit}-remaining`,
  `anthropic-ratelimit-${limit}-reset`,
]);
const OPENAI_LIMITS = ["requests", "tokens"].map((limit) => [
  `x-ratelimit-remaining-${limit}`,
  `x-ratelimit-reset-${limit}`,
]);

/**
 * The retry hint of a response's headers. `retry-after-ms` and `retry-after` (seconds or
 * an HTTP date) are explicit; without them, the reset time of an exhausted limit
 * (`anthropic-ratelimit-*-reset`, an RFC 3339 time; `x-ratelimit-reset-*`, a duration
 * such as `6m0s`) is the wait. `now` is the time the response arrived.
 */
export function retryHintFromHeaders(get: HeaderLookup, now: number): RetryHint {
  const hint: RetryHint = {};
  const should = get("x-should-retry")?.trim().toLowerCase();
  if (should === "true") hint.shouldRetry = true;
  else if (should === "false") hint.shouldRetry = false;

  const retryAfterMs = get("retry-after-ms");
  const ms = retryAfterMs != null ? Number(retryAfterMs.trim()) : NaN;
  if (Number.isFinite(ms) && ms >= 0)
    return { ...hint, delayMs: Math.ceil(ms), source: `retry-after-ms: ${retryAfterMs!.trim()}` };

  const retryAfter = get("retry-after")?.trim();
  if (retryAfter) {
    const delay = parseRetryAfter(retryAfter, now);
    if (delay !== null) return { ...hint, delayMs: delay, source: `retry-after: ${retryAfter}` };
  }

  const reset =
    exhaustedReset(get, ANTHROPIC_LIMITS, (v) => parseInstant(v, now)) ??
    exhaustedReset(get, OPENAI_LIMITS, parseDuration);
  if (reset) return { ...hint, delayMs: reset.delayMs, source: reset.source };
  return hint;
}

/** `retry-after` in seconds (integer or decimal) or as an HTTP date; null when unreadable. */
export function parseRetryAfter(value: string, now: number): number | null {
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** An OpenAI-style duration (`1s`, `20ms`, `6m0s`, `1h2m3.5s`) in ms; null when unreadable. */
export function parseDuration(value: string): number | null {
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.ceil(Number(text) * 1000);
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/gy;
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  let total = 0;
  let matched = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    total += Number(m[1]) * unit[m[2]];
    matched = re.lastIndex;
  }
  return matched > 0 && matched === text.length ? Math.ceil(total) : null;
}

function parseInstant(value: string, now: number): number | null {
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * The wait until the latest reset among exhausted limits (remaining `0`). When no
 * `remaining` header came at all, the earliest reset: some limit is out, which one is unknown.
 */
function exhaustedReset(
  get: HeaderLookup,
  limits: string[][],
  parse: (value: string) => number | null,
): { delayMs: number; source: string } | null {
  let exhausted: { delayMs: number; source: string } | null = null;
  let earliest: { delayMs: number; source: string } | null = null;
  let sawRemaining = false;
  for (const [remainingName, resetName] of limits) {
    const remaining = get(remainingName)?.trim();
    const reset = get(resetName)?.trim();
    if (remaining != null && remaining !== "") sawRemaining = true;
    const delayMs = reset ? parse(reset) : null;
    if (delayMs === null) continue;
    const candidate = { delayMs, source: `${resetName}: ${reset}` };
    if (remaining === "0" && (!exhausted || delayMs > exhausted.delayMs)) exhausted = candidate;
    if (!earliest || delayMs < earliest.delayMs) earliest = candidate;
  }
  return exhausted ?? (sawRemaining ? null : earliest);
}

/** The retry settings the decision needs (pi's `retry.*` settings). */
export interface RetryPolicy {
  maxAttempts: number;
  /** First backoff delay; it doubles each attempt (2 s, 4 s, 8 s). */
  baseDelayMs: number;
  /** Longest wait the provider may ask for (pi's `retry.provider.maxRetryDelayMs`); 0 = no cap. */
  maxRetryDelayMs: number;
}

/** pi's default cap on a provider-requested wait. */
export const DEFAULT_MAX_RETRY_DELAY_MS = 60_000;

/** Either wait `delayMs` and retry, or give up with a message saying why. */
export type RetryDecision = { retry: true; delayMs: number; reason: string } | { retry: false; reason: string };

/**
 * Decide the retry after failed attempt number `attempt` (1 = the first request failed).
 * `retryable` is the error's class (429, 5xx, connection); the provider's
 * `x-should-retry` overrides it both ways. The delay is the larger of the exponential
 * backoff and the provider's wait; a provider wait past the cap fails at once, because
 * waiting less than asked only burns an attempt.
 */
export function decideRetry(attempt: number, retryable: boolean, hint: RetryHint, policy: RetryPolicy): RetryDecision {
  if (hint.shouldRetry === false)
    return { retry: false, reason: "the provider said not to retry (x-should-retry: false)" };
  if (!retryable && hint.shouldRetry !== true) return { retry: false, reason: "the error is not transient" };
  if (attempt > policy.maxAttempts) {
    return {
      retry: false,
      reason: `gave up after ${policy.maxAttempts} ${policy.maxAttempts === 1 ? "retry" : "retries"}`,
    };
  }
  const backoff = policy.baseDelayMs * 2 ** (attempt - 1);
  if (hint.delayMs !== undefined) {
    const tooLong = waitTooLong(hint, policy.maxRetryDelayMs);
    if (tooLong) return { retry: false, reason: tooLong };
    if (hint.delayMs >= backoff)
      return { retry: true, delayMs: hint.delayMs, reason: `the provider asked to wait (${hint.source})` };
    return { retry: true, delayMs: backoff, reason: `exponential backoff (longer than the provider's ${hint.source})` };
  }
  return { retry: true, delayMs: backoff, reason: "exponential backoff" };
}

/**
 * When the provider asks for a wait past the cap: the message that says how long it
 * asked and what to do, else null. `maxRetryDelayMs` 0 means no cap.
 */
export function waitTooLong(hint: RetryHint, maxRetryDelayMs: number): string | null {
  if (hint.delayMs === undefined || maxRetryDelayMs <= 0 || hint.delayMs <= maxRetryDelayMs) return null;
  return (
    `the provider asked to wait ${formatDelay(hint.delayMs)} (${hint.source}), longer than the ` +
    `${formatDelay(maxRetryDelayMs)} limit (setting retry.provider.maxRetryDelayMs); try again later or raise the limit`
  );
}

/** `850 ms`, `30 s`, `2 min 5 s`, `1 h 3 min`: a wait as a user reads it. */
export function formatDelay(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.ceil(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
  const h = Math.floor(m / 60);
  return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
}
