/**
 * `openai-completions`: OpenAI and every server that speaks its Chat Completions API
 * (Ollama, vLLM, LM Studio, ...) through the official `openai` SDK and the model's
 * base URL. The SDK is imported on the first request.
 */
import type OpenAI from "openai";
import type {
  ImageContent,
  LlmMessage,
  Model,
  TextContent,
  ThinkingContent,
  Usage,
} from "../../shared/schema/messages.js";
import type { PlacedSystemMessage, Provider, ProviderEvent, ProviderRequest, ToolSpec } from "../types.js";
import { sdkClientOptions } from "./client-options.js";
import { detectCompat, resolveCompat, type ResolvedCompat } from "./compat.js";
import { failStream, finishStream, mapOpenAIFinish } from "./finish.js";
import { MessageBuilder } from "./message-builder.js";
import { getSystemMessageText, renderSystemMessageUpdate, resolveTranscriptTools } from "./transcript.js";

type ChatMessage = OpenAI.Chat.ChatCompletionMessageParam;

/** Reasoning text as compatible servers name it: DeepSeek/vLLM/SGLang/llama.cpp, OpenRouter/Ollama/Groq. */
const REASONING_FIELDS = ["reasoning_content", "reasoning", "reasoning_text"] as const;

/** A streamed delta with the fields compatible servers add beside OpenAI's. */
type Delta = OpenAI.Chat.ChatCompletionChunk.Choice.Delta & Record<string, unknown>;

/** Create the OpenAI-compatible provider. Stateless: one client per request. */
export function createOpenAIProvider(): Provider {
  return {
    async *stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
      const { model, signal } = request;
      const builder = new MessageBuilder(model.api, model.provider, model.id);
      let finishReason: string | null = null;
      let refusal = "";
      try {
        const { default: OpenAIClient } = await import("openai");
        const client = new OpenAIClient({ ...sdkClientOptions(request), fetch: fetchNestingErrorBodies });
        const built = buildOpenAIParams(request);
        const params = ((await request.onPayload?.(built)) ?? built) as typeof built;
        const { data: chunks, response } = await client.chat.completions.create(params, { signal }).withResponse();
        await request.onResponse?.({ status: response.status, headers: Object.fromEntries(response.headers) });
        yield builder.start();
        const calls = new ToolCallTracker();
        for await (const chunk of chunks) {
          // pi 1.6's provider_stream_event: the SDK's parsed event, before it is normalized.
          if (request.onStreamEvent) await request.onStreamEvent(chunk);
          builder.setResponseId(chunk.id);
          const choice = chunk.choices?.[0] as
            | (OpenAI.Chat.ChatCompletionChunk.Choice & { usage?: OpenAI.CompletionUsage })
            | undefined;
          // Moonshot puts usage on the choice; vLLM (continuous_usage_stats) on every chunk, the last one wins.
          const usage = chunk.usage ?? choice?.usage;
          if (usage) builder.setUsage(usageOf(usage), model.cost);
          if (!choice) continue;
          if (choice.finish_reason) finishReason = choice.finish_reason;
          const delta = choice.delta as Delta | undefined;
          if (!delta) continue;
          // Some servers send the same reasoning under two names; the first one wins. The field
          // name is kept as the block's signature: it is where the reasoning goes back.
          const field = REASONING_FIELDS.find((f) => typeof delta[f] === "string" && delta[f] !== "");
          if (field)
            yield* builder.thinking(delta[field] as string, builder.openKind() === "thinking" ? undefined : field);
          if (delta.content) yield* builder.text(delta.content);
          if (typeof delta.refusal === "string" && delta.refusal !== "") {
            refusal += delta.refusal;
            yield* builder.text(delta.refusal);
          }
          for (const call of delta.tool_calls ?? []) {
            const start = calls.next(call, chunk.id);
            if (start === "skip") continue;
            if (start) yield* builder.toolCallStart(start.id, start.name);
            // An empty first piece is a delta too, as pi reports it.
            if (call.function?.arguments !== undefined) yield* builder.toolCallDelta(call.function.arguments);
          }
        }
      } catch (error) {
        yield* failStream(builder, error, signal.aborted, request.maxRetryDelayMs);
        return;
      }
      // The SDK ends the iteration quietly when the signal aborts it. A refusal comes with
      // finish_reason "stop": the refusal text is what makes it one.
      yield* finishStream(builder, {
        aborted: signal.aborted,
        rawReason: finishReason,
        outcome: finishReason === null ? null : refusal ? { kind: "refusal" } : mapOpenAIFinish(finishReason),
        field: "finish_reason",
        ...(refusal ? { refusal, refusalDetail: "with a refusal" } : {}),
      });
    },
  };
}

