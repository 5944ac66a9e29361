/**
 * Message, content and model shapes of the pi wire protocol (pi-ai 0.73 types).
 * Schemas are open (extra fields pass) because peers add fields we do not know yet.
 */
import type { Static } from "typebox";
import * as Type from "typebox/type";

export const TextContent = Type.Object({
  type: Type.Literal("text"),
  text: Type.String(),
  textSignature: Type.Optional(Type.String()),
});
export type TextContent = Static<typeof TextContent>;

export const ImageContent = Type.Object({
  type: Type.Literal("image"),
  data: Type.String(),
  mimeType: Type.String(),
});
export type ImageContent = Static<typeof ImageContent>;

export const ThinkingContent = Type.Object({
  type: Type.Literal("thinking"),
  thinking: Type.String(),
  thinkingSignature: Type.Optional(Type.String()),
  redacted: Type.Optional(Type.Boolean()),
});
export type ThinkingContent = Static<typeof ThinkingContent>;

export const ToolCall = Type.Object({
  type: Type.Literal("toolCall"),
  id: Type.String(),
  name: Type.String(),
  arguments: Type.Record(Type.String(), Type.Unknown()),
  /** pi 1.6: why the model's argument text is not a JSON object (then `arguments` is `{}`). */
  argumentsError: Type.Optional(Type.String()),
});
export type ToolCall = Static<typeof ToolCall>;

export const ThinkingLevel = Type.Union([
  Type.Literal("off"),
  Type.Literal("minimal"),
  Type.Literal("low"),
  Type.Literal("medium"),
  Type.Literal("high"),
  Type.Literal("xhigh"),
  Type.Literal("max"),
]);
export type ThinkingLevel = Static<typeof ThinkingLevel>;

/** Every thinking level in order (pi 1.6's), for CLI choices; a model offers those `supportedThinkingLevels` lists. */
export const THINKING_LEVELS: readonly ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

export const Cost = Type.Object({
  input: Type.Number(),
  output: Type.Number(),
  cacheRead: Type.Number(),
  cacheWrite: Type.Number(),
  total: Type.Number(),
  /** pi 1.6: whether `total` is the provider's own figure (false: priced here from the model's costs). */
  totalFromProvider: Type.Optional(Type.Boolean()),
});

export const Usage = Type.Object({
  input: Type.Number(),
  output: Type.Number(),
  cacheRead: Type.Number(),
  cacheWrite: Type.Number(),
  /** pi 1.6: the output tokens spent on reasoning (0 when the provider does not say). */
  reasoning: Type.Optional(Type.Number()),
  totalTokens: Type.Number(),
  cost: Cost,
});
export type Usage = Static<typeof Usage>;

export const StopReason = Type.Union([
  Type.Literal("stop"),
  Type.Literal("length"),
  Type.Literal("toolUse"),
  Type.Literal("error"),
  Type.Literal("aborted"),
  /** Only in an assistant's `message_start`: the response has not ended yet (pi 1.6). */
  Type.Literal("pending"),
]);
export type StopReason = Static<typeof StopReason>;

export const UserMessage = Type.Object({
  role: Type.Literal("user"),
  content: Type.Union([Type.String(), Type.Array(Type.Union([TextContent, ImageContent]))]),
  timestamp: Type.Number(),
});
export type UserMessage = Static<typeof UserMessage>;

