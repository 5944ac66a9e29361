/**
 * `@mariozechner/pi-ai` for extensions: `Type`, `StringEnum`, and `complete` /
 * `getModel` over the worker's own providers and model catalogue.
 */
import {
  AssistantMessageEventStream,
  EventStream,
  createAssistantMessageEventStream,
  providerAsStreamSimple,
} from "../../providers/stream-simple.js";
import { Type, type TSchema } from "typebox";
import type { AssistantMessage, LlmMessage, Model, Usage } from "../../../shared/schema/messages.js";
import type { ExtensionHost } from "../host.js";

/** A string enum as a plain `{type:"string", enum}` schema, as pi sends it (some providers reject `anyOf` of literals). */
export function StringEnum<T extends readonly string[]>(values: T, options: Record<string, unknown> = {}): TSchema {
  return Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...options });
}

/** Options of `complete` that the worker's providers use. */
interface CompleteOptions {
  apiKey?: string;
  signal?: AbortSignal;
  reasoning?: string;
}

/** The module object; `host` gives the session's providers when a function is called. */
export function piAiModule(host: () => ExtensionHost): Record<string, unknown> {
  const complete = async (
    model: Model,
    context: { systemPrompt?: string; messages: LlmMessage[] },
    options: CompleteOptions = {},
  ): Promise<AssistantMessage> => {
    const h = host();
    let final: AssistantMessage | undefined;
    for await (const event of h.provider(model).stream({
      model,
      systemPrompt: context.systemPrompt ?? "",
      messages: context.messages,
      tools: [],
      thinkingLevel: "off",
      apiKey: options.apiKey ?? h.apiKeyFor(model),
      signal: options.signal ?? new AbortController().signal,
    })) {
      if (event.type === "done" || event.type === "error") final = event.message;
    }
    if (!final) throw new Error(`the model ${model.provider}/${model.id} sent no reply`);
    return final;
  };
  const provider = (model: Model) => host().provider(model);
  return {
    Type,
    StringEnum,
    // pi's custom stream contract: an extension's streamSimple builds one, or delegates to ours.
    EventStream,
    AssistantMessageEventStream,
    createAssistantMessageEventStream,
    streamSimpleAnthropic: providerAsStreamSimple(provider, "anthropic-messages"),
    streamSimpleOpenAIResponses: providerAsStreamSimple(provider, "openai-responses"),
    streamSimpleOpenAICompletions: providerAsStreamSimple(provider, "openai-completions"),
    complete,
    completeSimple: complete,
    getModel: (provider: string, id: string) =>
      host()
        .models()
        .find((m) => m.provider === provider && m.id === id),
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
