/**
 * Every type of the agent layer: the loop's configuration, its hooks and the context
 * object each hook receives. The layer knows tools and providers only through the
 * contracts in `worker/types.ts`; sessions, retries and extensions plug in here.
 */
import type { AgentEvent } from "../../shared/schema/events.js";
import type {
  AgentMessage,
  AssistantMessage,
  LlmMessage,
  Model,
  SystemMessage,
  ThinkingLevel,
  ToolCall,
  ToolResultMessage,
} from "../../shared/schema/messages.js";
import type { AgentTool, Provider, ProviderRequest, ToolResult } from "../types.js";
import type { RetryHint } from "../providers/retry-delay.js";

/** How queued messages are released: all at once or one per turn. */
export type QueueMode = "all" | "one-at-a-time";

/** Where messages that enter the context at a turn's start came from. */
export type InjectSource = "prompt" | "steering" | "followUp";

/** What the conversation looks like when a hook runs (read-only by convention). */
export interface AgentContextView {
  systemPrompt: string;
  messages: readonly AgentMessage[];
  tools: readonly AgentTool[];
}

/** `beforeToolCall`'s context: a validated call that is about to run. */
export interface BeforeToolCallContext {
  assistantMessage: AssistantMessage;
  toolCall: ToolCall;
  /** The validated arguments. */
  args: Record<string, unknown>;
  context: AgentContextView;
  signal: AbortSignal;
}

/** What `beforeToolCall` may decide: block the call, or replace its arguments (validated again unless `revalidate` is false). */
export interface ToolCallDecision {
  block?: boolean;
  reason?: string;
  args?: Record<string, unknown>;
  revalidate?: boolean;
}

/** `afterToolCall`'s context: a call that ran (a rejected one never reaches the hook, as in pi 1.6) and its result. */
export interface AfterToolCallContext {
  assistantMessage: AssistantMessage;
  toolCall: ToolCall;
  args: Record<string, unknown>;
  result: ToolResult;
  isError: boolean;
  context: AgentContextView;
  signal: AbortSignal;
}

/** What `afterToolCall` may change; omitted fields keep their values. */
export interface ToolResultPatch {
  result?: ToolResult;
  isError?: boolean;
}

/** `routeRequest`'s context: the selection and the messages this request sends. */
export interface RouteRequestContext {
  model: Model;
  thinkingLevel: ThinkingLevel;
  messages: AgentMessage[];
  signal: AbortSignal;
}

/** Why a model response failed, as the provider classified it. */
export interface ResponseFailure {
  /** Transient (429, 5xx, overloaded, connection reset): worth trying again. */
  retryable: boolean;
  /** The context window is exceeded. */
  contextOverflow: boolean;
  /** What the provider's response headers said about retrying (`retry-after`, `x-should-retry`). */
  retryHint?: RetryHint;
}

/** `afterResponse`'s context: one finished model response, before it joins the context. */
export interface AfterResponseContext {
  message: AssistantMessage;
  /** Null when the response succeeded (or was aborted). */
  failure: ResponseFailure | null;
  /** How often this request was already repeated (0 on the first answer). */
  repeats: number;
  signal: AbortSignal;
}

/**
 * Everything outside the loop plugs in here. Hooks must not throw (a hook that can
 * fail catches its own errors); each receives a context object.
 */