/**
 * `fetch` that nests a top-level error body (`{"object":"error","message":...}`, as
 * Mistral and older vLLM send) under `error`, where the SDK looks for it: without this
 * the SDK reports "400 status code (no body)" and the server's words, an overflow
 * among them, are lost.
 */
export async function fetchNestingErrorBodies(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const response = await fetch(input, init);
  if (response.ok) return response;
  const text = await response.text();
  let body = text;
  try {
    const json = JSON.parse(text) as Record<string, unknown> | null;
    if (json && typeof json === "object" && !("error" in json) && typeof json.message === "string")
      body = JSON.stringify({ error: json });
  } catch {
    // Not JSON: the SDK reports the text as it is.
  }
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  headers.delete("content-encoding");
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}

/**
 * Which streamed tool-call delta belongs to which call, as servers really send them:
 * OpenAI numbers calls by `index` and sends the `id` once; Ollama sends every call
 * whole with `index: 0` and a new `id`; Mistral sends no `index`; Qwen repeats
 * `index` with an empty `id` on continuations. A new non-empty `id` always starts a call.
 */
export class ToolCallTracker {
  private open: { index: number | undefined; id: string } | null = null;
  private count = 0;

  /** For one delta: the call to start, null to continue the open one, or "skip" for a late delta of a closed call. */
  next(
    call: { index?: number; id?: string | null; function?: { name?: string | null } },
    responseId: string,
  ): { id: string; name: string } | null | "skip" {
    const id = call.id ? call.id : undefined;
    const index = typeof call.index === "number" ? call.index : undefined;
    const open = this.open;
    if (
      open &&
      (id === undefined || id === open.id) &&
      (index === undefined || open.index === undefined || index === open.index)
    ) {
      return null;
    }
    // An earlier call's delta after a later one started: the builder closed it already.
    if (open && id === undefined && index !== undefined && open.index !== undefined && index < open.index)
      return "skip";
    this.open = { index, id: id ?? `call_${responseId}_${this.count}` };
    this.count++;
    return { id: this.open.id, name: call.function?.name ?? "" };
  }
}

/** The Chat Completions request for one provider request. Exported for tests of the wire shape. */
export function buildOpenAIParams(request: ProviderRequest): OpenAI.Chat.ChatCompletionCreateParamsStreaming {
  const { model } = request;
  const compat = resolveCompat(model);
  const thinking = model.reasoning && request.thinkingLevel !== "off";
  // pi 1.6: a model that takes system messages mid-conversation gets the session's later
  // ones in place, so the request's start stays the bytes the provider cached.
  const inPlace = compat.supportsMidConvoSystemMessages ? request.systemMessages : undefined;
  const plan = inPlace
    ? resolveTranscriptTools(
        inPlace.map((p) => p.message),
        compat.supportsMidConvoToolAdditions ? "additions" : "none",
      )
    : undefined;
  const params: OpenAI.Chat.ChatCompletionCreateParamsStreaming & Record<string, unknown> = {
    model: model.id,
    messages: toOpenAIMessages(request.systemPrompt, request.messages, {
      compat,
      model,
      ...(inPlace && plan ? { inPlace: { messages: inPlace, foldedTools: plan.foldedSystemMessages } } : {}),
    }),
    stream: true,
  };
  params[compat.maxTokensField] = model.maxTokens;
  if (compat.supportsUsageInStreaming) params.stream_options = { include_usage: true };
  const tools = plan ? plan.requestTools : request.tools;
  if (tools.length > 0) params.tools = tools.map((t) => toOpenAITool(t, compat.supportsStrictMode));
  if (model.reasoning) {
    const effort = request.thinkingLevel === "off" ? undefined : request.thinkingLevel;
    switch (compat.thinkingFormat) {
      case "deepseek":
        params.thinking = { type: thinking ? "enabled" : "disabled" };
        if (effort && compat.supportsReasoningEffort) params.reasoning_effort = effort;
        break;
      case "openrouter":
        params.reasoning = { effort: effort ?? "none" };
        break;
      case "zai":
      case "qwen":
        params.enable_thinking = thinking;
        break;
      case "qwen-chat-template":
        params.chat_template_kwargs = { enable_thinking: thinking, preserve_thinking: true };
        break;
      default:
        if (effort && compat.supportsReasoningEffort) params.reasoning_effort = effort;
    }
  }
  return params;
}

