/**
 * `anthropic-messages`: Claude through the official `@anthropic-ai/sdk`, streaming the
 * Messages API into MessageBuilder events. The SDK is imported on the first request so
 * a worker that never talks to Anthropic never loads it.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type {
  AssistantMessage,
  ImageContent,
  LlmMessage,
  Model,
  TextContent,
  ThinkingContent,
  ThinkingLevel,
  ToolResultMessage,
} from "../../shared/schema/messages.js";
import type { Provider, ProviderEvent, ProviderRequest, ToolSpec } from "../types.js";
import { sdkClientOptions } from "./client-options.js";
import { failStream, finishStream, mapAnthropicStop } from "./finish.js";
import { MessageBuilder } from "./message-builder.js";

/** Thinking budget per level; Anthropic's minimum budget is 1024 tokens. */
const THINKING_BUDGETS: Record<Exclude<ThinkingLevel, "off">, number> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 32768,
  max: 32768,
};
const MIN_THINKING_BUDGET = 1024;
/** Output room kept beside the thinking budget, so a thinking model can still answer. */
const MIN_ANSWER_TOKENS = 1024;

type ImageMediaType = Anthropic.Base64ImageSource["media_type"];

/** How often a `pause_turn` is continued within one request before it counts as an error. */
const MAX_PAUSE_CONTINUATIONS = 5;

/** `message_delta.delta.stop_details`: why a refusal happened (newer than the SDK's types). */
interface StopDetails {
  type?: string;
  category?: string | null;
  explanation?: string | null;
}

/** Create the Anthropic provider. Stateless: one client per request, built from the request's model and key. */
export function createAnthropicProvider(): Provider {
  return {
    async *stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
      const { model, signal } = request;
      const builder = new MessageBuilder(model.api, model.provider, model.id);
      let stopReason: string | null = null;
      let stopDetails: StopDetails | undefined;
      try {
        const { default: AnthropicClient } = await import("@anthropic-ai/sdk");
        const client = new AnthropicClient(sdkClientOptions(request));
        // Token counts of earlier rounds of a paused turn; each round reports its own.
        const before = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
        for (let round = 0; ; round++) {
          const built = buildAnthropicParams(
            round === 0 ? request : { ...request, messages: [...request.messages, builder.message] },
          );
          const params = ((await request.onPayload?.(built)) ?? built) as typeof built;
          const { data: events, response } = await client.messages.create(params, { signal }).withResponse();
          await request.onResponse?.({ status: response.status, headers: Object.fromEntries(response.headers) });
          if (round === 0) yield builder.start();
          stopReason = null;
          for await (const event of events) {
            // pi 1.6's provider_stream_event: the SDK's parsed event, before it is normalized.
            if (request.onStreamEvent) await request.onStreamEvent(event);
            switch (event.type) {
              case "message_start": {
                builder.setResponseId(event.message.id);
                const u = event.message.usage;
                builder.setUsage(
                  {
                    input: before.input + (u.input_tokens ?? 0),
                    output: before.output + (u.output_tokens ?? 0),
                    cacheRead: before.cacheRead + (u.cache_read_input_tokens ?? 0),
                    cacheWrite: before.cacheWrite + (u.cache_creation_input_tokens ?? 0),
                  },
                  model.cost,
                );
                break;
              }
              case "content_block_start": {
                const block = event.content_block;
                if (block.type === "text") yield* builder.text(block.text);
                else if (block.type === "thinking")
                  yield* builder.thinking(block.thinking, block.signature || undefined);
                else if (block.type === "redacted_thinking") {
                  // The payload is opaque; it travels back to the API as the block's signature.
                  yield* builder.thinking("[Reasoning redacted]", block.data);
                  (builder.message.content[builder.message.content.length - 1] as ThinkingContent).redacted = true;
                } else if (block.type === "tool_use") yield* builder.toolCallStart(block.id, block.name);
                break;
              }
              case "content_block_delta": {
                const delta = event.delta;
                if (delta.type === "text_delta") yield* builder.text(delta.text);
                else if (delta.type === "thinking_delta") yield* builder.thinking(delta.thinking);
                else if (delta.type === "signature_delta") yield* builder.thinking("", delta.signature);
                else if (delta.type === "input_json_delta") yield* builder.toolCallDelta(delta.partial_json);
                break;
              }
              case "content_block_stop": {
                const end = builder.closeOpen();
                if (end) yield end;
                break;
              }
              case "message_delta": {
                stopReason = event.delta.stop_reason ?? stopReason;
                stopDetails = (event.delta as { stop_details?: StopDetails | null }).stop_details ?? stopDetails;
                const u = event.usage;
                // Proxies often omit input counts here; keep the ones from message_start then.
                builder.setUsage(
                  {
                    output: before.output + (u.output_tokens ?? builder.message.usage.output - before.output),
                    ...(u.input_tokens != null ? { input: before.input + u.input_tokens } : {}),
                    ...(u.cache_read_input_tokens != null
                      ? { cacheRead: before.cacheRead + u.cache_read_input_tokens }
                      : {}),
                    ...(u.cache_creation_input_tokens != null
                      ? { cacheWrite: before.cacheWrite + u.cache_creation_input_tokens }
                      : {}),
                  },
                  model.cost,
                );
                break;
              }
            }
          }
          // pause_turn: the API stopped a long turn to be sent back as is and continued.
          if (stopReason !== "pause_turn" || signal.aborted || round >= MAX_PAUSE_CONTINUATIONS) break;
          const end = builder.closeOpen();
          if (end) yield end;
          const u = builder.message.usage;
          Object.assign(before, { input: u.input, output: u.output, cacheRead: u.cacheRead, cacheWrite: u.cacheWrite });
        }
      } catch (error) {
        yield* failStream(builder, error, signal.aborted, request.maxRetryDelayMs);
        return;
      }
      // The SDK ends the iteration quietly when the signal aborts it.
      yield* finishStream(builder, {
        aborted: signal.aborted,
        rawReason: stopReason,
        outcome: stopReason === null ? null : mapAnthropicStop(stopReason),
        field: "stop_reason",
        ...(stopDetails?.explanation ? { refusal: stopDetails.explanation } : {}),
        ...(stopDetails?.category ? { refusalDetail: `category "${stopDetails.category}"` } : {}),
      });
    },
  };
}

