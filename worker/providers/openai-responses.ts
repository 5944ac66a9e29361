/**
 * `openai-responses`: OpenAI's Responses API through the official `openai` SDK, pi's
 * api for OpenAI's reasoning models. Reasoning arrives as summary text plus an opaque
 * item (with `encrypted_content`, as `store: false` needs); the whole item is kept as
 * the thinking block's signature and goes back unchanged, before the calls it led to.
 * A tool call's id is `call_id|item_id` and a text block's signature holds its message
 * id (pi's `{"v":1,"id":...}`): the API rejects a reasoning item sent back without the
 * item that followed it.
 */
import type OpenAI from "openai";
import type { Model, ThinkingLevel } from "../../shared/schema/messages.js";
import type { Provider, ProviderEvent, ProviderRequest } from "../types.js";
import { sdkClientOptions } from "./client-options.js";
import { failStream, finishStream, type StopOutcome } from "./finish.js";
import { MessageBuilder } from "./message-builder.js";
import { fetchNestingErrorBodies } from "./openai.js";
import { buildResponsesInput, responsesCompat, toResponsesTools } from "./openai-responses-input.js";

/** Create the Responses API provider. Stateless: one client per request. */
export function createOpenAIResponsesProvider(): Provider {
  return {
    async *stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
      const { model, signal } = request;
      const builder = new MessageBuilder(model.api, model.provider, model.id);
      let status: string | null = null;
      let incomplete: string | undefined;
      let refusal = "";
      try {
        const { default: OpenAIClient } = await import("openai");
        const client = new OpenAIClient({ ...sdkClientOptions(request), fetch: fetchNestingErrorBodies });
        const built = buildResponsesParams(request);
        if (built.providerThinkingLevel) builder.message.providerThinkingLevel = built.providerThinkingLevel;
        const params = ((await request.onPayload?.(built.params)) ?? built.params) as typeof built.params;
        const { data: events, response } = await client.responses.create(params, { signal }).withResponse();
        await request.onResponse?.({ status: response.status, headers: Object.fromEntries(response.headers) });
        yield builder.start();
        for await (const event of events) {
          // pi 1.6's provider_stream_event: the SDK's parsed event, before it is normalized.
          if (request.onStreamEvent) await request.onStreamEvent(event);
          switch (event.type) {
            case "response.created":
              builder.setResponseId(event.response.id);
              break;
            case "response.output_item.added": {
              const item = event.item;
              if (item.type === "reasoning") yield* builder.thinking("");
              else if (item.type === "function_call")
                yield* builder.toolCallStart(`${item.call_id}|${item.id}`, item.name);
              break;
            }
            case "response.reasoning_summary_part.added":
              // Parts of one summary read as paragraphs.
              if (event.summary_index > 0) yield* builder.thinking("\n\n");
              break;
            case "response.reasoning_summary_text.delta":
              yield* builder.thinking(event.delta);
              break;
            case "response.output_text.delta":
              yield* builder.text(event.delta);
              break;
            case "response.refusal.delta":
              refusal += event.delta;
              yield* builder.text(event.delta);
              break;
            case "response.function_call_arguments.delta":
              yield* builder.toolCallDelta(event.delta);
              break;
            case "response.output_item.done": {
              // The finished reasoning item, opaque parts included, is what goes back.
              if (event.item.type === "reasoning" && builder.openKind() === "thinking")
                yield* builder.thinking("", JSON.stringify(event.item));
              // A message's id goes back with it: a reasoning item is rejected without the item it led to.
              if (event.item.type === "message" && builder.openKind() === "text") {
                const block = builder.message.content.at(-1);
                if (block?.type === "text") block.textSignature = JSON.stringify({ v: 1, id: event.item.id });
              }
              const end = builder.closeOpen();
              if (end) yield end;
              break;
            }
            case "response.completed":
            case "response.incomplete":
            case "response.failed": {
              const r = event.response;
              status = r.status ?? event.type.slice("response.".length);
              incomplete = r.incomplete_details?.reason ?? undefined;
              if (r.usage) {
                const cached = r.usage.input_tokens_details?.cached_tokens ?? 0;
                builder.setUsage(
                  {
                    input: Math.max(0, r.usage.input_tokens - cached),
                    output: r.usage.output_tokens,
                    cacheRead: cached,
                    reasoning: r.usage.output_tokens_details?.reasoning_tokens ?? 0,
                  },
                  model.cost,
                );
              }
              if (event.type === "response.failed") {
                throw Object.assign(new Error(r.error?.message ?? "the response failed"), {
                  error: r.error ?? undefined,
                });
              }
              break;
            }
          }
        }
      } catch (error) {
        yield* failStream(builder, error, signal.aborted, request.maxRetryDelayMs);
        return;
      }
      const rawReason = status === "incomplete" ? `incomplete: ${incomplete ?? "unknown"}` : status;
      yield* finishStream(builder, {
        aborted: signal.aborted,
        rawReason,
        outcome: status === null ? null : refusal ? { kind: "refusal" } : mapResponseStatus(status, incomplete),
        field: "status",
        ...(refusal ? { refusal, refusalDetail: "with a refusal" } : {}),
      });
    },
  };
}