function toOpenAITool(tool: ToolSpec, strictField: boolean): OpenAI.Chat.ChatCompletionFunctionTool {
  return {
    type: "function",
    function: {
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters as OpenAI.FunctionParameters,
      ...(strictField ? { strict: false } : {}),
    },
  };
}

/**
 * Conversation to Chat Completions messages: the system prompt first, tool results as
 * `tool` messages. Assistant text goes as one plain string, the form every compatible
 * server accepts. Reasoning goes back in the field it came in (`reasoning_content`,
 * `reasoning`): DeepSeek rejects a tool loop without it, the others ignore or use it.
 * Reasoning from another API (no field name) is not sent, unless the server wants it as text.
 */
export function toOpenAIMessages(
  systemPrompt: string,
  messages: LlmMessage[],
  opts: { compat: ResolvedCompat; model: Pick<Model, "reasoning">; inPlace?: InPlaceSystem } = {
    compat: detectCompat({ provider: "", baseUrl: "" }),
    model: { reasoning: false },
  },
): ChatMessage[] {
  const { compat, inPlace } = opts;
  const out: ChatMessage[] = [];
  if (!inPlace && systemPrompt) out.push({ role: "system", content: systemPrompt });
  const instructionRole = opts.model.reasoning && compat.supportsDeveloperRole ? "developer" : "system";
  let placed = 0;
  // The system messages that stand before message `index`: the leading one whole, later ones
  // as pi renders an update, each after a `system` message declaring the tools it adds in place.
  const placeSystem = (index: number) => {
    for (; placed < (inPlace?.messages.length ?? 0) && inPlace!.messages[placed]!.at <= index; placed++) {
      const { message } = inPlace!.messages[placed]!;
      const added = placed >= inPlace!.foldedTools ? (message.toolsAdded ?? []) : [];
      if (added.length > 0)
        out.push({ role: "system", tools: added.map((t) => toOpenAITool(t, compat.supportsStrictMode)) } as never);
      const text = placed === 0 ? getSystemMessageText(message) : renderSystemMessageUpdate(message);
      if (text.length > 0) out.push({ role: instructionRole, content: text } as ChatMessage);
    }
  };
  // `tool` messages carry text only, so images of a run of tool results follow it as one
  // user message (not between the results: they must directly follow their tool calls).
  let toolImages: ImageContent[] = [];
  const flushToolImages = () => {
    if (toolImages.length === 0) return;
    out.push({
      role: "user",
      content: [{ type: "text", text: "Attached image(s) from tool result:" }, ...toolImages.map(toUserPart)],
    });
    toolImages = [];
  };
  for (const [index, msg] of messages.entries()) {
    if (msg.role !== "toolResult") flushToolImages();
    placeSystem(index);
    if (msg.role === "user") {
      if (typeof msg.content === "string") out.push({ role: "user", content: msg.content });
      else if (msg.content.length > 0) out.push({ role: "user", content: msg.content.map(toUserPart) });
    } else if (msg.role === "assistant") {
      const text = msg.content
        .filter((c): c is TextContent => c.type === "text")
        .map((c) => c.text)
        .join("");
      const calls = msg.content.flatMap((c) =>
        c.type === "toolCall"
          ? [
              {
                id: c.id,
                type: "function" as const,
                function: { name: c.name, arguments: JSON.stringify(c.arguments) },
              },
            ]
          : [],
      );
      const thoughts = msg.content.filter(
        (c): c is ThinkingContent => c.type === "thinking" && c.thinking.trim() !== "" && !c.redacted,
      );
      const reasoningText = thoughts.map((c) => c.thinking).join("\n");
      const visible =
        compat.requiresThinkingAsText && reasoningText
          ? [reasoningText, text].filter((t) => t.trim() !== "").join("\n\n")
          : text;
      // Servers reject an assistant message with neither content nor tool calls (an aborted reply).
      if (visible.trim() === "" && calls.length === 0) continue;
      const assistant: ChatMessage & Record<string, unknown> = {
        role: "assistant",
        content: visible.trim() === "" ? null : visible,
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
      };
      const field = thoughts.find((c) => isReasoningField(c.thinkingSignature))?.thinkingSignature;
      if (!compat.requiresThinkingAsText && field && msg.api === "openai-completions") {
        assistant[field] = thoughts
          .filter((c) => c.thinkingSignature === field)
          .map((c) => c.thinking)
          .join("\n");
      }
      if (
        compat.requiresReasoningContentOnAssistantMessages &&
        opts.model.reasoning &&
        assistant.reasoning_content === undefined
      ) {
        assistant.reasoning_content = "";
      }
      out.push(assistant);
    } else {
      const text = msg.content
        .filter((c): c is TextContent => c.type === "text")
        .map((c) => c.text)
        .join("\n");
      const images = msg.content.filter((c): c is ImageContent => c.type === "image");
      toolImages.push(...images);
      const fallback = images.length > 0 ? "(see attached image)" : "(no output)";
      out.push({
        role: "tool",
        tool_call_id: msg.toolCallId,
        content: text || fallback,
        ...(compat.requiresToolResultName ? { name: msg.toolName } : {}),
      } as ChatMessage);
    }
  }
  flushToolImages();
  placeSystem(messages.length);
  return out;
}

