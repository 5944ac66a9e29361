/**
 * The Messages API request for one provider request, as pi-ai 1.6.0's `buildParams` makes
 * it: the system prompt and the tools with prompt-cache breakpoints, thinking per level,
 * and for a model whose `compat` takes them, the session's later system messages in the
 * conversation (`supportsMidConvoSystemMessages`), tool changes as `tool_addition` /
 * `tool_removal` blocks against a tool list that never changes
 * (`supportsMidConvoToolChanges`), and the thinking level as effort markers inside the
 * conversation (`supportsMidConvoEffort`): the start of every request stays the bytes the
 * provider cached. Pure; `betas` is taken out and sent as the `anthropic-beta` header.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type {
  AssistantMessage,
  ImageContent,
  LlmMessage,
  Model,
  SystemMessage,
  TextContent,
  ThinkingLevel,
  ToolResultMessage,
} from "../../shared/schema/messages.js";
import type { PlacedSystemMessage, ProviderRequest, ToolSpec } from "../types.js";
import type { ModelCompat } from "./compat-schema.js";
import { getSystemMessageText, renderSystemMessageUpdate } from "./transcript.js";

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

const FINE_GRAINED_TOOL_STREAMING_BETA = "fine-grained-tool-streaming-2025-05-14";
const INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14";
const MID_CONVERSATION_OUTPUT_CONFIG_BETA = "mid-conversation-output-config-2026-07-01";
const THINKING_BINDING_CONTROLS_BETA = "thinking-binding-controls-2026-08-01";
const INLINE_TOOLS_BETA = "inline-tools-2026-09-15";
const SERVER_SIDE_FALLBACK_BETA = "server-side-fallback-2026-07-01";

/**
 * pi-ai's deferred tool, declared after the first tools whenever tool changes go in place:
 * the API adds hidden scaffolding for mid-conversation tool changes, and declaring this from
 * the first request keeps it in the cached prefix (pi measured a full miss without it).
 */
const DEFERRED_TOOL_PLACEHOLDER = {
  name: "__pi_deferred_placeholder__",
  description: "Reserved placeholder. Never available. Never call this.",
  input_schema: { type: "object" as const, properties: {}, required: [] },
  defer_loading: true,
};

type ImageMediaType = Anthropic.Base64ImageSource["media_type"];
type CacheControl = { type: "ephemeral"; ttl?: "1h" };
/** A request message: the SDK's, or pi's `system` role (mid-conversation text, tool changes, effort). */
type WireMessage =
  | Anthropic.MessageParam
  | { role: "system"; content: Record<string, unknown>[]; output_config?: { effort: string } };
/** The request as sent (the SDK's type has neither system-role messages nor the newer fields). */
export type AnthropicParams = Omit<Anthropic.MessageCreateParamsStreaming, "messages" | "tools"> & {
  messages: WireMessage[];
  tools?: Record<string, unknown>[];
  betas?: string[];
  /** The models the server may answer with instead when this one refuses (server-side fallback). */
  fallbacks?: { model: string }[];
};

/** The `compat` settings the Messages API request reads, with pi-ai 1.6.0's defaults. */
function anthropicCompat(model: Model) {
  const c = (model.compat ?? {}) as ModelCompat;
  return {
    supportsEagerToolInputStreaming: c.supportsEagerToolInputStreaming ?? true,
    supportsLongCacheRetention: c.supportsLongCacheRetention ?? true,
    supportsCacheControlOnTools: c.supportsCacheControlOnTools ?? true,
    allowEmptySignature: c.allowEmptySignature ?? false,
    supportsMidConvoSystemMessages: c.supportsMidConvoSystemMessages ?? false,
    supportsMidConvoToolChanges: c.supportsMidConvoToolChanges ?? false,
    supportsMidConvoEffort: c.supportsMidConvoEffort === true,
    allowedFallbackModels: c.allowedFallbackModels ?? [],
  };
}

/**
 * The price of a reply made by `responseModel`: the model's own, or for a server-side
 * fallback the price `compat.allowedFallbackModels` gives that model (pi 1.6); the asked
 * model's when it lists none.
 */
export function replyPrice(model: Model, responseModel: string | undefined): Model["cost"] {
  if (responseModel === undefined || responseModel === model.id) return model.cost;
  const fallback = anthropicCompat(model).allowedFallbackModels.find(
    (f) => f.provider === model.provider && f.model === responseModel,
  );
  return fallback ? fallback.cost : model.cost;
}

/** pi's prompt-cache breakpoint: 5 minutes, or an hour with `PI_CACHE_RETENTION=long` where the model allows. */
function cacheControl(long: boolean): CacheControl {
  return long && process.env.PI_CACHE_RETENTION === "long" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
}