/** A response's final `status` (and why it is incomplete) as a stop. */
export function mapResponseStatus(status: string, incompleteReason: string | undefined): StopOutcome {
  if (status === "completed") return { kind: "done", reason: "stop" };
  if (status === "incomplete") {
    if (incompleteReason === "max_output_tokens") return { kind: "done", reason: "length" };
    if (incompleteReason === "content_filter") return { kind: "error" };
  }
  return { kind: "unknown" };
}

/** OpenAI's longest `prompt_cache_key`. */
const PROMPT_CACHE_KEY_MAX_LENGTH = 64;
/** The floor pi-ai puts under `max_output_tokens`. */
const MIN_OUTPUT_TOKENS = 16;
/** pi-ai's fixed `reasoning.effort` while `configuration_update` items carry the level (it is part of the cached prompt). */
const CONFIGURATION_UPDATE_REQUEST_EFFORT = "medium";

/**
 * The Responses request for one provider request, as pi-ai 1.6.0 builds it, and the effort
 * the reply is made with when `configuration_update` items set it (its `providerThinkingLevel`).
 */
export function buildResponsesParams(request: ProviderRequest): {
  params: OpenAI.Responses.ResponseCreateParamsStreaming;
  providerThinkingLevel?: string;
} {
  const { model } = request;
  const compat = responsesCompat(model);
  const level = model.reasoning && request.thinkingLevel !== "off" ? effortOf(model, request.thinkingLevel) : undefined;
  const effort = compat.supportsMidConvoEffort ? level : undefined;
  const { input, requestTools } = buildResponsesInput(request, effort);
  const params: OpenAI.Responses.ResponseCreateParamsStreaming = {
    model: model.id,
    input: input as OpenAI.Responses.ResponseInput,
    stream: true,
    // Nothing is kept on OpenAI's side; reasoning travels back encrypted instead.
    store: false,
  };
  // As pi 1.6: the session's id keys the prompt cache; PI_CACHE_RETENTION=long asks to keep it longer.
  if (request.sessionId && compat.promptCacheKeyMode !== "disabled")
    params.prompt_cache_key = Array.from(request.sessionId).slice(0, PROMPT_CACHE_KEY_MAX_LENGTH).join("");
  const long = process.env.PI_CACHE_RETENTION === "long" && compat.supportsLongCacheRetention;
  if (long && compat.supportsExplicitPromptCacheMode) Object.assign(params, { prompt_cache_options: { ttl: "30m" } });
  else if (long) params.prompt_cache_retention = "24h";
  if (compat.supportsMaxOutputTokens) params.max_output_tokens = Math.max(model.maxTokens, MIN_OUTPUT_TOKENS);
  if (requestTools.length > 0)
    params.tools = toResponsesTools(requestTools, compat.supportsStrictMode) as unknown as OpenAI.Responses.Tool[];
  if (model.reasoning) {
    if (level !== undefined) {
      const sent = effort === undefined ? level : CONFIGURATION_UPDATE_REQUEST_EFFORT;
      params.reasoning = { effort: sent as OpenAI.ReasoningEffort, summary: "auto" };
      params.include = ["reasoning.encrypted_content"];
    }
    // As pi 1.6: thinking off is said ("none", or the model's own word), unless the model
    // cannot turn it off (its map has `off: null`).
    else if (model.thinkingLevelMap?.off !== null)
      params.reasoning = { effort: (model.thinkingLevelMap?.off ?? "none") as OpenAI.ReasoningEffort };
  }
  return { params, ...(effort !== undefined ? { providerThinkingLevel: effort } : {}) };
}

/** The effort for a level: the model's own word for it (pi 1.6's `thinkingLevelMap`), else the level. */
function effortOf(model: Pick<Model, "thinkingLevelMap">, level: Exclude<ThinkingLevel, "off">): string {
  const mapped = model.thinkingLevelMap?.[level];
  if (typeof mapped === "string") return mapped;
  return level === "minimal" ? "low" : level;
}