export const AssistantMessage = Type.Object({
  role: Type.Literal("assistant"),
  content: Type.Array(Type.Union([TextContent, ThinkingContent, ToolCall])),
  api: Type.String(),
  provider: Type.String(),
  model: Type.String(),
  /**
   * The model that answered, where the provider answered with another than `model` asked
   * for (pi 1.6: Anthropic's server-side fallback, `compat.allowedFallbackModels`).
   */
  responseModel: Type.Optional(Type.String()),
  responseId: Type.Optional(Type.String()),
  usage: Usage,
  stopReason: StopReason,
  errorMessage: Type.Optional(Type.String()),
  timestamp: Type.Number(),
  /** The provider's own stop reason (`finish_reason`, `stop_reason`), as it said it (pi 1.6). */
  rawStopReason: Type.Optional(Type.String()),
  /** How long the response took, from the request to its end (pi 1.6). */
  durationMs: Type.Optional(Type.Number()),
  /** The thinking level the request was made with (pi 1.6). */
  thinkingLevel: Type.Optional(ThinkingLevel),
  /**
   * The provider's own word for the effort the reply was made with, where the request set it
   * inside the conversation (pi 1.6, `compat.supportsMidConvoEffort`): the next request puts
   * the same marker before this reply, so its cached prefix stays valid.
   */
  providerThinkingLevel: Type.Optional(Type.String()),
});
export type AssistantMessage = Static<typeof AssistantMessage>;

export const ToolResultMessage = Type.Object({
  role: Type.Literal("toolResult"),
  toolCallId: Type.String(),
  toolName: Type.String(),
  content: Type.Array(Type.Union([TextContent, ImageContent])),
  details: Type.Optional(Type.Unknown()),
  isError: Type.Boolean(),
  /** How long the tool's execute() took; absent when it did not run (pi 1.6). */
  durationMs: Type.Optional(Type.Number()),
  timestamp: Type.Number(),
});
export type ToolResultMessage = Static<typeof ToolResultMessage>;

/** Output of the `bash` RPC command, kept in the conversation and shown to the model on the next prompt. */
export const BashExecutionMessage = Type.Object({
  role: Type.Literal("bashExecution"),
  command: Type.String(),
  output: Type.String(),
  exitCode: Type.Union([Type.Number(), Type.Null()]),
  cancelled: Type.Boolean(),
  truncated: Type.Boolean(),
  fullOutputPath: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  timestamp: Type.Number(),
  /** Kept in the session but never sent to the model (the RPC bash command's `excludeFromContext`, pi's `!!`). */
  excludeFromContext: Type.Optional(Type.Boolean()),
});
export type BashExecutionMessage = Static<typeof BashExecutionMessage>;

/** Summary that replaces the compacted head of a conversation (written by compaction). */
export const CompactionSummaryMessage = Type.Object({
  role: Type.Literal("compactionSummary"),
  summary: Type.String(),
  tokensBefore: Type.Number(),
  timestamp: Type.Number(),
});
export type CompactionSummaryMessage = Static<typeof CompactionSummaryMessage>;

/** Summary of a branch the conversation came back from (a `branch_summary` entry on the path, as in pi). */
export const BranchSummaryMessage = Type.Object({
  role: Type.Literal("branchSummary"),
  summary: Type.String(),
  fromId: Type.String(),
  timestamp: Type.Number(),
});
export type BranchSummaryMessage = Static<typeof BranchSummaryMessage>;

/** An extension's message that takes part in the model's context (a `custom_message` entry, as in pi). */
export const CustomMessage = Type.Object({
  role: Type.Literal("custom"),
  customType: Type.String(),
  content: Type.Union([Type.String(), Type.Array(Type.Union([TextContent, ImageContent]))]),
  display: Type.Boolean(),
  details: Type.Optional(Type.Unknown()),
  timestamp: Type.Number(),
});
export type CustomMessage = Static<typeof CustomMessage>;

/** A tool as a system message declares it to the model (pi 1.6's `Tool`; extra fields pass). */
export const ToolDeclaration = Type.Object({
  name: Type.String(),
  description: Type.String(),
  parameters: Type.Unknown(),
  /** pi-ai 1.x: a grammar the provider may constrain the call's arguments with. */
  constrainedSampling: Type.Optional(Type.Unknown()),
});
export type ToolDeclaration = Static<typeof ToolDeclaration>;

