/**
 * Message, content and model shapes of the pi wire protocol (pi-ai 0.73 types).
 * Schemas are open (extra fields pass) because peers add fields we do not know yet.
 */
import { Type, type Static } from "typebox";

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
});
export type ToolCall = Static<typeof ToolCall>;

export const Cost = Type.Object({
  input: Type.Number(),
  output: Type.Number(),
  cacheRead: Type.Number(),
  cacheWrite: Type.Number(),
  total: Type.Number(),
});

export const Usage = Type.Object({
  input: Type.Number(),
  output: Type.Number(),
  cacheRead: Type.Number(),
  cacheWrite: Type.Number(),
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
  responseId: Type.Optional(Type.String()),
  usage: Usage,
  stopReason: StopReason,
  errorMessage: Type.Optional(Type.String()),
  timestamp: Type.Number(),
});
export type AssistantMessage = Static<typeof AssistantMessage>;

export const ToolResultMessage = Type.Object({
  role: Type.Literal("toolResult"),
  toolCallId: Type.String(),
  toolName: Type.String(),
  content: Type.Array(Type.Union([TextContent, ImageContent])),
  details: Type.Optional(Type.Unknown()),
  isError: Type.Boolean(),
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

/** Every message a pi conversation can hold. */
export const AgentMessage = Type.Union([
  UserMessage,
  AssistantMessage,
  ToolResultMessage,
  BashExecutionMessage,
  CompactionSummaryMessage,
  BranchSummaryMessage,
  CustomMessage,
]);
export type AgentMessage = Static<typeof AgentMessage>;

/** The messages a model provider understands. */
export type LlmMessage = UserMessage | AssistantMessage | ToolResultMessage;

export const ThinkingLevel = Type.Union([
  Type.Literal("off"),
  Type.Literal("minimal"),
  Type.Literal("low"),
  Type.Literal("medium"),
  Type.Literal("high"),
  Type.Literal("xhigh"),
]);
export type ThinkingLevel = Static<typeof ThinkingLevel>;

/** The thinking levels in cycling order, for CLI choices and `cycle_thinking_level`. */
export const THINKING_LEVELS: readonly ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh"];

export const ModelApi = Type.Union([
  Type.Literal("anthropic-messages"),
  Type.Literal("openai-completions"),
  Type.Literal("openai-responses"),
  Type.Literal("faux"),
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
});
export type Model = Static<typeof Model>;

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