/**
 * The Messages API request for one provider request, and the effort the reply is made with
 * when it is set by a marker (pi's `providerThinkingLevel`, recorded on the reply so the
 * next request puts the same marker before it).
 */
export function buildAnthropicParams(request: ProviderRequest): {
  params: AnthropicParams;
  providerThinkingLevel?: string;
} {
  const { model, thinkingLevel } = request;
  const compat = anthropicCompat(model);
  const cache = cacheControl(compat.supportsLongCacheRetention);
  const toolCache = compat.supportsCacheControlOnTools ? cache : undefined;
  const convertTools = (tools: readonly ToolSpec[], withCache?: CacheControl) =>
    tools.map((t, i) =>
      toAnthropicTool(t, compat.supportsEagerToolInputStreaming, i === tools.length - 1 ? withCache : undefined),
    );
  // Later system messages go in place only when the model takes them and the session said where they stand.
  const placed = compat.supportsMidConvoSystemMessages ? request.systemMessages : undefined;
  const initial = placed?.[0]?.at === 0 ? placed[0].message : undefined;
  const initialTools = initial?.toolsAdded ?? [];
  // The API rejects a tool list where every tool is deferred: the placeholder needs a first tool.
  const nativeToolChanges = placed !== undefined && compat.supportsMidConvoToolChanges && initialTools.length > 0;
  const thinkingDisabled = model.reasoning && thinkingLevel === "off" && model.thinkingLevelMap?.off !== null;
  // While thinking is off the effort cannot change between messages, so "off" sends no markers.
  const effortMessages = compat.supportsMidConvoEffort && !thinkingDisabled;
  const adaptive = adaptiveThinking(model);
  const activeEffort =
    thinkingLevel !== "off" && model.reasoning && adaptive ? adaptiveEffort(model, thinkingLevel) : "high";
  const converted = toAnthropicMessages(request.messages, {
    placed: placed?.filter((p) => p.message !== initial),
    toolChanges: nativeToolChanges ? (tools) => convertTools(tools) : undefined,
    effortProvider: effortMessages ? model.provider : undefined,
    allowEmptySignature: compat.allowEmptySignature,
    cache,
  });
  const params: AnthropicParams = {
    model: model.id,
    messages: effortMessages ? insertEffortMarkers(converted, activeEffort) : converted.messages,
    max_tokens: model.maxTokens,
    stream: true,
  };
  const systemText = placed ? (initial ? getSystemMessageText(initial) : "") : request.systemPrompt;
  if (systemText) params.system = [{ type: "text", text: systemText, cache_control: cache }];
  // In place, the tool list is the first request's and never changes; later tools come by value in the conversation.
  if (nativeToolChanges) params.tools = [...convertTools(initialTools, toolCache), DEFERRED_TOOL_PLACEHOLDER];
  else if (request.tools.length > 0) params.tools = convertTools(request.tools, toolCache);
  const thinkingOn = model.reasoning && thinkingLevel !== "off";
  if (thinkingDisabled) params.thinking = { type: "disabled" };
  else if (effortMessages) {
    // The markers set each reply's effort; the request's own is part of the cached prompt, so it
    // stays fixed, and "low" because an organisation may cap effort and refuse anything above.
    params.thinking = {
      type: "adaptive",
      display: "summarized",
      block_binding: { prefix_mismatch_behavior: "drop_block" },
    } as unknown as Anthropic.ThinkingConfigParam;
    params.output_config = { effort: "low" };
  } else if (thinkingOn && adaptive) {
    // These models think adaptively; `enabled` with a budget is deprecated for them and the SDK warns on every request.
    params.thinking = { type: "adaptive", display: "summarized" } as Anthropic.ThinkingConfigParam;
    params.output_config = { effort: activeEffort as "high" };
  } else {
    const budget = thinkingBudget(model, thinkingLevel);
    // As pi 1.6: a budget asks for the summarized display, the API's default for Claude 4 models.
    if (budget !== null)
      params.thinking = {
        type: "enabled",
        budget_tokens: budget,
        display: "summarized",
      } as Anthropic.ThinkingConfigParam;
  }
  const fallbacks = compat.allowedFallbackModels;
  const betas = betaFeatures(model, {
    tools: (params.tools?.length ?? 0) > 0,
    interleaved: thinkingOn && model.compat?.forceAdaptiveThinking !== true,
    fallback: fallbacks.length > 0,
    effort: compat.supportsMidConvoEffort,
    nativeToolChanges,
    eager: compat.supportsEagerToolInputStreaming,
  });
  if (betas.length > 0) params.betas = betas;
  // As pi 1.6: the API refuses the field for a model with no permitted fallback, so only when there are some.
  if (fallbacks.length > 0) params.fallbacks = fallbacks.map((f) => ({ model: f.model }));
  return { params, ...(effortMessages ? { providerThinkingLevel: activeEffort } : {}) };
}

