/**
 * pi's custom stream contract (`registerProvider({ api, streamSimple })`) on both sides:
 * an extension's `streamSimple` as one of our providers, and our providers as pi-ai's
 * `streamSimple*` functions an extension may delegate to. pi's stream is an
 * `AssistantMessageEventStream`: `start`, block deltas, then `done {reason, message}` or
 * `error {reason, error}`, which ends it.
 */
import type { AssistantMessage, LlmMessage, Model, ThinkingLevel } from "../../shared/schema/messages.js";
import type { AssistantMessageEvent } from "../../shared/schema/events.js";
import type { Provider, ProviderEvent, ProviderRequest, ToolSpec } from "../types.js";
import { failStream } from "./finish.js";
import { MessageBuilder } from "./message-builder.js";
import { getCurrentSystemPrompt, getCurrentTools, normalizeContext } from "./transcript.js";

/** An event of pi's stream (pi-ai's `AssistantMessageEvent`). */
export type PiStreamEvent =
  | { type: "start"; partial: AssistantMessage }
  | AssistantMessageEvent
  | { type: "done"; reason: string; message: AssistantMessage }
  | { type: "error"; reason: string; error: AssistantMessage };

/**
 * pi-ai's context: since pi 0.86 a `TranscriptContext`, whose `messages` start with a
 * system message holding the prompt and the tools (`getCurrentSystemPrompt`,
 * `getCurrentTools` read them); `systemPrompt` and `tools` beside them are 0.73's.
 */
export interface PiContext {
  systemPrompt?: string;
  messages: LlmMessage[];
  tools?: ToolSpec[];
}

/** pi-ai's `SimpleStreamOptions`, the part we fill in. */
export interface PiStreamOptions {
  apiKey?: string;
  signal?: AbortSignal;
  reasoning?: Exclude<ThinkingLevel, "off">;
  maxTokens?: number;
}

/** An extension's `streamSimple(model, context, options)`. */
export type StreamSimple = (
  model: Model,
  context: PiContext,
  options: PiStreamOptions,
) => AsyncIterable<PiStreamEvent> | Promise<AsyncIterable<PiStreamEvent>>;

/**
 * pi-ai's `EventStream`: push events, iterate them once; `result()` resolves with the
 * final message once the completing event was pushed (or `end(result)` gave one).
 */
export class EventStream<E, R> implements AsyncIterable<E> {
  private readonly queue: E[] = [];
  private readonly waiting: ((r: IteratorResult<E>) => void)[] = [];
  private done = false;
  private readonly final: Promise<R>;
  private resolveFinal!: (r: R) => void;

  constructor(
    private readonly isComplete: (event: E) => boolean,
    private readonly extractResult: (event: E) => R,
  ) {
    this.final = new Promise((res) => (this.resolveFinal = res));
  }

  /** Deliver an event; after the completing one, further pushes are ignored (as pi's). */
  push(event: E): void {
    if (this.done) return;
    if (this.isComplete(event)) {
      this.done = true;
      this.resolveFinal(this.extractResult(event));
    }
    const waiter = this.waiting.shift();
    if (waiter) waiter({ value: event, done: false });
    else this.queue.push(event);
  }

