/**
 * `openai-completions`: OpenAI and every server that speaks its Chat Completions API
 * (Ollama, vLLM, LM Studio, ...) through the official `openai` SDK and the model's
 * base URL. The SDK is imported on the first request.
 */
import type OpenAI from "openai";
import type {
  ImageContent,
  LlmMessage,
  StopReason,
  TextContent,
  Usage,
} from "../../shared/schema/messages.js";
import type { Provider, ProviderEvent, ProviderRequest, ToolSpec } from "../types.js";
import { sdkClientOptions } from "./client-options.js";
import { failStream, finishStream } from "./finish.js";
import { MessageBuilder } from "./message-builder.js";

type ChatMessage = OpenAI.Chat.ChatCompletionMessageParam;

/** Reasoning text as compatible servers name it: llama.cpp/vLLM/DeepSeek, Ollama/OpenRouter. */
const REASONING_FIELDS = ["reasoning_content", "reasoning"] as const;

/** Create the OpenAI-compatible provider. Stateless: one client per request. */
export function createOpenAIProvider(): Provider {
  return {
    async *stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
      const { model, signal } = request;
      const builder = new MessageBuilder(model.api, model.provider, model.id);
      let finishReason: string | null = null;
      try {
        const { default: OpenAIClient } = await import("openai");
        const client = new OpenAIClient(sdkClientOptions(request));
        const chunks = await client.chat.completions.create(buildOpenAIParams(request), { signal });
        yield builder.start();
        // Stream index of the tool call open in the builder; the builder holds one open block.
        let openCallIndex: number | null = null;
        for await (const chunk of chunks) {
          builder.setResponseId(chunk.id);
          if (chunk.usage) builder.setUsage(usageOf(chunk.usage), model.cost);
          const choice = chunk.choices?.[0];
          if (!choice) continue;
          if (choice.finish_reason) finishReason = choice.finish_reason;
          const delta = choice.delta as (typeof choice.delta & Record<string, unknown>) | undefined;
          if (!delta) continue;
          // Some servers send the same reasoning under both names; take the first one only.
          const reasoning = REASONING_FIELDS.map((f) => delta[f]).find((v) => typeof v === "string" && v !== "");
          if (typeof reasoning === "string") yield* builder.thinking(reasoning);
          if (delta.content) yield* builder.text(delta.content);
          for (const call of delta.tool_calls ?? []) {
            if (call.index !== openCallIndex) {
              // A new call starts. Deltas of an earlier, already closed call cannot be
              // merged any more; OpenAI streams calls one after another, so none arrive.
              if (openCallIndex !== null && call.index < openCallIndex) continue;
              openCallIndex = call.index;
              yield* builder.toolCallStart(call.id ?? `call_${call.index}`, call.function?.name ?? "");
            }
            if (call.function?.arguments) yield* builder.toolCallDelta(call.function.arguments);
          }
        }
      } catch (error) {
        yield* failStream(builder, error, signal.aborted, request.maxRetryDelayMs);
        return;
      }
      // The SDK ends the iteration quietly when the signal aborts it.
      yield* finishStream(builder, {
        aborted: signal.aborted,
        rawReason: finishReason,
        mapped: finishReason === null ? null : mapFinishReason(finishReason),
        field: "finish_reason",
      });
    },
  };
}

/** The Chat Completions request for one provider request. Exported for tests of the wire shape. */
export function buildOpenAIParams(request: ProviderRequest): OpenAI.Chat.ChatCompletionCreateParamsStreaming {
  const { model } = request;
  const params: OpenAI.Chat.ChatCompletionCreateParamsStreaming = {
    model: model.id,
    messages: toOpenAIMessages(request.systemPrompt, request.messages),
    max_tokens: model.maxTokens,
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.tools.length > 0) params.tools = request.tools.map(toOpenAITool);
  if (model.reasoning && request.thinkingLevel !== "off") params.reasoning_effort = request.thinkingLevel;
  return params;
}

function toOpenAITool(tool: ToolSpec): OpenAI.Chat.ChatCompletionFunctionTool {
  return {
    type: "function",
    function: {
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters as OpenAI.FunctionParameters,
    },
  };
}

/**
 * Conversation to Chat Completions messages: the system prompt first, tool results as
 * `tool` messages. Assistant text goes as one plain string, the form every compatible
 * server accepts; thinking is not sent back (the API has no field for it).
 */
export function toOpenAIMessages(systemPrompt: string, messages: LlmMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (systemPrompt) out.push({ role: "system", content: systemPrompt });
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
  for (const msg of messages) {
    if (msg.role !== "toolResult") flushToolImages();
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
          ? [{ id: c.id, type: "function" as const, function: { name: c.name, arguments: JSON.stringify(c.arguments) } }]
          : [],
      );
      // Servers reject an assistant message with neither content nor tool calls (an aborted reply).
      if (text.trim() === "" && calls.length === 0) continue;
      out.push({
        role: "assistant",
        content: text.trim() === "" ? null : text,
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
      });
    } else {
      const text = msg.content
        .filter((c): c is TextContent => c.type === "text")
        .map((c) => c.text)
        .join("\n");
      const images = msg.content.filter((c): c is ImageContent => c.type === "image");
      toolImages.push(...images);
      const fallback = images.length > 0 ? "(see attached image)" : "(no output)";
      out.push({ role: "tool", tool_call_id: msg.toolCallId, content: text || fallback });
    }
  }
  flushToolImages();
  return out;
}

function toUserPart(c: TextContent | ImageContent): OpenAI.Chat.ChatCompletionContentPart {
  if (c.type === "text") return { type: "text", text: c.text };
  return { type: "image_url", image_url: { url: `data:${c.mimeType};base64,${c.data}` } };
}

/** OpenAI finish reasons to ours; `error` marks stops that carry no usable answer. */
function mapFinishReason(reason: string): StopReason {
  switch (reason) {
    case "length":
      return "length";
    case "tool_calls":
    case "function_call":
      return "toolUse";
    case "content_filter":
      return "error";
    default:
      return "stop";
  }
}

/** Token counts of a chunk; cached prompt tokens are reported inside `prompt_tokens`. */
function usageOf(raw: OpenAI.CompletionUsage): Partial<Omit<Usage, "cost">> {
  const cacheRead = raw.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    input: Math.max(0, (raw.prompt_tokens ?? 0) - cacheRead),
    output: raw.completion_tokens ?? 0,
    cacheRead,
  };
}
