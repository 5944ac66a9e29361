/**
 * pi's `compat` settings for OpenAI-compatible servers (models.json, provider or model
 * level): what a server accepts and requires beyond the OpenAI API. Unset fields are
 * detected from the provider name and base URL, so the known hosts work without any.
 */
import type { Model } from "../../shared/schema/messages.js";
import type { ModelCompat } from "./compat-schema.js";

/**
 * The Chat Completions settings this worker honours, all decided: which reasoning field,
 * usage in the stream, the output-limit field, tool-result names, thinking as text or in
 * its field, `strict` on tools, and the session's later system messages in place (as
 * `system`, or `developer` for a reasoning model with `supportsDeveloperRole`), with the
 * tools they add declared there. The other fields of models.json's `compat` are accepted.
 */
export interface ResolvedCompat {
  supportsReasoningEffort: boolean;
  supportsUsageInStreaming: boolean;
  maxTokensField: "max_completion_tokens" | "max_tokens";
  requiresToolResultName: boolean;
  requiresThinkingAsText: boolean;
  requiresReasoningContentOnAssistantMessages: boolean;
  thinkingFormat: NonNullable<ModelCompat["thinkingFormat"]>;
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
  const set = (model.compat ?? {}) as ModelCompat;
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
