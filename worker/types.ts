/**
 * The worker layer's contracts: tools, providers and the streams between them.
 * The agent loop knows only these types; tools and providers know nothing of the loop.
 */
import type { Static, TSchema } from "typebox";
import type {
  AssistantMessage,
  ImageContent,
  LlmMessage,
  Model,
  SystemMessage,
  TextContent,
  ThinkingLevel,
} from "../shared/schema/messages.js";
import type { AssistantMessageEvent } from "../shared/schema/events.js";
import type { RetryHint } from "./providers/retry-delay.js";

/** What a tool returns: content for the model, details for UIs and logs. */
export interface ToolResult<D = unknown> {
  content: (TextContent | ImageContent)[];
  details?: D;
  /** End the run after this batch of calls when every result of the batch says so (pi's `terminate`). */
  terminate?: boolean;
  /**
   * The result as data for programmatic callers (pi 1.6's `structuredContent`: read gives
   * its text, bash its output and exit code); it travels in `tool_execution_end` and the
   * `tool_result` event, never in the message the model reads.
   */
  structuredContent?: unknown;
  /** A failure the tool reports without throwing (pi 1.6: bash's non-zero exit keeps its details and data). */
  isError?: boolean;
}

/** Everything a running tool may use; `signal` aborts it, `onUpdate` streams partial results. */
export interface ToolContext {
  cwd: string;
  toolCallId: string;
  signal: AbortSignal;
  /** The model the run talks to (pi 1.6's `ctx.model`): read tells when it cannot see the image it returns. */
  model?: Model;
  /** Accumulated partial result so far (not a delta); the loop turns it into `tool_execution_update`. */
  onUpdate?: (partial: ToolResult) => void;
  /** The tools `executeTool` may call (pi 1.6's `ctx.tools`): the active direct ones and every deferred one. */
  tools?: AgentTool[];
  /**
   * Run another tool on behalf of this call (pi 1.6's `ctx.executeTool()`, which codemode
   * scripts use): validated and passed through the same `tool_call` / `tool_result` hooks
   * as a call of the model, with its own `tool_execution_*` events. Never rejects for a
   * tool's failure: it comes back with `isError`.
   */
  executeTool?: (name: string, args: unknown, options?: { signal?: AbortSignal }) => Promise<NestedToolOutcome>;
}

/** What `ToolContext.executeTool` resolves to. */
export interface NestedToolOutcome {
  toolCall: { id: string; name: string; arguments: Record<string, unknown> };
  result: ToolResult;
  isError: boolean;
}

/**
 * A tool the model may call. Parameters are a TypeBox schema checked before `execute`;
 * `execute` throws an Error to report a failure (the message goes to the model as an error result).
 */
export interface AgentTool<S extends TSchema = TSchema> {
  name: string;
  /** Human label for UIs. */
  label: string;
  /** One-line description, sent to the model and placed in the system prompt. */
  description: string;
  /** The system prompt's line for the tool, when it differs from `description` (pi's `promptSnippet`). */
  snippet?: string;
  /** False leaves the tool out of the system prompt's tool list (pi lists an extension tool only when it has a `promptSnippet`). */
  listed?: boolean;
  /** Usage guidelines placed in the system prompt while the tool is active. */
  guidelines?: string[];
  parameters: S;
  /** Reshape arguments models commonly send wrong before validation (e.g. JSON in a string). */
  prepareArguments?: (raw: unknown) => unknown;
  /** pi's `executionMode`: "sequential" makes a batch holding a call to this tool run one call at a time. Default parallel. */
  executionMode?: "sequential" | "parallel";
  execute(args: Static<S>, ctx: ToolContext): Promise<ToolResult>;
  /** False: registered inactive, declared only once `setActiveTools` (or `--tools +name`) names it. */
  defaultActive?: boolean;
  /** pi 1.6's exposure of an extension tool: `deferred` ones are what `tool_search` finds and loads. */
  exposure?: ToolExposure;
  /** The group the tool belongs to (an MCP server's `mcp__<server>`), which `tool_search` ranks by too. */
  namespace?: ToolNamespace;
  /**
   * pi 1.6's `outputSchema`: the tool's `structuredContent` is its value for programmatic
   * callers (a codemode script gets it instead of the text; read, bash and MCP tools have one).
   */
  outputSchema?: unknown;
}

/** pi 1.6's tool namespace: a group of tools (an MCP server's) with what it offers. */
export interface ToolNamespace {
  name: string;
  aliases?: string[];
  description?: string;
  instructions?: string;
}

/** How a tool reaches the model (pi 1.6): declared (`direct`), found by search (`deferred`), or only the model's (`model-only`). */
export type ToolExposure = "direct" | "deferred" | "model-only";

/** The tool description sent to a provider. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON schema of the arguments. */
  parameters: unknown;
}

/** A system message of the transcript, standing before the request message at `at` (pi 1.6's transcript). */
export interface PlacedSystemMessage {
  at: number;
  message: SystemMessage;
}

/** One model request. */
export interface ProviderRequest {
  model: Model;
  systemPrompt: string;
  messages: LlmMessage[];
  tools: ToolSpec[];
  /**
   * The session's system messages where they stand (the leading one at 0), when they are
   * what `systemPrompt` and `tools` fold: a provider whose model takes system messages
   * mid-conversation (`compat.supportsMidConvoSystemMessages`) sends a later change in
   * place, so the start of the request, and the provider's prompt cache, stay valid.
   */
  systemMessages?: PlacedSystemMessage[];
  thinkingLevel: ThinkingLevel;
  apiKey?: string;
  /** The session's id: the Responses API's `prompt_cache_key`, as pi 1.6 sends it. */
  sessionId?: string;
  signal: AbortSignal;
  /** Longest wait a provider may ask for before a retry; a longer ask fails the request at once. Default 60 s; 0 = no cap. */
  maxRetryDelayMs?: number;
  /** Sees (and may replace) the SDK payload right before it is sent (extensions' `before_provider_request`). */
  onPayload?: (payload: unknown) => Promise<unknown>;
  /** The HTTP status and headers, before the body is read (extensions' `after_provider_response`). */
  onResponse?: (response: { status: number; headers: Record<string, string> }) => Promise<void>;
  /**
   * Each parsed provider stream event (an SDK chunk or event) before it is normalized,
   * awaited in stream order (extensions' `provider_stream_event`). Set only when wanted.
   */
  onStreamEvent?: (data: unknown) => Promise<void>;
}

/**
 * What a provider stream yields: `start` first, then wire deltas, then exactly one
 * `done` or `error`. A provider never throws; failures arrive as `error` with a final
 * message whose stopReason is `error` or `aborted`.
 */
export type ProviderEvent =
  | { type: "start"; partial: AssistantMessage }
  | AssistantMessageEvent
  | { type: "done"; message: AssistantMessage }
  | {
      type: "error";
      message: AssistantMessage;
      /** Transient failure (429, 5xx, overloaded, connection reset): worth retrying. */
      retryable: boolean;
      /** The provider said the context window is exceeded. */
      contextOverflow?: boolean;
      /** What the provider's response headers said about retrying (the retry loop decides with it). */
      retryHint?: RetryHint;
    };

/** A model backend: one function from a request to an event stream. */
export interface Provider {
  stream(request: ProviderRequest): AsyncIterable<ProviderEvent>;
}
