import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isContextOverflow, OVERFLOW_PATTERNS } from "../../worker/providers/context-overflow.js";
import { classifyProviderError } from "../../worker/providers/errors.js";

/** The servers' real overflow errors, with where each text was read (see SOURCES.md). */
interface OverflowError {
  server: string;
  /** HTTP status; null for an error sent inside a 200 stream. */
  status: number | null;
  body: object;
  source: string;
}
const OVERFLOWS: [string, number | undefined, object, string][] = (
  JSON.parse(
    readFileSync(join(import.meta.dirname, "../fixtures/provider-streams/overflow-errors.json"), "utf8"),
  ) as OverflowError[]
).map((e) => [e.server, e.status ?? undefined, e.body, e.source]);

/** Errors that mention tokens or size but are not overflows: compacting would not help. */
const NOT_OVERFLOWS: [string, number | undefined, object][] = [
  [
    "Groq tokens-per-minute limit (413)",
    413,
    {
      message:
        "Request too large for model `llama-3.3-70b-versatile` in organization `org_01` service tier `on_demand` on tokens per minute (TPM): Limit 12000, Requested 15000, please reduce your message size and try again.",
      type: "tokens",
      code: "rate_limit_exceeded",
    },
  ],
  [
    "OpenAI 429 rate limit",
    429,
    {
      message: "Rate limit reached for gpt-4.1 on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000.",
      type: "tokens",
      code: "rate_limit_exceeded",
    },
  ],
  ["Anthropic 529", 529, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }],
  [
    "invalid model",
    400,
    {
      message: "The model `gpt-9` does not exist or you do not have access to it.",
      type: "invalid_request_error",
      code: "model_not_found",
    },
  ],
  [
    "max_tokens too large for the model (not the input)",
    400,
    {
      message: "max_tokens: 300000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-6",
      type: "invalid_request_error",
    },
  ],
];

/** An SDK APIError as both official SDKs shape it: `status` and the parsed body in `error`. */
function apiError(status: number | undefined, body: object): Error {
  return Object.assign(new Error(`${status ?? ""} ${JSON.stringify(body)}`), { status, error: body });
}

describe("context overflow, recognised for every server", () => {
  it.each(OVERFLOWS)("%s", (server, status, body) => {
    const classified = classifyProviderError(apiError(status, body), false);
    expect(classified.contextOverflow, `${server}: ${classified.message}`).toBe(true);
    expect(classified.retryable).toBe(false);
  });

  it.each(NOT_OVERFLOWS)("not an overflow: %s", (_name, status, body) => {
    expect(classifyProviderError(apiError(status, body), false).contextOverflow).toBe(false);
  });

  it("names the server whose wording matched", () => {
    const overflowServer = (text: string) =>
      OVERFLOW_PATTERNS.find(({ pattern }) => pattern.test(text))?.server ?? null;
    expect(overflowServer("prompt too long; exceeded max context length by 12 tokens")).toBe("Ollama");
    expect(overflowServer("all good")).toBeNull();
  });

  it("a 429 is never an overflow, whatever it says", () => {
    expect(isContextOverflow("prompt is too long", 429)).toBe(false);
    expect(isContextOverflow("prompt is too long", 400)).toBe(true);
  });
});
