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
import type { ImageContent, LlmMessage, Model, TextContent, ThinkingLevel } from "../../shared/schema/messages.js";
import type { Provider, ProviderEvent, ProviderRequest, ToolSpec } from "../types.js";
import { sdkClientOptions } from "./client-options.js";
import { failStream, finishStream, type StopOutcome } from "./finish.js";
import { MessageBuilder } from "./message-builder.js";
import { fetchNestingErrorBodies } from "./openai.js";

type InputItem = OpenAI.Responses.ResponseInputItem;

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
        const params = ((await request.onPayload?.(built)) ?? built) as typeof built;
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

/** The Responses request for one provider request. Exported for tests of the wire shape. */
export function buildResponsesParams(request: ProviderRequest): OpenAI.Responses.ResponseCreateParamsStreaming {
  const { model } = request;
  const params: OpenAI.Responses.ResponseCreateParamsStreaming = {
    model: model.id,
    input: toResponsesInput(request.messages),
    stream: true,
    // Nothing is kept on OpenAI's side; reasoning travels back encrypted instead.
    store: false,
    max_output_tokens: model.maxTokens,
  };
  if (request.systemPrompt) params.instructions = request.systemPrompt;
  if (request.tools.length > 0) params.tools = request.tools.map(toResponsesTool);
  if (model.reasoning) {
    params.include = ["reasoning.encrypted_content"];
    if (request.thinkingLevel !== "off")
      params.reasoning = { effort: effortOf(model, request.thinkingLevel), summary: "auto" };
    // As pi 1.6: thinking off is said ("none", or the model's own word), unless the model
    // cannot turn it off (its map has `off: null`).
    else if (model.thinkingLevelMap?.off !== null)
      params.reasoning = { effort: (model.thinkingLevelMap?.off ?? "none") as OpenAI.ReasoningEffort };
  }
  return params;
}

/** The effort for a level: the model's own word for it (pi 1.6's `thinkingLevelMap`), else the level. */
function effortOf(
  model: Pick<Model, "thinkingLevelMap">,
  level: Exclude<ThinkingLevel, "off">,
): OpenAI.ReasoningEffort {
  const mapped = model.thinkingLevelMap?.[level];
  if (typeof mapped === "string") return mapped as OpenAI.ReasoningEffort;
  return level === "minimal" ? "low" : (level as OpenAI.ReasoningEffort);
}

function toResponsesTool(tool: ToolSpec): OpenAI.Responses.FunctionTool {
  return {
    type: "function",
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters as Record<string, unknown>,
    strict: false,
  };
}

/**
 * Conversation to Responses input items. Reasoning from this API goes back as the item it
 * was; thinking from another API has no item and is left out. Tool calls from other APIs
 * (an id without `|`) go back with the id as `call_id`.
 */
export function toResponsesInput(messages: LlmMessage[]): InputItem[] {
  const out: InputItem[] = [];
  for (const msg of messages) {
    if (msg.role === "user") {
      const parts = typeof msg.content === "string" ? [{ type: "text" as const, text: msg.content }] : msg.content;
      if (parts.length > 0) out.push({ role: "user", content: parts.map(toInputPart) });
    } else if (msg.role === "assistant") {
      for (const block of msg.content) {
        if (block.type === "thinking") {
          const item =
            msg.api === "openai-responses" && block.thinkingSignature ? parseItem(block.thinkingSignature) : null;
          if (item) out.push(item);
        } else if (block.type === "text") {
          if (block.text.trim() === "") continue;
          const id = msg.api === "openai-responses" ? messageId(block.textSignature) : null;
          out.push(
            id
              ? {
                  type: "message",
                  role: "assistant",
                  status: "completed",
                  id,
                  content: [{ type: "output_text", text: block.text, annotations: [] }],
                }
              : { role: "assistant", content: block.text },
          );
        } else {
          const [callId, itemId] = block.id.split("|");
          out.push({
            type: "function_call",
            call_id: callId,
            name: block.name,
            arguments: JSON.stringify(block.arguments),
            ...(itemId ? { id: itemId } : {}),
          });
        }
      }
    } else {
      const text = msg.content
        .filter((c): c is TextContent => c.type === "text")
        .map((c) => c.text)
        .join("\n");
      out.push({ type: "function_call_output", call_id: msg.toolCallId.split("|")[0], output: text || "(no output)" });
      const images = msg.content.filter((c): c is ImageContent => c.type === "image");
      if (images.length > 0) {
        out.push({
          role: "user",
          content: [{ type: "input_text", text: "Attached image(s) from tool result:" }, ...images.map(toInputPart)],
        });
      }
    }
  }
  return out;
}

function toInputPart(c: TextContent | ImageContent): OpenAI.Responses.ResponseInputContent {
  if (c.type === "text") return { type: "input_text", text: c.text };
  return { type: "input_image", image_url: `data:${c.mimeType};base64,${c.data}`, detail: "auto" };
}

function parseItem(signature: string): OpenAI.Responses.ResponseReasoningItem | null {
  try {
    const item = JSON.parse(signature) as { type?: unknown };
    return item && item.type === "reasoning" ? (item as OpenAI.Responses.ResponseReasoningItem) : null;
  } catch {
    return null;
  }
}

/** The message id in a text block's signature (pi's `{"v":1,"id":"msg_..."}`), or null. */
function messageId(signature: string | undefined): string | null {
  if (!signature) return null;
  try {
    const parsed = JSON.parse(signature) as { id?: unknown };
    return typeof parsed.id === "string" ? parsed.id : null;
  } catch {
    return null;
  }
}