/** The session's system messages to send in place, and how many leading ones the request's `tools` covers. */
interface InPlaceSystem {
  messages: PlacedSystemMessage[];
  foldedTools: number;
}

function toUserPart(c: TextContent | ImageContent): OpenAI.Chat.ChatCompletionContentPart {
  if (c.type === "text") return { type: "text", text: c.text };
  return { type: "image_url", image_url: { url: `data:${c.mimeType};base64,${c.data}` } };
}

/** Whether a thinking block's signature names an OpenAI-compatible reasoning field. */
function isReasoningField(signature: string | undefined): signature is (typeof REASONING_FIELDS)[number] {
  return signature !== undefined && (REASONING_FIELDS as readonly string[]).includes(signature);
}

/**
 * Token counts of a chunk. Cached prompt tokens are reported inside `prompt_tokens`
 * (DeepSeek: `prompt_cache_hit_tokens`). `completion_tokens` includes reasoning at
 * OpenAI; xAI counts reasoning apart (its `total_tokens` is prompt + completion +
 * reasoning), so reasoning is added back when the total says so.
 */
function usageOf(raw: OpenAI.CompletionUsage & { prompt_cache_hit_tokens?: number }): Partial<Omit<Usage, "cost">> {
  const prompt = raw.prompt_tokens ?? 0;
  const completion = raw.completion_tokens ?? 0;
  const cacheRead = raw.prompt_tokens_details?.cached_tokens ?? raw.prompt_cache_hit_tokens ?? 0;
  const reasoning = raw.completion_tokens_details?.reasoning_tokens ?? 0;
  const reasoningApart = reasoning > 0 && raw.total_tokens === prompt + completion + reasoning;
  return {
    input: Math.max(0, prompt - cacheRead),
    output: completion + (reasoningApart ? reasoning : 0),
    cacheRead,
    reasoning,
  };
}
