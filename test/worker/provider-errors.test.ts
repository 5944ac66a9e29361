import { describe, expect, it } from "vitest";
import { classifyProviderError, type ClassifiedError } from "../../worker/providers/errors.js";

/** An SDK APIError as both official SDKs shape it: `status`, the parsed body in `error`. */
function apiError(status: number | undefined, body: unknown, message = `${status} ${JSON.stringify(body)}`): Error {
  return Object.assign(new Error(message), { status, error: body });
}

class APIConnectionError extends Error {}

function withCause(message: string, cause: object): Error {
  return Object.assign(new Error(message), { cause });
}

const anthropicBody = (type: string, message: string) => ({ type: "error", error: { type, message } });
const openaiBody = (message: string, code: string | null = null) => ({ message, type: "invalid_request_error", code });

const cases: [string, unknown, boolean, Partial<ClassifiedError>][] = [
  [
    "429 rate limit",
    apiError(429, anthropicBody("rate_limit_error", "Rate limited")),
    false,
    { message: "429 Rate limited", retryable: true },
  ],
  [
    "500 server error",
    apiError(500, openaiBody("The server had an error")),
    false,
    { message: "500 The server had an error", retryable: true },
  ],
  [
    "503 unavailable",
    apiError(503, undefined, "503 status code (no body)"),
    false,
    { message: "503 status code (no body)", retryable: true },
  ],
  [
    "529 overloaded",
    apiError(529, anthropicBody("overloaded_error", "Overloaded")),
    false,
    { message: "529 Overloaded", retryable: true },
  ],
  [
    "overloaded sent mid-stream (no status)",
    apiError(
      undefined,
      anthropicBody("overloaded_error", "Overloaded"),
      JSON.stringify(anthropicBody("overloaded_error", "Overloaded")),
    ),
    false,
    { message: "Overloaded", retryable: true },
  ],
  [
    "401 bad key",
    apiError(401, anthropicBody("authentication_error", "invalid x-api-key")),
    false,
    { message: "401 invalid x-api-key", retryable: false },
  ],
  [
    "400 anthropic prompt too long",
    apiError(400, anthropicBody("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum")),
    false,
    { contextOverflow: true, retryable: false },
  ],
  [
    "400 openai context_length_exceeded",
    apiError(400, openaiBody("This model's maximum context length is 8192 tokens.", "context_length_exceeded")),
    false,
    { contextOverflow: true, retryable: false },
  ],
  [
    "413 code context_length_exceeded only",
    apiError(413, openaiBody("Request too large", "context_length_exceeded")),
    false,
    { contextOverflow: true },
  ],
  [
    "400 unrelated bad request",
    apiError(400, openaiBody("Invalid value for 'model'")),
    false,
    { contextOverflow: false, retryable: false },
  ],
  [
    "400 that says terminated is still not retryable",
    apiError(400, openaiBody("session terminated")),
    false,
    { retryable: false },
  ],
  ["SDK connection error", new APIConnectionError("Connection error."), false, { retryable: true }],
  [
    "fetch failed",
    withCause("fetch failed", { message: "connect ECONNREFUSED 127.0.0.1:1", code: "ECONNREFUSED" }),
    false,
    { retryable: true },
  ],
  [
    "ECONNRESET deep in the cause chain",
    withCause("Connection error.", withCause("terminated", { message: "read ECONNRESET", code: "ECONNRESET" })),
    false,
    { retryable: true },
  ],
  ["socket hang up", new Error("socket hang up"), false, { retryable: true }],
  ["ETIMEDOUT", withCause("request failed", { code: "ETIMEDOUT" }), false, { retryable: true }],
  [
    "plain programming error",
    new TypeError("x is not a function"),
    false,
    { message: "x is not a function", retryable: false, contextOverflow: false },
  ],
  ["a thrown string", "weird", false, { message: "weird", retryable: false }],
  [
    "abort wins over the SDK's error",
    apiError(500, openaiBody("boom")),
    true,
    { message: "Request was aborted", aborted: true, retryable: false, contextOverflow: false },
  ],
];

describe("classifyProviderError", () => {
  it.each(cases)("%s", (_name, error, aborted, expected) => {
    const result = classifyProviderError(error, aborted);
    expect(result).toMatchObject({ aborted: false, ...expected });
  });
});
