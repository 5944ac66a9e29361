/**
 * `@earendil-works/pi-ai` (and `@mariozechner/pi-ai`) for extensions, as pi 1.6.0's
 * extension view of it (its `/compat` entry plus TypeBox's `Type`): `StringEnum`,
 * `complete` / `getModel` over the worker's own providers and model catalogue, the
 * stream contract, and the transcript helpers custom providers read their context with.
 */
import {
  AssistantMessageEventStream,
  EventStream,
  createAssistantMessageEventStream,
  providerAsStreamSimple,
  type PiStreamOptions,
} from "../../providers/stream-simple.js";
import type { TSchema } from "typebox";
import { Unsafe } from "typebox/type";
import type { AssistantMessage, LlmMessage, Model, ThinkingLevel, Usage } from "../../../shared/schema/messages.js";
import type { ToolSpec } from "../../types.js";
import { parsePartialJson } from "../../providers/message-builder.js";
import { parseToolCallArguments } from "../../providers/tool-arguments.js";
import type { ExtensionHost } from "../host.js";
import { TRANSCRIPT_EXPORTS, getCurrentSystemPrompt, getCurrentTools } from "../../providers/transcript.js";

/** A string enum as a plain `{type:"string", enum}` schema, as pi sends it (some providers reject `anyOf` of literals). */
export function StringEnum<T extends readonly string[]>(values: T, options: Record<string, unknown> = {}): TSchema {
  return Unsafe<T[number]>({ type: "string", enum: [...values], ...options });
}

export { parseToolCallArguments };

/**
 * pi-ai's `ToolCallArgumentsStream`: a tool call's argument text as it streams, and the
 * arguments parsed so far (a new object only when they changed).
 */
