/**
 * Turns whatever a model SDK threw into the facts the agent loop acts on: a message a
 * user can read, and whether retrying or compacting could help. Duck-typed on purpose:
 * it must not import an SDK (they load lazily) and works for both official SDKs.
 */

import { isContextOverflow } from "./context-overflow.js";
import { headerLookup, retryHintFromHeaders, type RetryHint } from "./retry-delay.js";

/** What went wrong with a model request, as the agent loop needs it. */
export interface ClassifiedError {
  /** `"<status> <message from the response body>"` when the server answered, else the error text. */
  message: string;
  /** Transient: rate limit, 5xx, overloaded, dropped connection. */
  retryable: boolean;
  /** The request does not fit the model's context window; retrying as is cannot help. */
  contextOverflow: boolean;
  /** The caller aborted; not a failure of the model. */
  aborted: boolean;
  /** What the response's headers said about retrying (`retry-after`, reset times, `x-should-retry`). */
  retryHint?: RetryHint;
}

/** Where an abort met a model request: sent and waiting for the answer, or reading its stream. */
export type AbortPhase = "awaiting-response" | "streaming";

/**
 * pi 1.6's text for a request its signal aborted, which depends on where the abort met it
 * (checked against upstream pi, test/integration/abort-texts-oracle.test.ts): pi-ai's retry
 * wrapper answers an abort while the request waits for its answer; once the response
 * streams, each API's reader words it: the Anthropic SDK throws the signal's DOMException,
 * the Responses reader ends early and says the stream ended, the others say pi-ai's words.
 */
export function abortedMessage(phase: AbortPhase, api: string): string {
  if (phase === "awaiting-response") return "Request aborted";
  if (api === "anthropic-messages") return "This operation was aborted";
  if (api === "openai-responses") return "OpenAI Responses stream ended before a terminal response event";
  return "Request was aborted";
}

const RETRYABLE_TEXT =
  /overloaded|rate.?limit|ECONNRESET|ETIMEDOUT|EPIPE|socket hang up|fetch failed|connection reset|other side closed|terminated/i;
const CONNECTION_ERROR_NAMES = new Set(["APIConnectionError", "APIConnectionTimeoutError"]);

/**
 * Classify an error thrown by a provider request. Pure. `aborted` is the request
 * signal's state: an abort wins over whatever error the SDK raised while unwinding.
 */
export function classifyProviderError(error: unknown, aborted: boolean, now = Date.now()): ClassifiedError {
  if (aborted)
    return { message: abortedMessage("streaming", ""), retryable: false, contextOverflow: false, aborted: true };

  const status = numberField(error, "status");
  const body = field(error, "error");
  // Anthropic bodies are `{type:"error", error:{type, message}}`; OpenAI's SDK keeps only
  // the inner `{message, type, code}`. Both reach us in `error.error`.
  const inner = field(body, "error") ?? body;
  const bodyMessage = stringField(inner, "message");
  const bodyType = [stringField(inner, "type"), stringField(inner, "code")].filter(Boolean).join(" ");
  // Errors sent mid-stream carry a body but no status.
  const message = bodyMessage ? (status !== undefined ? `${status} ${bodyMessage}` : bodyMessage) : describe(error);
  const text = `${message} ${bodyType} ${causeText(error)}`;

  const contextOverflow = isContextOverflow(text, status);
  // Text is only trusted without a status (connection failures, errors sent mid-stream):
  // a 4xx that happens to say "terminated" is still the caller's fault.
  const retryable =
    !contextOverflow &&
    (status !== undefined
      ? status === 408 || status === 429 || (status >= 500 && status <= 599)
      : CONNECTION_ERROR_NAMES.has(errorName(error)) || RETRYABLE_TEXT.test(text));
  const retryHint = retryHintFromHeaders(headerLookup(field(error, "headers")), now);
  return {
    message,
    retryable,
    contextOverflow,
    aborted: false,
    ...(Object.keys(retryHint).length > 0 ? { retryHint } : {}),
  };
}

/**
 * The error's own text, plus its root cause: connection errors say only "Connection
 * error." and hide the useful part ("connect ECONNREFUSED 127.0.0.1:11434") in `cause`.
 */
function describe(error: unknown): string {
  const own = error instanceof Error ? error.message : typeof error === "string" ? error : JSON.stringify(error);
  let root: string | undefined;
  let current = field(error, "cause");
  for (let depth = 0; current !== undefined && depth < 5; depth++) {
    root = stringField(current, "message") ?? root;
    current = field(current, "cause");
  }
  return root && !own.includes(root) ? `${own} (${root})` : own;
}

/** Messages and codes along the `cause` chain (undici hides ECONNRESET two levels down). */
function causeText(error: unknown): string {
  const parts: string[] = [];
  let current = field(error, "cause");
  for (let depth = 0; current !== undefined && depth < 5; depth++) {
    parts.push(stringField(current, "message") ?? "", stringField(current, "code") ?? "");
    current = field(current, "cause");
  }
  return parts.join(" ");
}

function errorName(error: unknown): string {
  if (!error || typeof error !== "object") return "";
  const ctor = (error as { constructor?: { name?: string } }).constructor?.name ?? "";
  return CONNECTION_ERROR_NAMES.has(ctor) ? ctor : (stringField(error, "name") ?? ctor);
}

function field(value: unknown, key: string): unknown {
  return value && typeof value === "object" ? ((value as Record<string, unknown>)[key] ?? undefined) : undefined;
}

function stringField(value: unknown, key: string): string | undefined {
  const v = field(value, key);
  return typeof v === "string" && v !== "" ? v : undefined;
}

function numberField(value: unknown, key: string): number | undefined {
  const v = field(value, key);
  return typeof v === "number" ? v : undefined;
}
