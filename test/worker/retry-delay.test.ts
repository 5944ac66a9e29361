import { describe, expect, it } from "vitest";
import {
  decideRetry,
  formatDelay,
  headerLookup,
  parseDuration,
  parseRetryAfter,
  retryHintFromHeaders,
  type RetryHint,
  type RetryPolicy,
} from "../../worker/providers/retry-delay.js";

const NOW = Date.parse("2026-12-01T10:00:00Z");

// Header sets as the APIs send them on a 429 (names and value formats from the Anthropic
// and OpenAI rate-limit docs and the SDKs' own retry code, which reads the same headers).
const hintCases: [string, Record<string, string>, RetryHint][] = [
  ["no headers", {}, {}],
  ["retry-after seconds", { "retry-after": "2" }, { delayMs: 2000, source: "retry-after: 2" }],
  ["retry-after decimal seconds", { "retry-after": "0.5" }, { delayMs: 500, source: "retry-after: 0.5" }],
  [
    "retry-after HTTP date",
    { "retry-after": "Tue, 01 Dec 2026 10:00:30 GMT" },
    { delayMs: 30_000, source: "retry-after: Tue, 01 Dec 2026 10:00:30 GMT" },
  ],
  [
    "retry-after date in the past",
    { "retry-after": "Tue, 01 Dec 2026 09:59:00 GMT" },
    { delayMs: 0, source: "retry-after: Tue, 01 Dec 2026 09:59:00 GMT" },
  ],
  [
    "retry-after-ms wins over retry-after",
    { "retry-after-ms": "1500", "retry-after": "9" },
    { delayMs: 1500, source: "retry-after-ms: 1500" },
  ],
  ["unreadable retry-after is ignored", { "retry-after": "soon" }, {}],
  [
    "anthropic: the exhausted limit's reset",
    {
      "anthropic-ratelimit-requests-remaining": "12",
      "anthropic-ratelimit-requests-reset": "2026-12-01T10:00:05Z",
      "anthropic-ratelimit-tokens-remaining": "0",
      "anthropic-ratelimit-tokens-reset": "2026-12-01T10:00:42Z",
    },
    { delayMs: 42_000, source: "anthropic-ratelimit-tokens-reset: 2026-12-01T10:00:42Z" },
  ],
  [
    "anthropic: the latest of two exhausted limits",
    {
      "anthropic-ratelimit-input-tokens-remaining": "0",
      "anthropic-ratelimit-input-tokens-reset": "2026-12-01T10:00:10Z",
      "anthropic-ratelimit-output-tokens-remaining": "0",
      "anthropic-ratelimit-output-tokens-reset": "2026-12-01T10:00:20Z",
    },
    { delayMs: 20_000, source: "anthropic-ratelimit-output-tokens-reset: 2026-12-01T10:00:20Z" },
  ],
  [
    "anthropic: no limit exhausted, no wait from resets",
    { "anthropic-ratelimit-requests-remaining": "3", "anthropic-ratelimit-requests-reset": "2026-12-01T10:00:59Z" },
    {},
  ],
  [
    "anthropic: retry-after wins over resets",
    {
      "retry-after": "7",
      "anthropic-ratelimit-tokens-remaining": "0",
      "anthropic-ratelimit-tokens-reset": "2026-12-01T10:00:42Z",
    },
    { delayMs: 7000, source: "retry-after: 7" },
  ],
  [
    "openai: x-ratelimit-reset-tokens of the exhausted limit",
    {
      "x-ratelimit-remaining-requests": "499",
      "x-ratelimit-reset-requests": "120ms",
      "x-ratelimit-remaining-tokens": "0",
      "x-ratelimit-reset-tokens": "6m0s",
    },
    { delayMs: 360_000, source: "x-ratelimit-reset-tokens: 6m0s" },
  ],
  [
    "openai: reset without remaining headers",
    { "x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "2.5s" },
    { delayMs: 1000, source: "x-ratelimit-reset-requests: 1s" },
  ],
  ["x-should-retry false", { "x-should-retry": "false" }, { shouldRetry: false }],
  [
    "x-should-retry true with a wait",
    { "x-should-retry": "true", "retry-after": "3" },
    { shouldRetry: true, delayMs: 3000, source: "retry-after: 3" },
  ],
];

describe("retryHintFromHeaders", () => {
  it.each(hintCases)("%s", (_name, headers, expected) => {
    expect(retryHintFromHeaders(headerLookup(new Headers(headers)), NOW)).toEqual(expected);
  });

  it("reads plain header records too, whatever the case of the names", () => {
    expect(retryHintFromHeaders(headerLookup({ "Retry-After": "4" }), NOW)).toEqual({
      delayMs: 4000,
      source: "retry-after: 4",
    });
    expect(retryHintFromHeaders(headerLookup(undefined), NOW)).toEqual({});
  });
});

describe("parseRetryAfter and parseDuration", () => {
  it.each([
    ["0", 0],
    ["30", 30_000],
    ["1.25", 1250],
    ["Tue, 01 Dec 2026 10:01:00 GMT", 60_000],
    ["later", null],
  ] as const)("retry-after %s", (value, expected) => {
    expect(parseRetryAfter(value, NOW)).toBe(expected);
  });

  it.each([
    ["1s", 1000],
    ["20ms", 20],
    ["6m0s", 360_000],
    ["1h2m3.5s", 3_723_500],
    ["0.5", 500],
    ["", null],
    ["5 minutes", null],
    ["3x", null],
  ] as const)("duration %s", (value, expected) => {
    expect(parseDuration(value)).toBe(expected);
  });
});

const POLICY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 2000, maxRetryDelayMs: 60_000 };