  /** End the stream without a completing event (optionally with the result). */
  end(result?: R): void {
    this.done = true;
    if (result !== undefined) this.resolveFinal(result);
    for (const waiter of this.waiting.splice(0)) waiter({ value: undefined, done: true });
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<E> {
    for (;;) {
      if (this.queue.length > 0) yield this.queue.shift()!;
      else if (this.done) return;
      else {
        const next = await new Promise<IteratorResult<E>>((res) => this.waiting.push(res));
        if (next.done) return;
        yield next.value;
      }
    }
  }

  /** The final message. */
  result(): Promise<R> {
    return this.final;
  }
}

/** pi-ai's `AssistantMessageEventStream`: completes on `done` (its message) or `error` (its error message). */
export class AssistantMessageEventStream extends EventStream<PiStreamEvent, AssistantMessage> {
  constructor() {
    super(
      (e) => e.type === "done" || e.type === "error",
      (e) => {
        if (e.type === "done") return e.message;
        if (e.type === "error") return e.error;
        throw new Error("Unexpected event type for final result");
      },
    );
  }
}

/** pi-ai's `createAssistantMessageEventStream()`. */
export function createAssistantMessageEventStream(): AssistantMessageEventStream {
  return new AssistantMessageEventStream();
}

/** What pi's session gives a custom stream: no maxTokens (the stream picks its own), as upstream's requests show. */
function piOptions(request: ProviderRequest): PiStreamOptions {
  return {
    apiKey: request.apiKey,
    signal: request.signal,
    ...(request.thinkingLevel !== "off" && request.model.reasoning ? { reasoning: request.thinkingLevel } : {}),
  };
}

/**
 * An extension's `streamSimple` as a provider: its events become ours; a throw, or a
 * stream that ends without `done` / `error`, becomes an `error` event (a provider never throws).
 */
export function streamSimpleProvider(streamSimple: StreamSimple, owner: string): Provider {
  return {
    async *stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
      const { model } = request;
      const builder = new MessageBuilder(model.api, model.provider, model.id);
      let started = false;
      try {
        // pi 1.x's transcript (system message first), with 0.73's fields kept for streams written then.
        const context: PiContext = {
          systemPrompt: request.systemPrompt,
          messages: normalizeContext({
            systemPrompt: request.systemPrompt,
            tools: request.tools,
            messages: request.messages,
          }).messages as LlmMessage[],
          tools: request.tools,
        };
        for await (const event of await streamSimple(model, context, piOptions(request))) {
          if (event.type === "done" || event.type === "error") {
            const message = event.type === "done" ? event.message : event.error;
            // The loop reads these as our assistant messages: anything else is the stream's fault, said as such.
            if (!isAssistantMessage(message))
              throw new Error(
                `the stream of ${owner} sent ${event.type === "error" ? "an" : "a"} ${event.type} event without an assistant message (${event.type === "done" ? "message" : "error"}: ${describe(message)})`,
              );
          }
          if (event.type === "done") {
            if (!started) yield { type: "start", partial: event.message };
            yield { type: "done", message: event.message };
            return;
          }
          if (event.type === "error") {
            if (!started) yield { type: "start", partial: event.error };
            yield { type: "error", message: event.error, retryable: false };
            return;
          }
          if (event.type === "start") {
            if (started) continue;
            started = true;
          } else if (!started) {
            started = true;
            yield { type: "start", partial: event.partial };
          }
          yield event;
        }
        throw new Error(`the stream of ${owner} ended without a done or error event`);
      } catch (err) {
        if (!started) yield builder.start();
        yield* failStream(builder, err, request.signal.aborted);
      }
    },
  };
}

/**
 * One of our providers as pi-ai's `streamSimple*(model, context, options)` (what an
 * extension's own stream may delegate to); `api` is the wire API to speak.
 */
export function providerAsStreamSimple(
  provider: (model: Model) => Provider,
  api: Model["api"],
): (model: Model, context: PiContext, options?: PiStreamOptions) => AssistantMessageEventStream {
  return (model, context, options = {}) => {
    const out = createAssistantMessageEventStream();
    const wire = { ...model, api };
    // Either shape: a transcript's system messages give the prompt and tools when the 0.73 fields are absent.
    const all = context.messages as unknown as { role: string }[];
    const request: ProviderRequest = {
      model: wire,
      systemPrompt: context.systemPrompt ?? getCurrentSystemPrompt(all),
      messages: all.filter((m) => m.role !== "system") as LlmMessage[],
      tools: context.tools ?? (getCurrentTools(all) as ToolSpec[]),
      thinkingLevel: options.reasoning ?? "off",
      apiKey: options.apiKey,
      signal: options.signal ?? new AbortController().signal,
    };
    const relay = (event: ProviderEvent): void => {
      if (event.type === "done") out.push({ type: "done", reason: event.message.stopReason, message: event.message });
      else if (event.type === "error")
        out.push({ type: "error", reason: event.message.stopReason, error: event.message });
      else out.push(event);
    };
    void (async () => {
      try {
        for await (const event of provider(wire).stream(request)) relay(event);
      } catch (err) {
        // Our providers end in an error event rather than throw; a throw here (a provider that
        // failed to load) still ends the extension's stream with one, never an unhandled rejection.
        for (const event of failStream(
          new MessageBuilder(wire.api, wire.provider, wire.id),
          err,
          request.signal.aborted,
        ))
          relay(event);
      } finally {
        out.end();
      }
    })();
    return out;
  };
}

/** Whether `value` has the shape the agent loop reads as an assistant message. */
function isAssistantMessage(value: unknown): value is AssistantMessage {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { role?: unknown }).role === "assistant" &&
    Array.isArray((value as { content?: unknown }).content)
  );
}

function describe(value: unknown): string {
  if (value === null || typeof value !== "object") return String(value);
  return `an object with ${Object.keys(value).join(", ") || "no keys"}`;
}
