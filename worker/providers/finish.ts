/**
 * The end of a provider stream, the same for every SDK: an abort the SDK swallowed,
 * a stream cut before the model said why it stopped, a refusal, an unknown stop
 * reason, or a normal finish; and the tables of each API's documented stop reasons.
 */
import type { StopReason } from "../../shared/schema/messages.js";
import type { ProviderEvent } from "../types.js";
import { abortedMessage, classifyProviderError } from "./errors.js";
import type { MessageBuilder } from "./message-builder.js";
import { DEFAULT_MAX_RETRY_DELAY_MS, waitTooLong } from "./retry-delay.js";

/** What a provider's stop reason means for the message. */
export type StopOutcome =
  | { kind: "done"; reason: Extract<StopReason, "stop" | "length" | "toolUse"> }
  /** The model declined; its text (or the provider's explanation) is shown, the run fails. */
  | { kind: "refusal" }
  /** The model ran into the context window while answering: compact and try again. */
  | { kind: "overflow" }
  /** A stop that carries no usable answer (content filter). */
  | { kind: "error" }
  /** A reason nobody documented: an error that names it, never a silent success. */
  | { kind: "unknown" };

/**
 * Anthropic's documented `stop_reason`s. `pause_turn` never reaches this table: the
 * provider continues the turn. `sensitive` is sent by some deployments for filtered output.
 */
export function mapAnthropicStop(reason: string): StopOutcome {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return { kind: "done", reason: "stop" };
    case "max_tokens":
      return { kind: "done", reason: "length" };
    case "tool_use":
      return { kind: "done", reason: "toolUse" };
    case "refusal":
    case "sensitive":
      return { kind: "refusal" };
    case "model_context_window_exceeded":
      return { kind: "overflow" };
    default:
      return { kind: "unknown" };
  }
}

/** OpenAI's documented `finish_reason`s (`end` is what some compatible servers send for `stop`). */
export function mapOpenAIFinish(reason: string): StopOutcome {
  switch (reason) {
    case "stop":
    case "end":
      return { kind: "done", reason: "stop" };
    case "length":
      return { kind: "done", reason: "length" };
    case "tool_calls":
    case "function_call":
      return { kind: "done", reason: "toolUse" };
    case "content_filter":
      return { kind: "error" };
    default:
      return { kind: "unknown" };
  }
}

/** How a stream ended, as read from the provider's final chunk. */
export interface StreamEnd {
  aborted: boolean;
  /** The provider's own stop reason (`stop_reason`, `finish_reason`), null if none came. */
  rawReason: string | null;
  /** What `rawReason` means; null when none came. */
  outcome: StopOutcome | null;
  /** The provider's field name, for messages: `stop_reason` or `finish_reason`. */
  field: string;
  /** Why the model refused, in the provider's words (Anthropic's `stop_details.explanation`, OpenAI's `refusal` text). */
  refusal?: string;
  /** What marked the refusal, for the message, when it was not the stop reason alone (Anthropic's refusal category). */
  refusalDetail?: string;
}

/** Text for a refusal: what marked it and the provider's explanation, else a plain statement. */
export function refusalMessage(end: Pick<StreamEnd, "rawReason" | "field" | "refusal" | "refusalDetail">): string {
  const said = end.refusal?.trim();
  const detail = end.refusalDetail ? `, ${end.refusalDetail}` : "";
  return `The model refused to answer (${end.field} "${end.rawReason}"${detail})${said ? `: ${said}` : "."}`;
}

/**
 * Events that close the message: `done`, or `error` with a reason a user can read. A
 * refusal shows the provider's explanation as the message's text when the model wrote none.
 */
export function* finishStream(builder: MessageBuilder, end: StreamEnd): Generator<ProviderEvent> {
  if (end.aborted) {
    yield* builder.fail(abortedMessage("streaming", builder.message.api), classifyProviderError(null, true));
    return;
  }
  const outcome = end.outcome;
  if (end.rawReason !== null) builder.message.rawStopReason = end.rawReason;
  if (end.rawReason === null || outcome === null) {
    yield* builder.fail(
      `The model stream ended before the model finished (no ${end.field}); the connection was probably cut.`,
      {
        retryable: true,
      },
    );
    return;
  }
  switch (outcome.kind) {
    case "done":
      yield* builder.done(outcome.reason);
      return;
    case "refusal": {
      const text = refusalMessage(end);
      const wrote = builder.message.content.some((c) => c.type === "text" && c.text.trim() !== "");
      if (!wrote) yield* builder.text(end.refusal?.trim() || text);
      yield* builder.fail(text);
      return;
    }
    case "overflow":
      yield* builder.fail(`The model ran out of context window while answering (${end.field} "${end.rawReason}").`, {
        contextOverflow: true,
      });
      return;
    case "error":
      yield* builder.fail(`The model stopped with ${end.field} "${end.rawReason}" and gave no usable answer.`);
      return;
    case "unknown":
      yield* builder.fail(
        `The model stopped with an unknown ${end.field} "${end.rawReason}"; pi-orch does not know whether the answer is complete, so it is treated as an error.`,
      );
      return;
  }
}

/**
 * Events for an exception thrown by an SDK while streaming. A wait the provider asks
 * for past `maxRetryDelayMs` fails at once, with a message that says how long it asked.
 */
export function* failStream(
  builder: MessageBuilder,
  error: unknown,
  aborted: boolean,
  maxRetryDelayMs = DEFAULT_MAX_RETRY_DELAY_MS,
): Generator<ProviderEvent> {
  const failure = classifyProviderError(error, aborted);
  if (failure.aborted) {
    // A builder that never started had no answer yet: the abort met the request waiting for one.
    const phase = builder.started ? "streaming" : "awaiting-response";
    yield* builder.fail(abortedMessage(phase, builder.message.api), failure);
    return;
  }
  const tooLong = failure.retryHint ? waitTooLong(failure.retryHint, maxRetryDelayMs) : null;
  if (tooLong) {
    yield* builder.fail(`${failure.message}; not retried: ${tooLong}`, { ...failure, retryable: false });
    return;
  }
  yield* builder.fail(failure.message, failure);
}