/** The `anthropic-beta` features, as pi-ai 1.6.0 asks for them; a configured `anthropic-beta` header replaces them. */
function betaFeatures(
  model: Model,
  f: {
    tools: boolean;
    interleaved: boolean;
    fallback: boolean;
    effort: boolean;
    nativeToolChanges: boolean;
    eager: boolean;
  },
): string[] {
  if (Object.keys(model.headers ?? {}).some((name) => name.toLowerCase() === "anthropic-beta")) return [];
  const out: string[] = [];
  if (f.tools && !f.eager) out.push(FINE_GRAINED_TOOL_STREAMING_BETA);
  if (f.interleaved) out.push(INTERLEAVED_THINKING_BETA);
  if (f.fallback) out.push(SERVER_SIDE_FALLBACK_BETA);
  if (f.effort) out.push(MID_CONVERSATION_OUTPUT_CONFIG_BETA, THINKING_BINDING_CONTROLS_BETA);
  if (f.nativeToolChanges) out.push(INLINE_TOOLS_BETA);
  return out;
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

function toAnthropicTool(tool: ToolSpec, eager: boolean, cache?: CacheControl): Record<string, unknown> {
  const schema = (tool.parameters ?? {}) as Record<string, unknown>;
  // As pi-ai: the object's shape, its `$defs` so references resolve, and `additionalProperties`
  // so the model knows whether more arguments are allowed; the API rejects root anyOf/oneOf.
  return {
    name: tool.name,
    description: tool.description,
    ...(eager ? { eager_input_streaming: true } : {}),
    input_schema: {
      type: "object",
      properties: schema.properties ?? {},
      required: schema.required ?? [],
      ...(schema.additionalProperties === undefined ? {} : { additionalProperties: schema.additionalProperties }),
      ...(schema.$defs === undefined ? {} : { $defs: schema.$defs }),
      ...(schema.definitions === undefined ? {} : { definitions: schema.definitions }),
    },
    ...(cache ? { cache_control: cache } : {}),
  };
}

/** How the conversation is converted: see `buildAnthropicParams`. */
interface ConvertOptions {
  /** Later system messages, by the request message they stand before; undefined when folded into the prompt. */
  placed?: PlacedSystemMessage[];
  /** Converts the tools a system message adds, when tool changes go in place. */
  toolChanges?: (tools: readonly ToolSpec[]) => Record<string, unknown>[];
  /** The provider whose replies carry an effort marker (its `providerThinkingLevel`), when markers are sent. */
  effortProvider?: string;
  allowEmptySignature?: boolean;
  /** The breakpoint on the last message's last block. */
  cache?: CacheControl;
}

/** The converted conversation and, by message index, the effort each earlier reply was made with. */
interface Converted {
  messages: WireMessage[];
  efforts: Map<number, string>;
}

const EFFORTS = new Set(["low", "medium", "high", "xhigh", "max"]);

/**
 * Conversation to Messages API turns. Consecutive tool results become one user turn, as
 * the API requires every result of an assistant turn in the next message; empty text is
 * dropped because the API rejects empty text blocks. A later system message is held back
 * until just before the next assistant turn (or the end), as pi-ai does: a `tool_result`
 * must directly follow its `tool_use`, so one between them would be refused.
 */
export function toAnthropicMessages(messages: LlmMessage[], opts: ConvertOptions = {}): Converted {
  const out: WireMessage[] = [];
  const efforts = new Map<number, string>();
  const pending: WireMessage[] = [];
  const placed = opts.placed ?? [];
  let next = 0;
  const hold = (before: number) => {
    for (; next < placed.length && placed[next]!.at <= before; next++) {
      const system = systemTurn(placed[next]!.message, opts.toolChanges);
      if (system) pending.push(system);
    }
  };
  for (let i = 0; i < messages.length; i++) {
    hold(i);
    const msg = messages[i]!;
    if (msg.role === "user") {
      if (typeof msg.content === "string") {
        if (msg.content.trim() !== "") out.push({ role: "user", content: msg.content });
        continue;
      }
      const blocks = msg.content.filter((c) => c.type !== "text" || c.text.trim() !== "").map(toAnthropicContent);
      if (blocks.length > 0) out.push({ role: "user", content: blocks });
    } else if (msg.role === "assistant") {
      const blocks = assistantBlocks(msg, opts.allowEmptySignature ?? false);
      if (blocks.length === 0) continue;
      out.push(...pending.splice(0));
      const level = msg.providerThinkingLevel;
      if (
        opts.effortProvider !== undefined &&
        msg.api === "anthropic-messages" &&
        msg.provider === opts.effortProvider &&
        level !== undefined &&
        EFFORTS.has(level)
      )
        efforts.set(out.length, level);
      out.push({ role: "assistant", content: blocks });
    } else {
      const results: Anthropic.ToolResultBlockParam[] = [];
      let j = i;
      for (; j < messages.length && messages[j]!.role === "toolResult"; j++) {
        results.push(toToolResult(messages[j] as ToolResultMessage));
      }
      i = j - 1;
      out.push({ role: "user", content: results });
    }
  }
  hold(Number.POSITIVE_INFINITY);
  out.push(...pending);
  if (opts.cache) markLast(out, opts.cache);
  return { messages: out, efforts };
}

/** A later system message as a system turn: its text as pi renders an update, then its tool changes. */
function systemTurn(message: SystemMessage, toolChanges: ConvertOptions["toolChanges"]): WireMessage | undefined {
  const text = renderSystemMessageUpdate(message);
  const content: Record<string, unknown>[] = text.length > 0 ? [{ type: "text", text }] : [];
  if (toolChanges) {
    const added = message.toolsAdded ?? [];
    // A new definition under the same name replaces the old one: no removal is needed.
    const redefined = new Set(added.map((t) => t.name));
    for (const t of message.toolsRemoved ?? [])
      if (!redefined.has(t.name))
        content.push({ type: "tool_removal", tool: { type: "tool_reference", name: t.name } });
    for (const definition of toolChanges(added))
      content.push({ type: "tool_addition", tool: { type: "tool_definition", definition } });
  }
  return content.length > 0 ? { role: "system", content } : undefined;
}

/** The cache breakpoint on the last block of the last message, when that is a user or system turn. */
function markLast(messages: WireMessage[], cache: CacheControl): void {
  const last = messages.at(-1);
  if (!last || (last.role !== "user" && last.role !== "system")) return;
  if (typeof last.content === "string") {
    (last as { content: unknown }).content = [{ type: "text", text: last.content, cache_control: cache }];
    return;
  }
  const block = last.content.at(-1) as { type: string; cache_control?: CacheControl } | undefined;
  if (block && ["text", "image", "tool_result", "tool_addition", "tool_removal"].includes(block.type))
    block.cache_control = cache;
}

/** The effort marker before each reply that recorded one, and the active level's at the end. */
function insertEffortMarkers(converted: Converted, active: string): WireMessage[] {
  const out: WireMessage[] = [];
  const marker = (effort: string): WireMessage => ({ role: "system", content: [], output_config: { effort } });
  converted.messages.forEach((m, i) => {
    const effort = converted.efforts.get(i);
    if (effort !== undefined) out.push(marker(effort));
    out.push(m);
  });
  out.push(marker(active));
  return out;
}

function assistantBlocks(msg: AssistantMessage, allowEmptySignature: boolean): Anthropic.ContentBlockParam[] {
  const blocks: Anthropic.ContentBlockParam[] = [];
  // Signatures are Anthropic's: another API's "signature" (a field name) would be rejected.
  const ownSignatures = msg.api === "anthropic-messages";
  for (const block of msg.content) {
    if (block.type === "text") {
      if (block.text.trim() !== "") blocks.push({ type: "text", text: block.text });
    } else if (block.type === "thinking") {
      const signature = ownSignatures ? block.thinkingSignature : undefined;
      if (block.redacted && signature) {
        blocks.push({ type: "redacted_thinking", data: signature });
      } else if (block.redacted || (block.thinking.trim() === "" && !signature?.trim())) {
      } else if (signature?.trim()) {
        blocks.push({ type: "thinking", thinking: block.thinking, signature });
      } else if (allowEmptySignature) {
        blocks.push({ type: "thinking", thinking: block.thinking, signature: "" });
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

/** A tool result as pi-ai sends it: its text as one string, or blocks when it has images (with a caption if no text). */
function toToolResult(msg: ToolResultMessage): Anthropic.ToolResultBlockParam {
  const hasImages = msg.content.some((c) => c.type === "image");
  let content: Anthropic.ToolResultBlockParam["content"];
  if (!hasImages) content = msg.content.map((c) => (c as TextContent).text).join("\n");
  else {
    const blocks = msg.content.map(toAnthropicContent);
    if (!blocks.some((b) => b.type === "text")) blocks.unshift({ type: "text", text: "(see attached image)" });
    content = blocks;
  }
  return { type: "tool_result", tool_use_id: msg.toolCallId, content, is_error: msg.isError };
}

function toAnthropicContent(c: TextContent | ImageContent): Anthropic.TextBlockParam | Anthropic.ImageBlockParam {
  if (c.type === "text") return { type: "text", text: c.text };
  return { type: "image", source: { type: "base64", media_type: c.mimeType as ImageMediaType, data: c.data } };
}
