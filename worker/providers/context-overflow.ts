/**
 * Recognises "the request does not fit the model's context window" in the error text of
 * every server we talk to. Pure. A recognised overflow leads to one compaction and one
 * retry; an unrecognised one just fails, so each server's wording matters. The texts,
 * with where they were read, are in test/worker/context-overflow.test.ts.
 */

/** One server's overflow wording. */
interface OverflowPattern {
  server: string;
  pattern: RegExp;
}

/** The servers' own words. Several OpenAI-compatible servers share OpenAI's sentence. */
export const OVERFLOW_PATTERNS: readonly OverflowPattern[] = [
  { server: "Anthropic", pattern: /prompt is too long/i },
  { server: "Anthropic (request bytes, 413)", pattern: /request_too_large/i },
  { server: "OpenAI, Azure OpenAI", pattern: /exceeds the context window/i },
  // "This model's maximum context length is N tokens. However, you requested M tokens
  // (...). Please reduce the length of the messages or completion."
  { server: "OpenAI, Azure OpenAI, vLLM, DeepSeek, Groq", pattern: /maximum context length is \d+ tokens/i },
  { server: "OpenAI, Azure OpenAI, Groq (error code)", pattern: /context_length_exceeded/i },
  { server: "Groq, vLLM, DeepSeek", pattern: /reduce the length of the messages/i },
  { server: "vLLM (V1 engine)", pattern: /is longer than the maximum model length/i },
  { server: "llama.cpp (error type)", pattern: /exceed_context_size_error/i },
  { server: "llama.cpp", pattern: /exceeds (?:the available )?context size/i },
  { server: "llama.cpp (older)", pattern: /is larger than the max context size/i },
  { server: "Ollama", pattern: /prompt too long; exceeded (?:max )?context length/i },
  { server: "Ollama (truncation off)", pattern: /input length exceeds the context length/i },
  { server: "LM Studio", pattern: /greater than the context length/i },
  {
    server: "LM Studio (context overflow policy stopAtLimit)",
    pattern: /model is loaded with context length of only/i,
  },
  { server: "OpenRouter", pattern: /maximum context length is \d+/i },
  { server: "Mistral", pattern: /too large for model with \d+ maximum context length/i },
  { server: "Google Gemini (through OpenAI-compatible proxies)", pattern: /input token count.*exceeds the maximum/i },
  { server: "xAI", pattern: /maximum prompt length is \d+/i },
  { server: "Anthropic stop reason, surfaced as text", pattern: /model_context_window_exceeded/i },
  {
    server: "generic (proxies, gateways)",
    pattern: /context[_ ]length[_ ]exceeded|too many tokens|token limit exceeded/i,
  },
];

/** Texts that look like an overflow but are a rate limit: retrying later helps, compacting does not. */
const NOT_OVERFLOW = [/rate.?limit/i, /too many requests/i, /tokens per (?:minute|day)/i, /\bTPM\b/];

/**
 * Whether an error text (the message plus the body's type and code) says the context
 * window is exceeded. `status` is the HTTP status when there was one: a 429 is a rate
 * limit whatever it says (Groq's "Request too large ... tokens per minute"). Other
 * statuses decide nothing: servers answer overflows with 400, 413, or an error event
 * inside a 200 stream, and proxies rewrite statuses.
 */
export function isContextOverflow(text: string, status?: number): boolean {
  if (status === 429) return false;
  if (NOT_OVERFLOW.some((p) => p.test(text))) return false;
  return OVERFLOW_PATTERNS.some(({ pattern }) => pattern.test(text));
}