/** The Messages API request for one provider request. Exported for tests of the wire shape. */
export function buildAnthropicParams(request: ProviderRequest): Anthropic.MessageCreateParamsStreaming {
  const { model } = request;
  const params: Anthropic.MessageCreateParamsStreaming = {
    model: model.id,
    max_tokens: model.maxTokens,
    messages: toAnthropicMessages(request.messages),
    stream: true,
  };
  if (request.systemPrompt) params.system = request.systemPrompt;
  if (request.tools.length > 0) params.tools = request.tools.map(toAnthropicTool);
  if (model.reasoning && request.thinkingLevel !== "off" && adaptiveThinking(model)) {
    // These models think adaptively; `enabled` with a budget is deprecated for them and the SDK warns on every request.
    params.thinking = { type: "adaptive", display: "summarized" } as Anthropic.ThinkingConfigParam;
    params.output_config = { effort: adaptiveEffort(model, request.thinkingLevel) as "high" };
    return params;
  }
  const budget = thinkingBudget(model, request.thinkingLevel);
  // As pi 1.6: a thinking model told not to think is told so (unless it cannot stop: `off: null`),
  // and a budget asks for the summarized display, the API's default for Claude 4 models.
  if (budget !== null)
    params.thinking = {
      type: "enabled",
      budget_tokens: budget,
      display: "summarized",
    } as Anthropic.ThinkingConfigParam;
  else if (model.reasoning && request.thinkingLevel === "off" && model.thinkingLevelMap?.off !== null)
    params.thinking = { type: "disabled" };
  return params;
}

/**
 * Whether a model thinks adaptively: pi 1.6's catalogue says so (`compat.forceAdaptiveThinking`);
 * a model it does not list (models.json, an extension's provider) by its id, as pi 0.73.1
 * listed them (Opus 4.6 and later, Sonnet 4.6, with or without a date suffix).
 */
function adaptiveThinking(model: Pick<Model, "id" | "compat">): boolean {
  const declared = model.compat?.forceAdaptiveThinking;
  if (typeof declared === "boolean") return declared;
  return /(?:opus|sonnet)-4[-.]6|opus-4[-.]7/.test(model.id);
}

/**
 * Thinking level to adaptive-thinking effort, as pi 1.6's `mapThinkingLevelToEffort`: the
 * model's own map first (`xhigh`, `max` where it has them), else minimal and low are
 * "low", medium "medium", and the rest "high".
 */
