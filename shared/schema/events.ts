/**
 * Events a pi worker writes on stdout (they never carry an `id`; only responses do).
 * Shapes follow rpc.md and the recorded pi 0.73.1 traffic in shared/protocol/.
 */
import { Type, type Static } from "typebox";
import {
  AgentMessage,
  AssistantMessage,
  ThinkingLevel,
  ImageContent,
  TextContent,
  ToolCall,
  ToolResultMessage,
} from "./messages.js";

const Partial = { partial: AssistantMessage };

/** The streaming delta inside `message_update`. */
export const AssistantMessageEvent = Type.Union([
  Type.Object({ type: Type.Literal("text_start"), contentIndex: Type.Number(), ...Partial }),
  Type.Object({ type: Type.Literal("text_delta"), contentIndex: Type.Number(), delta: Type.String(), ...Partial }),
  Type.Object({ type: Type.Literal("text_end"), contentIndex: Type.Number(), content: Type.String(), ...Partial }),
  Type.Object({ type: Type.Literal("thinking_start"), contentIndex: Type.Number(), ...Partial }),
  Type.Object({ type: Type.Literal("thinking_delta"), contentIndex: Type.Number(), delta: Type.String(), ...Partial }),
  Type.Object({ type: Type.Literal("thinking_end"), contentIndex: Type.Number(), content: Type.String(), ...Partial }),
  Type.Object({ type: Type.Literal("toolcall_start"), contentIndex: Type.Number(), ...Partial }),
  Type.Object({ type: Type.Literal("toolcall_delta"), contentIndex: Type.Number(), delta: Type.String(), ...Partial }),
  Type.Object({ type: Type.Literal("toolcall_end"), contentIndex: Type.Number(), toolCall: ToolCall, ...Partial }),
]);
export type AssistantMessageEvent = Static<typeof AssistantMessageEvent>;

export const ToolResultPayload = Type.Object({
  content: Type.Array(Type.Union([TextContent, ImageContent])),
  details: Type.Optional(Type.Unknown()),
});
export type ToolResultPayload = Static<typeof ToolResultPayload>;

export const AgentStartEvent = Type.Object({ type: Type.Literal("agent_start") });
export const AgentEndEvent = Type.Object({
  type: Type.Literal("agent_end"),
  messages: Type.Array(AgentMessage),
  /**
   * Our addition, only when true: an automatic retry follows (auto_retry_start, then a
   * new run), so this run is not the end of the prompt. pi's clients cannot tell.
   */
  willRetry: Type.Optional(Type.Boolean()),
});
/** pi 1.x: the run is over, retries, overflow recovery and queued messages included (`agent_end` closes only one low-level run). */
export const AgentSettledEvent = Type.Object({
  type: Type.Literal("agent_settled"),
  /** The run ended because it was aborted. */
  aborted: Type.Optional(Type.Boolean()),
});
export const TurnStartEvent = Type.Object({ type: Type.Literal("turn_start") });
export const TurnEndEvent = Type.Object({
  type: Type.Literal("turn_end"),
  message: AgentMessage,
  toolResults: Type.Array(ToolResultMessage),
});
export const MessageStartEvent = Type.Object({ type: Type.Literal("message_start"), message: AgentMessage });
export const MessageUpdateEvent = Type.Object({
  type: Type.Literal("message_update"),
  message: AgentMessage,
  assistantMessageEvent: AssistantMessageEvent,
});
export const MessageEndEvent = Type.Object({ type: Type.Literal("message_end"), message: AgentMessage });
export const ToolExecutionStartEvent = Type.Object({
  type: Type.Literal("tool_execution_start"),
  toolCallId: Type.String(),
  toolName: Type.String(),
  args: Type.Unknown(),
});
export const ToolExecutionUpdateEvent = Type.Object({
  type: Type.Literal("tool_execution_update"),
  toolCallId: Type.String(),
  toolName: Type.String(),
  args: Type.Unknown(),
  partialResult: ToolResultPayload,
});
export const ToolExecutionEndEvent = Type.Object({
  type: Type.Literal("tool_execution_end"),
  toolCallId: Type.String(),
  toolName: Type.String(),
  result: ToolResultPayload,
  isError: Type.Boolean(),
});
export const QueueUpdateEvent = Type.Object({
  type: Type.Literal("queue_update"),
  steering: Type.Array(Type.String()),
  followUp: Type.Array(Type.String()),
});
export const CompactionReason = Type.Union([
  Type.Literal("manual"),
  Type.Literal("threshold"),
  Type.Literal("overflow"),
]);
export const CompactionResult = Type.Object({
  summary: Type.String(),
  firstKeptEntryId: Type.String(),
  tokensBefore: Type.Number(),
  details: Type.Optional(Type.Unknown()),
});
export type CompactionResult = Static<typeof CompactionResult>;
export const CompactionStartEvent = Type.Object({ type: Type.Literal("compaction_start"), reason: CompactionReason });
export const CompactionEndEvent = Type.Object({
  type: Type.Literal("compaction_end"),
  reason: CompactionReason,
  result: Type.Union([CompactionResult, Type.Null()]),
  aborted: Type.Boolean(),
  willRetry: Type.Boolean(),
  errorMessage: Type.Optional(Type.String()),
});
export const AutoRetryStartEvent = Type.Object({
  type: Type.Literal("auto_retry_start"),
  attempt: Type.Number(),
  maxAttempts: Type.Number(),
  delayMs: Type.Number(),
  errorMessage: Type.String(),
  /** Why this delay: the provider's `retry-after` (with the header), or exponential backoff. */
  delayReason: Type.Optional(Type.String()),
});
export const AutoRetryEndEvent = Type.Object({
  type: Type.Literal("auto_retry_end"),
  success: Type.Boolean(),
  attempt: Type.Number(),
  finalError: Type.Optional(Type.String()),
});
export const ExtensionErrorEvent = Type.Object({
  type: Type.Literal("extension_error"),
  extensionPath: Type.String(),
  event: Type.String(),
  error: Type.String(),
});

/** The thinking level changed (set, cycled, or clamped by a model change), as pi 0.73 reports it. */
export const ThinkingLevelChangedEvent = Type.Object({
  type: Type.Literal("thinking_level_changed"),
  level: ThinkingLevel,
});
/** The session's display name changed (`set_session_name`). */
export const SessionInfoChangedEvent = Type.Object({
  type: Type.Literal("session_info_changed"),
  name: Type.Optional(Type.String()),
});

/** Events of one agent run, emitted by the agent loop. */
export const AgentEvent = Type.Union([
  AgentStartEvent,
  AgentEndEvent,
  TurnStartEvent,
  TurnEndEvent,
  MessageStartEvent,
  MessageUpdateEvent,
  MessageEndEvent,
  ToolExecutionStartEvent,
  ToolExecutionUpdateEvent,
  ToolExecutionEndEvent,
]);
export type AgentEvent = Static<typeof AgentEvent>;

/** Every event a worker may write, the agent events plus the session-level ones. */
export const WorkerEvent = Type.Union([
  AgentEvent,
  AgentSettledEvent,
  QueueUpdateEvent,
  CompactionStartEvent,
  CompactionEndEvent,
  AutoRetryStartEvent,
  AutoRetryEndEvent,
  ExtensionErrorEvent,
  ThinkingLevelChangedEvent,
  SessionInfoChangedEvent,
]);
export type WorkerEvent = Static<typeof WorkerEvent>;