export class ToolCallArgumentsStream {
  #text = "";
  #snapshot = "{}";
  #arguments: Record<string, unknown> = {};
  /** The argument text received so far. */
  get text(): string {
    return this.#text;
  }
  /** Append a piece of argument text; the partial arguments. */
  append(delta: string): Record<string, unknown> {
    this.#text += delta;
    return this.#partial();
  }
  /** Take the complete text: the missing piece as `delta` when it continues the text so far, else start over. */
  replace(text: string): { delta: string | undefined; arguments: Record<string, unknown> } {
    if (text.startsWith(this.#text)) {
      const delta = text.slice(this.#text.length);
      return { delta, arguments: delta === "" ? this.#partial() : this.append(delta) };
    }
    this.#text = "";
    return { delta: undefined, arguments: this.append(text) };
  }
  /** The final arguments, parsed once from the whole text (with `argumentsError` when malformed). */
  finish(): { arguments: Record<string, unknown>; argumentsError?: string } {
    return parseToolCallArguments(this.#text);
  }
  #partial(): Record<string, unknown> {
    const parsed = parsePartialJson(this.#text);
    const snapshot = JSON.stringify(parsed);
    if (snapshot !== this.#snapshot) {
      this.#snapshot = snapshot;
      this.#arguments = parsed;
    }
    return this.#arguments;
  }
}

/** Options of `complete` that the worker's providers use. */
interface CompleteOptions {
  apiKey?: string;
  signal?: AbortSignal;
  reasoning?: ThinkingLevel;
}

/** A context in either shape: pi 1.x's transcript (system messages first) or 0.73's (`systemPrompt` beside). */
type AnyContext = { systemPrompt?: string; tools?: ToolSpec[]; messages: LlmMessage[] };

/** `model`'s reply to `context` through the session's providers (pi-ai's `complete`, `modelRegistry.complete`). */
export async function completeOn(
  h: ExtensionHost,
  model: Model,
  context: AnyContext,
  options: CompleteOptions = {},
): Promise<AssistantMessage> {
  const all = context.messages as unknown as { role: string }[];
  let final: AssistantMessage | undefined;
  for await (const event of h.provider(model).stream({
    model,
    systemPrompt: context.systemPrompt ?? getCurrentSystemPrompt(all),
    messages: all.filter((m) => m.role !== "system") as LlmMessage[],
    tools: context.tools ?? (getCurrentTools(all) as ToolSpec[]),
    thinkingLevel: options.reasoning && model.reasoning ? options.reasoning : "off",
    apiKey: options.apiKey ?? h.apiKeyFor(model),
    signal: options.signal ?? new AbortController().signal,
  })) {
    if (event.type === "done" || event.type === "error") final = event.message;
  }
  if (!final) throw new Error(`the model ${model.provider}/${model.id} sent no reply`);
  return final;
}

/** `model`'s reply as pi's event stream (`modelRegistry.streamSimple`), the key resolved by the session. */
export function streamOn(
  h: ExtensionHost,
  model: Model,
  context: AnyContext,
  options: PiStreamOptions = {},
): AssistantMessageEventStream {
  return providerAsStreamSimple((m) => h.provider(m), model.api)(model, context, {
    ...options,
    apiKey: options.apiKey ?? h.apiKeyFor(model),
  });
}

/**
 * The module object; `host` gives the session's providers when a function is called. `Type`
 * is typebox's (its whole index, which the worker loads only for extensions).
 */
export function piAiModule(host: () => ExtensionHost, Type: unknown): Record<string, unknown> {
  const complete = (model: Model, context: AnyContext, options?: CompleteOptions) =>
    completeOn(host(), model, context, options);
  const provider = (model: Model) => host().provider(model);
  const streamSimpleAnthropic = providerAsStreamSimple(provider, "anthropic-messages");
  const streamSimpleOpenAIResponses = providerAsStreamSimple(provider, "openai-responses");
  const streamSimpleOpenAICompletions = providerAsStreamSimple(provider, "openai-completions");
  // pi 1.x's `streamSimple(model, ...)`: the stream of the model's own API, whichever it is.
  const streamSimple = (model: Model, context: never, options?: never) =>
    providerAsStreamSimple(provider, model.api)(model, context, options);
  return {
    Type,
    StringEnum,
    ...TRANSCRIPT_EXPORTS,
    ToolCallArgumentsStream,
    PI_AI_VERSION: "1.6.0",
    parseStreamingJson: (text: string | undefined) => parsePartialJson(text ?? ""),
    parseToolCallArguments,
    modelsAreEqual: (a?: Model, b?: Model) => !!a && !!b && a.provider === b.provider && a.id === b.id,
    // pi's custom stream contract: an extension's streamSimple builds one, or delegates to ours.
    EventStream,
    AssistantMessageEventStream,
    createAssistantMessageEventStream,
    streamSimple,
    stream: streamSimple,
    streamSimpleAnthropic,
    streamSimpleOpenAIResponses,
    streamSimpleOpenAICompletions,
    streamAnthropic: streamSimpleAnthropic,
    streamOpenAIResponses: streamSimpleOpenAIResponses,
    streamOpenAICompletions: streamSimpleOpenAICompletions,
    // pi 1.x's wire APIs as objects (`anthropicMessagesApi().streamSimple(...)`).
    anthropicMessagesApi: () => ({ api: "anthropic-messages", streamSimple: streamSimpleAnthropic }),
    openAIResponsesApi: () => ({ api: "openai-responses", streamSimple: streamSimpleOpenAIResponses }),
    openAICompletionsApi: () => ({ api: "openai-completions", streamSimple: streamSimpleOpenAICompletions }),
    complete,
    completeSimple: complete,
    getModel: (provider: string, id: string) =>
      host()
        .models()
        .find((m) => m.provider === provider && m.id === id),
    getProviders: () => [
      ...new Set(
        host()
          .models()
          .map((m) => m.provider),
      ),
    ],
    getModels: (provider: string) =>
      host()
        .models()
        .filter((m) => m.provider === provider),
    calculateCost: (model: Model, usage: Usage) => {
      const c = model.cost;
      usage.cost.input = (c.input / 1e6) * usage.input;
      usage.cost.output = (c.output / 1e6) * usage.output;
      usage.cost.cacheRead = (c.cacheRead / 1e6) * usage.cacheRead;
      usage.cost.cacheWrite = (c.cacheWrite / 1e6) * usage.cacheWrite;
      usage.cost.total = usage.cost.input + usage.cost.output + usage.cost.cacheRead + usage.cost.cacheWrite;
      return usage.cost;
    },
  };
}