export interface AgentHooks {
  /** The tools a tool may call through `executeTool` (pi 1.6's callable tools); default: the active ones. */
  callableTools?: () => AgentTool[];
  /** Replace the messages sent for one request (they stay unchanged in the context). */
  transformContext?: (messages: AgentMessage[], signal: AbortSignal) => Promise<AgentMessage[]>;
  /**
   * After `transformContext`: the whole transcript of the request, a leading system message
   * with the prompt and tool declarations first (pi 1.6's `context_with_system`); what it
   * returns is sent as it is, or undefined to leave the request alone. Given only when wanted.
   */
  transformFullContext?: () => ((messages: AgentMessage[]) => Promise<AgentMessage[] | undefined>) | undefined;
  /** The `onStreamEvent` of a request to `model` (pi 1.6's `provider_stream_event`), when wanted. */
  streamEvents?: (model: Model) => ProviderRequest["onStreamEvent"];
  /** Block a validated call or replace its arguments. */
  beforeToolCall?: (ctx: BeforeToolCallContext) => Promise<ToolCallDecision | undefined>;
  /** Change a call's result before it is reported. */
  afterToolCall?: (ctx: AfterToolCallContext) => Promise<ToolResultPatch | undefined>;
  /**
   * Decide about a finished response: `"repeat"` sends the same request again (the
   * failed response is not kept), `"accept"` keeps it. Retries and overflow
   * compaction live behind this hook.
   */
  afterResponse?: (ctx: AfterResponseContext) => Promise<"accept" | "repeat">;
  /**
   * pi 1.6's finishTurn: after a turn's messages are in the context and before its
   * `turn_end` goes out (the turn_end boundary of extensions). True asks for one more
   * request, made unless tool results, steering or a follow-up make one anyway; an error
   * or aborted turn ends the run whatever it says.
   */
  finishTurn?: (turn: { message: AssistantMessage; toolResults: ToolResultMessage[] }) => Promise<boolean>;
  /**
   * Before a run's second and later turns (after a tool batch, a steer, a follow-up or a
   * continuation), never after its last one: pi 1.6's `prepareNextTurn`, where the session
   * compacts a context past the threshold before the next request.
   */
  prepareNextTurn?: () => Promise<void>;
  /** Messages entered the context at a turn's start. */
  onInject?: (messages: AgentMessage[], from: InjectSource) => void;
  /** Before `message_end`: may replace the finished message (same role), which is then what the context keeps. */
  finalizeMessage?: (message: AgentMessage) => Promise<AgentMessage | undefined>;
  /**
   * Before each model request: the model and thinking level it goes to, when not the
   * selected ones (pi 1.6's virtual models route here). A throw ends the request with an
   * error response carrying its message.
   */
  routeRequest?: (ctx: RouteRequestContext) => Promise<{ model: Model; thinkingLevel: ThinkingLevel } | undefined>;
  /**
   * Before each model request's turn: a system message declaring what changed in the system
   * prompt or the tools since the context last declared them (pi 1.6), or undefined. It
   * enters the context first in its turn, with its own message_start/message_end.
   */
  declareSystem?: (context: readonly AgentMessage[]) => SystemMessage | undefined;
  /**
   * Asked before each streamed provider event: a promise while the reader of the events
   * is behind (the loop takes the next event once it settles), else undefined. Without
   * it a reply streamed faster than it is read piles up in memory, and a command's answer
   * waits behind the pile.
   */
  pace?: () => Promise<void> | undefined;
  /** The session's id, passed to each provider request (a prompt-cache key for the APIs that take one). */
  sessionId?: () => string | undefined;
  /** Passed to each provider request: see and replace the payload, see the response status and headers. */
  onPayload?: ProviderRequest["onPayload"];
  onResponse?: ProviderRequest["onResponse"];
}

/** Everything the loop needs for one run. Getters are read fresh at every turn so changes apply mid-run. */
export interface LoopConfig extends AgentHooks {
  /** The provider and key of the model a request goes to (the selected one, or where it was routed). */
  provider: (model: Model) => Provider;
  model: () => Model;
  thinkingLevel: () => ThinkingLevel;
  systemPrompt: () => string;
  tools: () => AgentTool[];
  apiKey: (model: Model) => string | undefined;
  cwd: string;
  signal: AbortSignal;
  /** Steering messages to inject after this turn's tool calls, before the next model call. */
  takeSteering: () => AgentMessage[];
  /** Follow-ups, asked when the agent would otherwise stop. */
  takeFollowUps: () => AgentMessage[];
  /** Map the conversation to what the model sees (per request; must not throw). */
  toLlm: (messages: AgentMessage[]) => LlmMessage[];
  /** A queued (steering or follow-up) message is about to enter the context: one call per message, as pi reports each. */
  onDeliver?: (message: AgentMessage) => void;
}

/** The loop's event sink. Listeners run synchronously, so a listener that persists runs before output. */
export type Emit = (event: AgentEvent) => void;

/** What the agent needs from its host: everything that is not conversation state. */
export interface AgentHost extends AgentHooks {
  cwd: string;
  provider: (model: Model) => Provider;
  apiKey: (model: Model) => string | undefined;
  systemPrompt: () => string;
  tools: () => AgentTool[];
  /** Before the first turn of a run. */
  beforeRun?: (prompts: AgentMessage[]) => Promise<void>;
  /** After `agent_end` of a run. */
  afterRun?: (runMessages: AgentMessage[]) => Promise<void>;
  /** The steering or follow-up queue changed. */
  onQueueChange?: () => void;
}

/** The agent's initial settings. */
export interface AgentSettings {
  model: Model;
  thinkingLevel: ThinkingLevel;
  steeringMode?: QueueMode;
  followUpMode?: QueueMode;
}