const decisionCases: [string, number, boolean, RetryHint, RetryPolicy, ReturnType<typeof decideRetry>][] = [
  [
    "first retry, no hint: base delay",
    1,
    true,
    {},
    POLICY,
    { retry: true, delayMs: 2000, reason: "exponential backoff" },
  ],
  ["third retry doubles twice", 3, true, {}, POLICY, { retry: true, delayMs: 8000, reason: "exponential backoff" }],
  ["past maxAttempts", 4, true, {}, POLICY, { retry: false, reason: "gave up after 3 retries" }],
  [
    "provider wait longer than the backoff wins",
    1,
    true,
    { delayMs: 30_000, source: "retry-after: 30" },
    POLICY,
    { retry: true, delayMs: 30_000, reason: "the provider asked to wait (retry-after: 30)" },
  ],
  [
    "a short provider wait never shortens the backoff",
    3,
    true,
    { delayMs: 500, source: "retry-after-ms: 500" },
    POLICY,
    { retry: true, delayMs: 8000, reason: "exponential backoff (longer than the provider's retry-after-ms: 500)" },
  ],
  [
    "provider wait past the cap fails with how long it asked",
    1,
    true,
    { delayMs: 5 * 3_600_000, source: "retry-after: 18000" },
    POLICY,
    {
      retry: false,
      reason:
        "the provider asked to wait 5 h (retry-after: 18000), longer than the 1 min limit (setting retry.provider.maxRetryDelayMs); try again later or raise the limit",
    },
  ],
  [
    "cap 0 means no cap",
    1,
    true,
    { delayMs: 90_000, source: "retry-after: 90" },
    { ...POLICY, maxRetryDelayMs: 0 },
    { retry: true, delayMs: 90_000, reason: "the provider asked to wait (retry-after: 90)" },
  ],
  [
    "x-should-retry false wins over a retryable status",
    1,
    true,
    { shouldRetry: false },
    POLICY,
    { retry: false, reason: "the provider said not to retry (x-should-retry: false)" },
  ],
  [
    "x-should-retry true retries a 4xx",
    1,
    false,
    { shouldRetry: true },
    POLICY,
    { retry: true, delayMs: 2000, reason: "exponential backoff" },
  ],
  ["not retryable", 1, false, {}, POLICY, { retry: false, reason: "the error is not transient" }],
];

describe("decideRetry", () => {
  it.each(decisionCases)("%s", (_name, attempt, retryable, hint, policy, expected) => {
    expect(decideRetry(attempt, retryable, hint, policy)).toEqual(expected);
  });
});

describe("formatDelay", () => {
  it.each([
    [850, "850 ms"],
    [2000, "2 s"],
    [60_000, "1 min"],
    [125_000, "2 min 5 s"],
    [3_780_000, "1 h 3 min"],
  ] as const)("%d ms", (ms, text) => {
    expect(formatDelay(ms)).toBe(text);
  });
});