/**
 * pi 1.6's system message: the session records the system prompt and the tool loadout as
 * these. The first request's holds every section and every tool; later ones patch
 * `sections` by name (`null` removes one) and list `toolsAdded`/`toolsRemoved`, so
 * replaying them in order gives the current prompt and tools.
 */
export const SystemMessage = Type.Object({
  role: Type.Literal("system"),
  content: Type.Union([Type.String(), Type.Array(TextContent)]),
  sections: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()]))),
  toolsAdded: Type.Optional(Type.Array(ToolDeclaration)),
  toolsRemoved: Type.Optional(Type.Array(Type.Object({ name: Type.String() }))),
  timestamp: Type.Number(),
});
export type SystemMessage = Static<typeof SystemMessage>;

/** Every message a pi conversation can hold. */
export const AgentMessage = Type.Union([
  UserMessage,
  AssistantMessage,
  ToolResultMessage,
  BashExecutionMessage,
  CompactionSummaryMessage,
  BranchSummaryMessage,
  CustomMessage,
  SystemMessage,
]);
export type AgentMessage = Static<typeof AgentMessage>;

/** The messages a model provider understands. */
export type LlmMessage = UserMessage | AssistantMessage | ToolResultMessage;

export const ModelApi = Type.Union([
  Type.Literal("anthropic-messages"),
  Type.Literal("openai-completions"),
  Type.Literal("openai-responses"),
  Type.Literal("faux"),
  // pi 1.6's virtual models (an extension's router picks a physical model per request).
  Type.Literal("pi-virtual"),
]);
export type ModelApi = Static<typeof ModelApi>;

/** A model as pi reports it in `get_state`, `set_model` and `get_available_models`. */
export const Model = Type.Object({
  id: Type.String(),
  name: Type.String(),
  api: ModelApi,
  provider: Type.String(),
  baseUrl: Type.String(),
  reasoning: Type.Boolean(),
  input: Type.Array(Type.Union([Type.Literal("text"), Type.Literal("image")])),
  cost: Type.Object({
    input: Type.Number(),
    output: Type.Number(),
    cacheRead: Type.Number(),
    cacheWrite: Type.Number(),
  }),
  contextWindow: Type.Number(),
  maxTokens: Type.Number(),
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  /** pi's per-server compatibility settings from models.json (worker/providers/compat.ts reads them). */
  compat: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  /**
   * pi 1.6's per-level mapping to the provider's own effort names: `null` takes a level
   * away, and `xhigh` / `max` exist only where mapped.
   */
  thinkingLevelMap: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()]))),
});
export type Model = Static<typeof Model>;

/**
 * The thinking levels a model offers, as pi 1.6's `getSupportedThinkingLevels`: only
 * `off` without reasoning; else `off` to `high`, and `xhigh` / `max` where the model maps
 * them, minus the levels it maps to null. Pure.
 */
export function supportedThinkingLevels(model: Pick<Model, "reasoning" | "thinkingLevelMap">): ThinkingLevel[] {
  if (!model.reasoning) return ["off"];
  return THINKING_LEVELS.filter((level) => {
    const mapped = model.thinkingLevelMap?.[level];
    if (mapped === null) return false;
    return level === "xhigh" || level === "max" ? mapped !== undefined : true;
  });
}

/** The level a model can use for `level`: itself, else the nearest supported above, else below (pi's clampThinkingLevel). Pure. */
export function clampThinkingLevel(
  model: Pick<Model, "reasoning" | "thinkingLevelMap">,
  level: ThinkingLevel,
): ThinkingLevel {
  const available = supportedThinkingLevels(model);
  if (available.includes(level)) return level;
  const at = THINKING_LEVELS.indexOf(level);
  const above = THINKING_LEVELS.slice(at + 1).find((l) => available.includes(l));
  const below = THINKING_LEVELS.slice(0, at)
    .reverse()
    .find((l) => available.includes(l));
  return above ?? below ?? available[0] ?? "off";
}

/** Zero usage, the starting point of every assistant message. */
export function emptyUsage(): Usage {
  return {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
}
