/**
 * The contract between the session layer and loaded extensions. The session calls
 * these hooks at pi's points; an empty set (`NO_EXTENSIONS`) changes nothing.
 */
import type { AgentMessage, ImageContent, Model, ThinkingLevel, ToolCall } from "../../shared/schema/messages.js";
import type { ToolCallDecision } from "../agent/types.js";
import type { Skill } from "../resources/skills.js";
import type { AgentTool, ToolResult } from "../types.js";
import type { RegisteredFlag, RegisteredProvider } from "./api.js";
import type { ExtensionHost } from "./host.js";
import type { CustomMessageInput, ExtensionEvent } from "./types.js";
import type { RegisteredVirtualModel, RouteInput } from "./virtual-models.js";

// Defined with the other author-facing types (types.ts stays free of worker imports); the modes implement it.
export type { ExtensionUi } from "./types.js";

/** A slash command an extension registered, as `get_commands` lists it. */
export interface ExtensionCommandInfo {
  name: string;
  description?: string;
  source: "extension";
  path: string;
}

/** What the `input` event decided. */
export interface InputOutcome {
  action: "continue" | "transform" | "handled";
  text: string;
  images?: ImageContent[];
}

/**
 * pi's `BuildSystemPromptOptions` as `before_agent_start` hands them to extensions: the
 * parts the session built its system prompt from.
 */
export interface SystemPromptOptions {
  cwd: string;
  /** A prompt replacing the default one (`--system-prompt`, SYSTEM.md). */
  customPrompt?: string;
  /** Names of the active tools. */
  selectedTools: string[];
  /** Selected tools whose declarations requests leave out (pi's `prepareLoadout`; always empty here). */
  hiddenTools: string[];
  /** The system prompt's one-line entry of each listed tool, by name. */
  toolSnippets: Record<string, string>;
  /** Each tool's guidelines, trimmed and once, by name (tools without any are not keys), as pi 1.6 hands them. */
  toolGuidelines: Record<string, string[]>;
  /** Rules handlers add after the tools' (empty at first, as in pi 1.6). */
  promptGuidelines: string[];
  /** `--append-system-prompt` texts (or APPEND_SYSTEM.md), joined by blank lines. */
  appendSystemPrompt?: string;
  /** Extra prompt sections by tag name, each rendered `<name>…</name>` after the working directory. */
  sections: Record<string, string>;
  contextFiles: { path: string; content: string }[];
  skills: readonly Skill[];
}

/** The options of this run's prompt and how to render them after handlers changed them in place. */
export interface RunPrompt {
  options: SystemPromptOptions;
  render(options: SystemPromptOptions): string;
}

/** Paths `resources_discover` handlers returned, in load order (relative ones resolved against the cwd). */
export interface DiscoveredResources {
  skillPaths: string[];
  promptPaths: string[];
  /** Accepted; themes style pi's terminal, which a headless worker has not. */
  themePaths: string[];
}

/**
 * What starts the run `before_agent_start` announces (pi 1.6's `messageType`): a prompt, or
 * a custom message an extension sent with `triggerTurn` while idle.
 */
export type RunStart =
  | { messageType: "user"; prompt: string; images?: ImageContent[] }
  | { messageType: "custom"; message: AgentMessage };

/** What `before_agent_start` handlers returned, merged. */
export interface BeforeAgentStartOutcome {
  systemPrompt?: string;
  messages: CustomMessageInput[];
}

