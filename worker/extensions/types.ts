/**
 * The extension API as pi 0.73 defines it (docs/extensions.md of
 * `@mariozechner/pi-coding-agent`): the shapes an extension written for pi sees.
 * Extensions usually import these types from `@mariozechner/pi-coding-agent`;
 * type-only imports vanish when the extension is loaded. This file depends on
 * nothing of the worker but `typebox`.
 */
import type { Static, TSchema } from "typebox";

/** Text for the model. */
export interface ExtensionTextContent {
  type: "text";
  text: string;
}

/** An image for the model (base64 data). */
export interface ExtensionImageContent {
  type: "image";
  data: string;
  mimeType: string;
}

/** What a tool result carries to the model. */
export type ExtensionToolContent = ExtensionTextContent | ExtensionImageContent;

/** A custom message an extension adds (`sendMessage`, `before_agent_start`). */
export interface CustomMessageInput {
  customType: string;
  content: string | ExtensionToolContent[];
  display?: boolean;
  details?: unknown;
}

/** Options of a dialog: it resolves to its default when `signal` aborts or `timeout` ms pass. */
export interface DialogOptions {
  signal?: AbortSignal;
  timeout?: number;
}

/**
 * The dialogs and notices a mode provides (the RPC bridge, the TUI, print mode's
 * defaults). The extension layer builds pi's whole `ctx.ui` on top of this.
 */
export interface ExtensionUi {
  /** One of `options`, or undefined when cancelled or timed out. */
  select(title: string, options: string[], opts?: DialogOptions): Promise<string | undefined>;
  /** False when declined, cancelled or timed out. */
  confirm(title: string, message?: string, opts?: DialogOptions): Promise<boolean>;
  input(title: string, placeholder?: string, opts?: DialogOptions): Promise<string | undefined>;
  editor(title: string, prefill?: string, opts?: DialogOptions): Promise<string | undefined>;
  /** Fire-and-forget. */
  notify(message: string, type?: "info" | "warning" | "error" | "success"): void;
  /** Fire-and-forget; `undefined` clears the entry. */
  setStatus(key: string, text: string | undefined): void;
  /** Fire-and-forget: lines above (default) or below the editor; `undefined` clears. */
  setWidget?(key: string, lines: string[] | undefined, placement?: "aboveEditor" | "belowEditor"): void;
  setTitle?(title: string): void;
  setEditorText?(text: string): void;
}

/** A tool's result: content for the model, details for UIs and state. `terminate` ends the run after this batch. */
export interface ExtensionToolResult {
  content: ExtensionToolContent[];
  details?: unknown;
  terminate?: boolean;
  /** pi 1.6: the result as data for programmatic callers (with `outputSchema`). */
  structuredContent?: unknown;
  /** pi 1.6: a failure reported without throwing, keeping details and structured content. */
  isError?: boolean;
}

/** A tool the model may call, in pi's shape. Rendering members are accepted and unused headless. */
export interface ExtensionToolDefinition<S extends TSchema = TSchema> {
  name: string;
  label?: string;
  description: string;
  /** One line in the system prompt's tool list while the tool is active. */
  promptSnippet?: string;
  /** Bullets added to the system prompt's guidelines while the tool is active. */
  promptGuidelines?: string[];
  parameters: S;
  prepareArguments?: (args: unknown) => unknown;
  execute(
    toolCallId: string,
    params: Static<S>,
    signal: AbortSignal | undefined,
    onUpdate: ((partial: ExtensionToolResult) => void) | undefined,
    ctx: unknown,
  ): Promise<ExtensionToolResult>;
  renderCall?: unknown;
  renderResult?: unknown;
  executionMode?: "sequential" | "parallel";
  /** False: registered inactive (pi 1.6), declared once `setActiveTools` or `--tools +name` names it. */
  defaultActive?: boolean;
  /** pi 1.6's exposure: `deferred` tools start inactive and are what `tool_search` loads. */
  exposure?: "direct" | "deferred" | "model-only";
  /** The group it belongs to (an MCP server's), with what the group offers. */
  namespace?: { name: string; aliases?: string[]; description?: string; instructions?: string };
  /** pi 1.6: the JSON schema of `structuredContent`, which programmatic callers (codemode scripts) get. */
  outputSchema?: unknown;
}

/** A slash command: a prompt `/name args` runs `handler` instead of the model. */
export interface ExtensionCommandDefinition {
  description?: string;
  handler(args: string, ctx: unknown): void | Promise<void>;
  getArgumentCompletions?: unknown;
}

/** A flag extensions register; the `pi` CLI accepts it as `--name`. */
export interface ExtensionFlagDefinition {
  description?: string;
  type?: "boolean" | "string";
  default?: boolean | string;
}

/** The events the worker fires (pi.on takes any name; the others never fire, as in pi). */
export const EXTENSION_EVENT_NAMES = [
  "project_trust",
  "resources_discover",
  "session_start",
  "session_before_switch",
  "session_before_fork",
  "session_before_compact",
  "session_compact",
  "session_before_tree",
  "session_tree",
  "session_shutdown",
  "input",
  "before_agent_start",
  "agent_start",
  "agent_end",
  "agent_before_settle",
  "agent_settled",
  "ui_prompt_start",
  "ui_prompt_end",
  "session_compact_failed",
  "turn_start",
  "turn_end",
  "message_start",
  "message_update",
  "message_end",
  "context",
  "context_with_system",
  "before_provider_request",
  "after_provider_response",
  "provider_stream_event",
  "tool_call",
  "tool_execution_start",
  "tool_execution_update",
  "tool_execution_end",
  "tool_result",
  "model_select",
  "thinking_level_select",
  "user_bash",
  "mcp_servers_change",
] as const;

/** One of pi's event names. */
export type ExtensionEventName = (typeof EXTENSION_EVENT_NAMES)[number];

/** An event as handlers receive it: its `type` and the fields pi documents for it. */
export interface ExtensionEvent {
  type: ExtensionEventName;
  [field: string]: unknown;
}

/** A handler: runs in load order; a throwing one is reported as `extension_error`. */
export type ExtensionHandler = (event: ExtensionEvent, ctx: unknown) => unknown;

/** The `ctx` handlers, tools and commands receive (see docs/extensions.md for every member). */
export interface ExtensionContext {
  cwd: string;
  hasUI: boolean;
  ui: ExtensionUi & Record<string, unknown>;
  sessionManager: Record<string, (...args: never[]) => unknown>;
  [member: string]: unknown;
}

/** The `pi` object an extension's factory receives (the members pi 0.73 documents). */
export interface ExtensionAPI {
  on(
    event: ExtensionEventName,
    handler: (event: ExtensionEvent & Record<string, any>, ctx: ExtensionContext) => unknown,
  ): void;
  registerTool<S extends TSchema>(tool: ExtensionToolDefinition<S>): void;
  registerCommand(
    name: string,
    command: { description?: string; handler(args: string, ctx: ExtensionContext): void | Promise<void> },
  ): void;
  registerFlag(name: string, options?: ExtensionFlagDefinition): void;
  getFlag(name: string): boolean | string | undefined;
  sendUserMessage(content: string, options?: { deliverAs?: "steer" | "followUp" }): Promise<void>;
  sendMessage(
    message: CustomMessageInput,
    options?: { deliverAs?: "steer" | "followUp" | "nextTurn"; triggerTurn?: boolean },
  ): void;
  [member: string]: unknown;
}
