/**
 * The `compat` object of models.json (provider or model level), as pi 1.6.0's
 * `ProviderCompatSchema` (pi-ai `providers/compat-schema.js`): one superset of every API's
 * settings, each field typed as pi types it and unknown fields let through, so a pi
 * models.json loads unchanged and a mistyped field is refused with its path. Which fields
 * change what a provider sends: compat.ts (Chat Completions), anthropic.ts, openai-responses.ts.
 */
import type { Static, TSchema } from "typebox";
import * as Type from "typebox/type";

const bool = () => Type.Optional(Type.Boolean());
/** An optional field taking one of `values` (typed as their union). */
const oneOf = <const T extends string[]>(...values: T) =>
  Type.Optional(Type.Unsafe<T[number]>(Type.Union(values.map((v) => Type.Literal(v)))));

/** A `chatTemplateKwargs` value: a literal, or `{$var}` for a value pi fills in. */
const ChatTemplateKwargValue = Type.Union([
  Type.String(),
  Type.Number(),
  Type.Boolean(),
  Type.Null(),
  Type.Object({
    $var: Type.Union([
      Type.Literal("thinking.enabled"),
      Type.Literal("thinking.effort"),
      Type.Literal("thinking.budget"),
    ]),
    omitWhenOff: bool(),
  }),
]);

/** An Anthropic server-side refusal fallback with its local prices. */
const AllowedFallbackModel = Type.Object({
  provider: Type.String({ minLength: 1 }),
  model: Type.String({ minLength: 1 }),
  cost: Type.Object({
    input: Type.Number(),
    output: Type.Number(),
    cacheRead: Type.Number(),
    cacheWrite: Type.Number(),
  }),
});

const routing = (): TSchema => Type.Optional(Type.Record(Type.String(), Type.Unknown()));

/** Every field of pi 1.6.0's compat schema, by the API that reads it (some are read by several). */
export const ModelCompatSchema = Type.Object({
  // OpenAI Chat Completions (and compatible servers).
  supportsStore: bool(),
  supportsDeveloperRole: bool(),
  supportsReasoningEffort: bool(),
  supportsUsageInStreaming: bool(),
  supportsFinishReason: bool(),
  maxTokensField: oneOf("max_completion_tokens", "max_tokens"),
  requiresToolResultName: bool(),
  requiresAssistantAfterToolResult: bool(),
  requiresNonNullAssistantContent: bool(),
  requiresToolsWithToolHistory: bool(),
  requiresThinkingAsText: bool(),
  requiresReasoningContentOnAssistantMessages: bool(),
  thinkingFormat: oneOf(
    "openai",
    "openrouter",
    "deepseek",
    "together",
    "baseten",
    "zai",
    "qwen",
    "chat-template",
    "qwen-chat-template",
    "string-thinking",
    "ant-ling",
  ),
  chatTemplateKwargs: Type.Optional(Type.Record(Type.String(), ChatTemplateKwargValue)),
  chatTemplateArgs: Type.Optional(Type.Record(Type.String(), ChatTemplateKwargValue)),
  openRouterRouting: routing(),
  vercelGatewayRouting: routing(),
  zaiToolStream: bool(),
  thinkingTokenBudgetField: oneOf("thinking_token_budget", "thinking_budget", "thinking_budget_tokens"),
  supportsThinkingTokenBudget: bool(),
  supportsOpenAIGrammarTools: bool(),
  supportsMidConvoSystemMessages: bool(),
  supportsMidConvoToolAdditions: bool(),
  supportsStrictMode: bool(),
  cacheControlFormat: oneOf("anthropic"),
  sendSessionAffinityHeaders: bool(),
  sessionAffinityFormat: oneOf("openai", "openai-nosession", "openrouter"),
  promptCacheKeyMode: oneOf("auto", "enabled", "disabled"),
  supportsLongCacheRetention: bool(),
  vllmPriority: Type.Optional(Type.Number()),
  // OpenAI Responses.
  supportsAdditionalTools: bool(),
  supportsToolSearch: bool(),
  supportsExplicitPromptCacheMode: bool(),
  supportsMidConvoEffort: bool(),
  supportsMaxOutputTokens: bool(),
  // Anthropic Messages.
  supportsEagerToolInputStreaming: bool(),
  supportsCacheControlOnTools: bool(),
  supportsTemperature: bool(),
  forceAdaptiveThinking: bool(),
  allowEmptySignature: bool(),
  supportsStrictTools: bool(),
  supportsMidConvoToolChanges: bool(),
  supportsMessageThreads: bool(),
  allowedFallbackModels: Type.Optional(Type.Array(AllowedFallbackModel, { maxItems: 3 })),
  // System One classifiers.
  imageInput: oneOf("assets", "images", "state-image-urls"),
  sendImageOptInHeader: bool(),
});
/** A models.json `compat` object. */
export type ModelCompat = Static<typeof ModelCompatSchema>;
