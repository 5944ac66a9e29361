/**
 * pi's `compat` settings for OpenAI-compatible servers (models.json, provider or model
 * level): what a server accepts and requires beyond the OpenAI API. Unset fields are
 * detected from the provider name and base URL, so the known hosts work without any.
 */
import { Type, type Static } from "typebox";
import type { Model } from "../../shared/schema/messages.js";

/**
 * The `compat` object of models.json. Every field pi documents is accepted (a pi
 * models.json loads unchanged); the ones marked "honoured" change what we send.
 */
export const OpenAICompatSchema = Type.Object({
  /** Honoured: `reasoning_effort` is sent for reasoning models. */
  supportsReasoningEffort: Type.Optional(Type.Boolean()),
  /** Honoured: `stream_options: {include_usage: true}` is sent (default true). */
  supportsUsageInStreaming: Type.Optional(Type.Boolean()),
  /** Honoured: which field carries the output limit. */
  maxTokensField: Type.Optional(Type.Union([Type.Literal("max_completion_tokens"), Type.Literal("max_tokens")])),
  /** Honoured: tool results carry the tool's `name`. */
  requiresToolResultName: Type.Optional(Type.Boolean()),
  /** Honoured: earlier thinking goes back as plain assistant text instead of its reasoning field. */
  requiresThinkingAsText: Type.Optional(Type.Boolean()),
  /** Honoured: every replayed assistant message carries `reasoning_content` (empty if none) when reasoning is on (DeepSeek). */
  requiresReasoningContentOnAssistantMessages: Type.Optional(Type.Boolean()),
  /** Honoured: how thinking is switched on: `reasoning_effort`, DeepSeek's `thinking`, OpenRouter's `reasoning`, Qwen's `enable_thinking`. */
  thinkingFormat: Type.Optional(
    Type.Union([
      Type.Literal("openai"),
      Type.Literal("openrouter"),
      Type.Literal("deepseek"),
      Type.Literal("zai"),
      Type.Literal("qwen"),
      Type.Literal("qwen-chat-template"),
    ]),
  ),
  /** Honoured: the session's later system messages go in place (as `system`, or `developer` for a reasoning model with `supportsDeveloperRole`), not folded into the first. */
  supportsMidConvoSystemMessages: Type.Optional(Type.Boolean()),
  /** Honoured: with the above, tools a later system message adds are declared there (a `system` message with `tools`); a removal still changes the request's `tools`. */
  supportsMidConvoToolAdditions: Type.Optional(Type.Boolean()),
  supportsStore: Type.Optional(Type.Boolean()),
  /** Honoured with `supportsMidConvoSystemMessages`: instructions of a reasoning model go as `developer` (default: OpenAI's own host). */
  supportsDeveloperRole: Type.Optional(Type.Boolean()),
  requiresAssistantAfterToolResult: Type.Optional(Type.Boolean()),
  supportsStrictMode: Type.Optional(Type.Boolean()),
  cacheControlFormat: Type.Optional(Type.Literal("anthropic")),
  supportsLongCacheRetention: Type.Optional(Type.Boolean()),
  sendSessionAffinityHeaders: Type.Optional(Type.Boolean()),
  zaiToolStream: Type.Optional(Type.Boolean()),
  openRouterRouting: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  vercelGatewayRouting: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
export type OpenAICompat = Static<typeof OpenAICompatSchema>;

/** The honoured settings, all decided. */
export interface ResolvedCompat {
  supportsReasoningEffort: boolean;
  supportsUsageInStreaming: boolean;
  maxTokensField: "max_completion_tokens" | "max_tokens";
  requiresToolResultName: boolean;
  requiresThinkingAsText: boolean;
  requiresReasoningContentOnAssistantMessages: boolean;
  thinkingFormat: NonNullable<OpenAICompat["thinkingFormat"]>;
  /** Tools carry `strict: false`, as pi sends them to the hosts it knows take the field (not Moonshot, Cloudflare's AI gateway, custom servers). */
  supportsStrictMode: boolean;
  supportsMidConvoSystemMessages: boolean;
  supportsMidConvoToolAdditions: boolean;
  supportsDeveloperRole: boolean;
}

/**
 * Defaults for a model's host. OpenAI itself rejects `max_tokens` on reasoning models;
 * local servers (Ollama, llama.cpp, vLLM, LM Studio) have accepted `max_tokens` longest.
 * DeepSeek needs its reasoning back on assistant turns and switches thinking with `thinking`.
 */
export function detectCompat(model: Pick<Model, "provider" | "baseUrl">): ResolvedCompat {
  const url = model.baseUrl;
  const is = (provider: string, host: string) => model.provider === provider || url.includes(host);
  const openai = is("openai", "api.openai.com") || url.includes(".openai.azure.com");
  const deepseek = is("deepseek", "deepseek.com");
  const openrouter = is("openrouter", "openrouter.ai");
  const zai = is("zai", "api.z.ai");
  const xai = is("xai", "api.x.ai");
  const moonshot =
    model.provider === "moonshotai" || model.provider === "moonshotai-cn" || url.includes("api.moonshot.");
  const cloudflareGateway = is("cloudflare-ai-gateway", "gateway.ai.cloudflare.com");
  // pi 1.6 sends `strict` only to hosts known to take it (its catalogue marks them per model):
  // OpenAI compatibility alone does not promise it, so a custom or local server gets none.
  const knownStrict = openai || deepseek || openrouter || zai || is("groq", "api.groq.com");
  return {
    supportsStrictMode: knownStrict && !moonshot && !cloudflareGateway,
    supportsReasoningEffort: !zai && !xai,
    supportsUsageInStreaming: true,
    maxTokensField: openai || openrouter ? "max_completion_tokens" : "max_tokens",
    requiresToolResultName: false,
    requiresThinkingAsText: false,
    requiresReasoningContentOnAssistantMessages: deepseek,
    thinkingFormat: deepseek ? "deepseek" : openrouter ? "openrouter" : zai ? "zai" : "openai",
    // pi 1.6: off unless the model's compat says so (its catalogue sets it for verified models).
    supportsMidConvoSystemMessages: false,
    supportsMidConvoToolAdditions: false,
    supportsDeveloperRole: openai,
  };
}

/** The settings for one model: its models.json `compat` over the detected defaults. */
export function resolveCompat(model: Model): ResolvedCompat {
  const detected = detectCompat(model);
  const set = (model.compat ?? {}) as OpenAICompat;
  return {
    supportsReasoningEffort: set.supportsReasoningEffort ?? detected.supportsReasoningEffort,
    supportsUsageInStreaming: set.supportsUsageInStreaming ?? detected.supportsUsageInStreaming,
    maxTokensField: set.maxTokensField ?? detected.maxTokensField,
    requiresToolResultName: set.requiresToolResultName ?? detected.requiresToolResultName,
    requiresThinkingAsText: set.requiresThinkingAsText ?? detected.requiresThinkingAsText,
    requiresReasoningContentOnAssistantMessages:
      set.requiresReasoningContentOnAssistantMessages ?? detected.requiresReasoningContentOnAssistantMessages,
    thinkingFormat: set.thinkingFormat ?? detected.thinkingFormat,
    supportsStrictMode: set.supportsStrictMode ?? detected.supportsStrictMode,
    supportsMidConvoSystemMessages: set.supportsMidConvoSystemMessages ?? detected.supportsMidConvoSystemMessages,
    supportsMidConvoToolAdditions: set.supportsMidConvoToolAdditions ?? detected.supportsMidConvoToolAdditions,
    supportsDeveloperRole: set.supportsDeveloperRole ?? detected.supportsDeveloperRole,
  };
}
