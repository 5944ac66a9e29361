/**
 * Events of a pi worker: `WorkerEvent` as the session emits them in the process (what
 * extensions and the in-process TUI see, `message_update` with the whole message so
 * far), and `WireEvent` as `pi --mode rpc` / `--mode json` write them on stdout, pi
 * 1.6.0's shapes (docs/json.md): `message_update` carries only the delta and the usage.
 * Events never carry a command `id`, except `bash_execution_update`.
 */
import type { Static } from "typebox";
import * as Type from "typebox/type";
import {
  AgentMessage,
  AssistantMessage,
  Usage,
  ThinkingLevel,
  ImageContent,
  TextContent,
  ToolCall,
  ToolResultMessage,
} from "./messages.js";

const Partial = { partial: AssistantMessage };
const At = { contentIndex: Type.Number() };

/** The streaming delta inside `message_update`, with the message so far (`partial`), in the process. */
export const AssistantMessageEvent = Type.Union([
  Type.Object({ type: Type.Literal("text_start"), ...At, ...Partial }),
  Type.Object({ type: Type.Literal("text_delta"), ...At, delta: Type.String(), ...Partial }),
  Type.Object({ type: Type.Literal("text_end"), ...At, content: Type.String(), ...Partial }),
  Type.Object({ type: Type.Literal("thinking_start"), ...At, ...Partial }),
  Type.Object({ type: Type.Literal("thinking_delta"), ...At, delta: Type.String(), ...Partial }),
  Type.Object({ type: Type.Literal("thinking_end"), ...At, content: Type.String(), ...Partial }),
  Type.Object({ type: Type.Literal("toolcall_start"), ...At, ...Partial }),
  Type.Object({ type: Type.Literal("toolcall_delta"), ...At, delta: Type.String(), ...Partial }),
  Type.Object({ type: Type.Literal("toolcall_end"), ...At, toolCall: ToolCall, ...Partial }),
]);
export type AssistantMessageEvent = Static<typeof AssistantMessageEvent>;

/** A union's members without `K` each (Omit of a union would merge its members). */
type OmitEach<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * The delta on the wire (pi 1.6's `JsonAssistantMessageEvent`): no `partial`, and
 * `toolcall_start` names the call. Derived from the in-process shape, so declared once.
 */
export type WireAssistantMessageEvent =
  | OmitEach<Exclude<AssistantMessageEvent, { type: "toolcall_start" }>, "partial">
  | (Omit<Extract<AssistantMessageEvent, { type: "toolcall_start" }>, "partial"> & { id: string; toolName: string });

export const ToolResultPayload = Type.Object({
  content: Type.Array(Type.Union([TextContent, ImageContent])),
  details: Type.Optional(Type.Unknown()),
});
export type ToolResultPayload = Static<typeof ToolResultPayload>;

export const AgentStartEvent = Type.Object({ type: Type.Literal("agent_start") });
export const AgentEndEvent = Type.Object({
  type: Type.Literal("agent_end"),
  messages: Type.Array(AgentMessage),
  /** An automatic retry follows (auto_retry_start, then a new run), so this run is not the end of the prompt. */
  willRetry: Type.Boolean(),
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
  /** The call that made this one through `ctx.executeTool()` (a codemode script's), as pi 1.6. */
  parentToolCallId: Type.Optional(Type.String()),
});
export const ToolExecutionUpdateEvent = Type.Object({
  type: Type.Literal("tool_execution_update"),
  toolCallId: Type.String(),
  toolName: Type.String(),
  args: Type.Unknown(),
  partialResult: ToolResultPayload,
  parentToolCallId: Type.Optional(Type.String()),
});
export const ToolExecutionEndEvent = Type.Object({
  type: Type.Literal("tool_execution_end"),
  toolCallId: Type.String(),
  toolName: Type.String(),
  result: ToolResultPayload,
  isError: Type.Boolean(),
  /** How long the tool's execute() took; absent when it did not run (pi 1.6). */
  durationMs: Type.Optional(Type.Number()),
  parentToolCallId: Type.Optional(Type.String()),
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
  /** pi 1.6: the estimated tokens of the context rebuilt after the compaction. */
  estimatedTokensAfter: Type.Optional(Type.Number()),
  /** pi 1.6: what the summary's model call(s) used. */
  usage: Type.Optional(Usage),
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
/** An entry was appended to the session outside a message (an extension's `pi.appendEntry`). */
export const EntryAppendedEvent = Type.Object({
  type: Type.Literal("entry_appended"),
  entry: Type.Record(Type.String(), Type.Unknown()),
});
/** Output of the RPC `bash` command as it arrives; `id` is the command's. */
export const BashExecutionUpdateEvent = Type.Object({
  type: Type.Literal("bash_execution_update"),
  id: Type.Optional(Type.String()),
  delta: Type.String(),
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

/** Every event of a worker's session, the agent events plus the session-level ones. */
export const WorkerEvent = Type.Union([
  AgentEvent,
  AgentSettledEvent,
  EntryAppendedEvent,
  BashExecutionUpdateEvent,
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

/** `message_update` as the wire carries it (pi 1.6): the delta and the response's cumulative usage. */
export interface WireMessageUpdateEvent {
  type: "message_update";
  usage: Usage;
  assistantMessageEvent: WireAssistantMessageEvent;
}

/** Every event a worker writes on stdout: the session's, with `message_update` in its wire shape. */
export type WireEvent = Exclude<WorkerEvent, { type: "message_update" }> | WireMessageUpdateEvent;