/** The hooks the session calls. Every hook tolerates throwing handlers (they become `extension_error`). */
export interface ExtensionHooks {
  /** Give the extensions their session (before `sessionStart`). */
  bind(host: ExtensionHost): void;
  /** Tools registered by extensions (a name equal to a built-in replaces it). */
  tools(): AgentTool[];
  commands(): ExtensionCommandInfo[];
  /** Providers extensions registered, in order (applied over models.json when bound and on each change). */
  providers(): RegisteredProvider[];
  /** Virtual models extensions registered (pi 1.6), in order; the session lists them beside the others. */
  virtualModels(): RegisteredVirtualModel[];
  /** Where a request of a virtual model goes: its router's physical model and level (throws when routing fails). */
  routeRequest(input: RouteInput): Promise<{ model: Model; thinkingLevel: ThinkingLevel }>;
  /** Flags extensions registered (the CLI accepts them). */
  flags(): RegisteredFlag[];
  /** Whether any handler listens to `event` (so the session can skip building it). */
  has(event: string): boolean;
  /** Run `/name args` when `name` is a registered command; false when it is not one. */
  runCommand(name: string, args: string): Promise<boolean>;
  /**
   * A notification (results ignored); delivered in order, after the ones before it.
   * `begun` is called once the first handler ran up to its first wait (at once when none listens).
   */
  notify(event: ExtensionEvent, begun?: () => void): Promise<void>;
  /** `session_before_*`: the first `{ cancel: true }` wins; otherwise the last result. */
  before(event: ExtensionEvent): Promise<Record<string, unknown> | undefined>;
  /**
   * pi 1.6's actionable boundary (`agent_before_settle`): handlers in load order, each seeing the
   * entries and continuation proposed so far and the context `preview` makes of them; a returned
   * `entries` or `continue` replaces that field. `preview` throws on entries that cannot be
   * written (reported, as pi's "Invalid boundary entries"); a proposal that ends invalid
   * gives no entries and no continuation.
   */
  boundary<C>(
    event: ExtensionEvent,
    preview: (entries: unknown) => { entries: C[]; context: unknown },
  ): Promise<{ entries: C[]; continue: boolean }>;
  /** `session_start`, then `resources_discover`: resolves with the resource paths the handlers returned. */
  sessionStart(
    reason: "startup" | "new" | "resume" | "fork" | "reload",
    previousSessionFile?: string,
  ): Promise<DiscoveredResources>;
  sessionShutdown(reason: "quit" | "new" | "resume" | "fork" | "reload", targetSessionFile?: string): Promise<void>;
  input(
    text: string,
    images: ImageContent[] | undefined,
    source: "rpc" | "interactive" | "extension",
  ): Promise<InputOutcome>;
  beforeAgentStart(
    start: RunStart,
    systemPrompt: string,
    prompt?: RunPrompt,
  ): Promise<BeforeAgentStartOutcome | undefined>;
  /** Per model request: may return replacement messages for this request only. */
  context(messages: AgentMessage[]): Promise<AgentMessage[] | undefined>;
  /** `context_with_system`: the request's whole transcript, sent as returned; undefined without handlers. */
  contextWithSystem(messages: AgentMessage[]): Promise<AgentMessage[] | undefined>;
  toolCall(call: ToolCall, args: Record<string, unknown>): Promise<ToolCallDecision | undefined>;
  toolResult(
    call: ToolCall,
    args: Record<string, unknown>,
    result: ToolResult,
    isError: boolean,
  ): Promise<{ result: ToolResult; isError: boolean } | undefined>;
  /** `message_end`: a replacement for the finished message (same role), or undefined. */
  messageEnd(message: AgentMessage): Promise<AgentMessage | undefined>;
  /** `before_provider_request`: the payload to send (the same one when no handler replaced it). */
  providerRequest(payload: unknown): Promise<unknown>;
  /** `user_bash`: a handler may return the result itself. */
  userBash(command: string, excludeFromContext: boolean, cwd: string): Promise<Record<string, unknown> | undefined>;
  /** Extensions that were found but skipped (an untrusted project), for a notice. */
  skipped(): string[];
}

/** The hooks of a worker without extensions. */
export const NO_EXTENSIONS: ExtensionHooks = {
  bind: () => undefined,
  tools: () => [],
  commands: () => [],
  providers: () => [],
  virtualModels: () => [],
  routeRequest: async ({ model }) => {
    throw new Error(`Virtual model ${model.provider}/${model.id} is not registered.`);
  },
  flags: () => [],
  has: () => false,
  runCommand: async () => false,
  notify: async (_event, begun) => begun?.(),
  before: async () => undefined,
  boundary: async () => ({ entries: [], continue: false }),
  sessionStart: async () => ({ skillPaths: [], promptPaths: [], themePaths: [] }),
  sessionShutdown: async () => undefined,
  input: async (text, images) => ({ action: "continue", text, images }),
  beforeAgentStart: async () => undefined,
  context: async () => undefined,
  contextWithSystem: async () => undefined,
  toolCall: async () => undefined,
  toolResult: async () => undefined,
  messageEnd: async () => undefined,
  providerRequest: async (payload) => payload,
  userBash: async () => undefined,
  skipped: () => [],
};
