import { describe, expect, it } from "vitest";
import { isContextOverflow, overflowServer } from "../../worker/providers/context-overflow.js";
import { classifyProviderError } from "../../worker/providers/errors.js";

/**
 * The servers' real overflow errors: [server, HTTP status, error body as sent, where the text was read].
 * pi-ai = @mariozechner/pi-ai 0.73.1 dist/utils/overflow.js (installed in test/upstream), which
 * collects the wording per provider; the other sources are the servers' own code.
 */
const OVERFLOWS: [string, number | undefined, object, string][] = [
  [
    "Anthropic",
    400,
    { type: "error", error: { type: "invalid_request_error", message: "prompt is too long: 213462 tokens > 200000 maximum" } },
    "pi-ai overflow.js",
  ],
  [
    "Anthropic (request bytes)",
    413,
    { type: "error", error: { type: "request_too_large", message: "Request exceeds the maximum size" } },
    "pi-ai overflow.js; the API's error type list (request_too_large = 413)",
  ],
  [
    "OpenAI Chat Completions",
    400,
    {
      message:
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130415 tokens. Please reduce the length of the messages.",
      type: "invalid_request_error",
      param: "messages",
      code: "context_length_exceeded",
    },
    "OpenAI API error body (code context_length_exceeded)",
  ],
  [
    "OpenAI Responses",
    400,
    { message: "Your input exceeds the context window of this model. Please adjust your input and try again.", type: "invalid_request_error", code: "context_length_exceeded" },
    "pi-ai overflow.js",
  ],
  [
    "Azure OpenAI",
    400,
    {
      message:
        "This model's maximum context length is 8192 tokens, however you requested 8367 tokens (7855 in your prompt; 512 for the completion). Please reduce your prompt; or completion length.",
      type: "invalid_request_error",
      code: "context_length_exceeded",
    },
    "Azure OpenAI error body (same code as OpenAI)",
  ],
  [
    "llama.cpp server",
    400,
    {
      code: 400,
      message: "request (8396 tokens) exceeds the available context size (8192 tokens), try increasing it",
      type: "exceed_context_size_error",
      n_prompt_tokens: 8396,
      n_ctx: 8192,
    },
    "ggml-org/llama.cpp tools/server/server-context.cpp send_error(..., ERROR_TYPE_EXCEED_CONTEXT_SIZE); server-task.cpp adds n_prompt_tokens/n_ctx",
  ],
  [
    "llama.cpp server (older builds)",
    400,
    { code: 400, message: "the request exceeds the available context size, try increasing it", type: "invalid_request_error" },
    "pi-ai overflow.js",
  ],
  [
    "vLLM",
    400,
    {
      object: "error",
      message:
        "This model's maximum context length is 4096 tokens. However, you requested 4169 tokens (3657 in the messages, 512 in the completion). Please reduce the length of the messages or completion.",
      type: "BadRequestError",
      param: null,
      code: 400,
    },
    "vllm-project/vllm entrypoints/openai serving (validate input length)",
  ],
  [
    "vLLM V1 engine",
    400,
    {
      object: "error",
      message: "The decoder prompt (length 5000) is longer than the maximum model length of 4096. Make sure that `max_model_len` is no smaller than the number of text tokens.",
      type: "BadRequestError",
      code: 400,
    },
    "vllm-project/vllm v1/engine/processor.py _validate_model_input",
  ],
  ["Ollama", 400, { message: "prompt too long; exceeded max context length by 100918 tokens", type: "api_error" }, "pi-ai overflow.js (Ollama's explicit overflow)"],
  [
    "LM Studio",
    400,
    { message: "The number of tokens to keep from the initial prompt is greater than the context length. Try to load the model with a larger context length, or provide a shorter input" },
    "pi-ai overflow.js",
  ],
  [
    "OpenRouter",
    400,
    {
      message:
        'This endpoint\'s maximum context length is 200000 tokens. However, you requested about 250000 tokens (250000 of text input). Please reduce the length of either one, or use the "middle-out" transform to compress your prompt automatically.',
      code: 400,
    },
    "pi-ai overflow.js",
  ],
  [
    "Groq",
    400,
    { message: "Please reduce the length of the messages or completion.", type: "invalid_request_error", code: "context_length_exceeded" },
    "pi-ai overflow.js",
  ],
  [
    "Mistral",
    400,
    { object: "error", message: "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length", type: "invalid_request_message_error", code: "3051" },
    "pi-ai overflow.js",
  ],
  [
    "DeepSeek",
    400,
    {
      message:
        "This model's maximum context length is 65536 tokens. However, you requested 210780 tokens (210780 in the messages, 0 in the completion). Please reduce the length of the messages or completion.",
      type: "invalid_request_error",
      code: "invalid_request_error",
    },
    "DeepSeek API error body",
  ],
  [
    "llama.cpp, sent inside a 200 stream",
    undefined,
    { code: 400, message: "request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it", type: "exceed_context_size_error" },
    "as above; the OpenAI SDK raises a stream `error` payload without a status",
  ],
];

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
  ["OpenAI 429 rate limit", 429, { message: "Rate limit reached for gpt-4.1 on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000.", type: "tokens", code: "rate_limit_exceeded" }],
  ["Anthropic 529", 529, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }],
  ["invalid model", 400, { message: "The model `gpt-9` does not exist or you do not have access to it.", type: "invalid_request_error", code: "model_not_found" }],
  ["max_tokens too large for the model (not the input)", 400, { message: "max_tokens: 300000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-6", type: "invalid_request_error" }],
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
    expect(overflowServer("prompt too long; exceeded max context length by 12 tokens")).toBe("Ollama");
    expect(overflowServer("all good")).toBeNull();
  });

  it("a 429 is never an overflow, whatever it says", () => {
    expect(isContextOverflow("prompt is too long", 429)).toBe(false);
    expect(isContextOverflow("prompt is too long", 400)).toBe(true);
  });
});
