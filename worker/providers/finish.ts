/**
 * The end of a provider stream, the same for every SDK: an abort the SDK swallowed,
 * a stream cut before the model said why it stopped, a refusal, or a normal finish.
 */
import type { StopReason } from "../../shared/schema/messages.js";
import type { ProviderEvent } from "../types.js";
import { classifyProviderError } from "./errors.js";
import type { MessageBuilder } from "./message-builder.js";
import { DEFAULT_MAX_RETRY_DELAY_MS, waitTooLong } from "./retry-delay.js";

/** How a stream ended, as read from the provider's final chunk. */
export interface StreamEnd {
  aborted: boolean;
  /** The provider's own stop reason (`stop_reason`, `finish_reason`), null if none came. */
  rawReason: string | null;
  /** `rawReason` mapped to ours; `error` for a refusal or content filter. */
  mapped: StopReason | null;
  /** The provider's field name, for messages: `stop_reason` or `finish_reason`. */
  field: string;
}

/** Events that close the message: `done`, or `error` with a reason a user can read. */
export function* finishStream(builder: MessageBuilder, end: StreamEnd): Generator<ProviderEvent> {
  if (end.aborted) {
    const failure = classifyProviderError(null, true);
    yield* builder.fail(failure.message, failure);
    return;
  }
  if (end.rawReason === null || end.mapped === null) {
    yield* builder.fail(`The model stream ended before the model finished (no ${end.field}); the connection was probably cut.`, {
      retryable: true,
    });
    return;
  }
  if (end.mapped === "error") {
    yield* builder.fail(`The model stopped with ${end.field} "${end.rawReason}" and gave no usable answer.`);
    return;
  }
  yield* builder.done(end.mapped);
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
  const tooLong = failure.retryHint ? waitTooLong(failure.retryHint, maxRetryDelayMs) : null;
  if (tooLong) {
    yield* builder.fail(`${failure.message}; not retried: ${tooLong}`, { ...failure, retryable: false });
    return;
  }
  yield* builder.fail(failure.message, failure);
}