function adaptiveEffort(model: Pick<Model, "thinkingLevelMap">, level: Exclude<ThinkingLevel, "off">): string {
  const mapped = model.thinkingLevelMap?.[level];
  if (typeof mapped === "string") return mapped;
  return level === "minimal" || level === "low" ? "low" : level === "medium" ? "medium" : "high";
}

/**
 * The thinking budget for a level, or null for no thinking. The API needs
 * `budget_tokens < max_tokens`, so a small `maxTokens` shrinks the budget; too small, no thinking.
 */
function thinkingBudget(model: Model, level: ThinkingLevel): number | null {
  if (!model.reasoning || level === "off") return null;
  const budget = Math.min(THINKING_BUDGETS[level], model.maxTokens - MIN_ANSWER_TOKENS);
  return budget >= MIN_THINKING_BUDGET ? budget : null;
}

function toAnthropicTool(tool: ToolSpec): Anthropic.Tool {
  const schema = (tool.parameters ?? {}) as { properties?: unknown; required?: string[] };
  // Only the object's shape: TypeBox adds keys (`$id`, `additionalProperties`) the API does not need.
  return {
    name: tool.name,
    description: tool.description,
    input_schema: { type: "object", properties: schema.properties ?? {}, required: schema.required ?? [] },
  };
}

/**
 * Conversation to Messages API turns. Consecutive tool results become one user turn, as
 * the API requires every result of an assistant turn in the next message; empty text is
 * dropped because the API rejects empty text blocks.
 */
export function toAnthropicMessages(messages: LlmMessage[]): Anthropic.MessageParam[] {
  const out: Anthropic.MessageParam[] = [];
  for (let i = 0; i < messages.length; i++) {
    const msg = messages[i];
    if (msg.role === "user") {
      if (typeof msg.content === "string") {
        if (msg.content.trim() !== "") out.push({ role: "user", content: msg.content });
        continue;
      }
      const blocks = msg.content.filter((c) => c.type !== "text" || c.text.trim() !== "").map(toAnthropicContent);
      if (blocks.length > 0) out.push({ role: "user", content: blocks });
    } else if (msg.role === "assistant") {
      const blocks = assistantBlocks(msg);
      if (blocks.length > 0) out.push({ role: "assistant", content: blocks });
    } else {
      const results: Anthropic.ToolResultBlockParam[] = [];
      let j = i;
      for (; j < messages.length && messages[j].role === "toolResult"; j++) {
        results.push(toToolResult(messages[j] as ToolResultMessage));
      }
      i = j - 1;
      out.push({ role: "user", content: results });
    }
  }
  return out;
}

function assistantBlocks(msg: AssistantMessage): Anthropic.ContentBlockParam[] {
  const blocks: Anthropic.ContentBlockParam[] = [];
  // Signatures are Anthropic's: another API's "signature" (a field name) would be rejected.
  const ownSignatures = msg.api === "anthropic-messages";
  for (const block of msg.content) {
    if (block.type === "text") {
      if (block.text.trim() !== "") blocks.push({ type: "text", text: block.text });
    } else if (block.type === "thinking") {
      if (block.redacted && block.thinkingSignature && ownSignatures) {
        blocks.push({ type: "redacted_thinking", data: block.thinkingSignature });
      } else if (block.thinking.trim() === "" || block.redacted) {
      } else if (block.thinkingSignature && ownSignatures) {
        blocks.push({ type: "thinking", thinking: block.thinking, signature: block.thinkingSignature });
      } else {
        // Unsigned thinking (cut stream, another provider) is rejected as thinking; keep it as text.
        blocks.push({ type: "text", text: block.thinking });
      }
    } else {
      blocks.push({ type: "tool_use", id: block.id, name: block.name, input: block.arguments });
    }
  }
  return blocks;
}

function toToolResult(msg: ToolResultMessage): Anthropic.ToolResultBlockParam {
  const content = msg.content.filter((c) => c.type !== "text" || c.text !== "").map(toAnthropicContent);
  return {
    type: "tool_result",
    tool_use_id: msg.toolCallId,
    content: content.length > 0 ? content : [{ type: "text", text: "(no output)" }],
    is_error: msg.isError,
  };
}

function toAnthropicContent(c: TextContent | ImageContent): Anthropic.TextBlockParam | Anthropic.ImageBlockParam {
  if (c.type === "text") return { type: "text", text: c.text };
  return { type: "image", source: { type: "base64", media_type: c.mimeType as ImageMediaType, data: c.data } };
}
