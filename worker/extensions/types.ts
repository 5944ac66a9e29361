/**
 * The types an extension author writes against. This file depends on nothing of
 * the worker (only on `typebox`, which tools need anyway), so an extension can
 * import it by path from a pi-orch checkout, or a copy of it, for completion:
 *
 *   import type { ExtensionApi } from "./types.js";
 *
 * Type-only imports vanish when the extension is loaded, so the path need not exist at run time.
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

/**
 * A message of the conversation as the worker keeps it (`user`, `assistant`,
 * `toolResult`, `bashExecution`, `compactionSummary`). Handlers that return
 * messages must keep the shapes they were given.
 */
export interface ExtensionMessage {
  role: string;
  content?: string | { type: string; [key: string]: unknown }[];
  timestamp?: number;
  [key: string]: unknown;
}

/** Dialogs and notices. In RPC mode dialogs are `extension_ui_request`s; in print mode they resolve to their defaults. */
export interface ExtensionUi {
  /** One of `options`, or undefined when cancelled or timed out. */
  select(title: string, options: string[], opts?: { timeout?: number }): Promise<string | undefined>;
  /** False when declined, cancelled or timed out. */
  confirm(title: string, message?: string, opts?: { timeout?: number }): Promise<boolean>;
  input(title: string, placeholder?: string, opts?: { timeout?: number }): Promise<string | undefined>;
  editor(title: string, prefill?: string, opts?: { timeout?: number }): Promise<string | undefined>;
  /** Fire-and-forget. */
  notify(message: string, type?: "info" | "warning" | "error"): void;
  /** Fire-and-forget; `undefined` clears the entry. */
  setStatus(key: string, text: string | undefined): void;
}

/** What every handler and command receives besides its event. */
export interface ExtensionContext {
  /** The worker's working directory. */
  cwd: string;
  ui: ExtensionUi;
  /** The session file, or undefined with `--no-session`. */
  sessionFile: string | undefined;
}

/** What a running extension tool receives. */
export interface ExtensionToolContext extends ExtensionContext {
  toolCallId: string;
  /** Aborts with the run; long work should stop when it fires. */
  signal: AbortSignal;
  /** Stream a partial result (the accumulated result so far, not a delta). */
  onUpdate?: (partial: ExtensionToolResult) => void;
}

/** What a tool returns: content for the model, details for UIs and logs. */
export interface ExtensionToolResult {
  content: ExtensionToolContent[];
  details?: unknown;
}

/**
 * A tool the model may call. `parameters` is a TypeBox schema, checked before
 * `execute`; throw an Error from `execute` to report a failure to the model.
 */
export interface ExtensionTool<S extends TSchema = TSchema> {
  name: string;
  /** Human label for UIs. */
  label: string;
  /** One line, sent to the model and placed in the system prompt. */
  description: string;
  /** Usage bullets for the system prompt; name the tool in each one. */
  guidelines?: string[];
  parameters: S;
  /** Reshape arguments models commonly send wrong, before validation. */
  prepareArguments?: (raw: unknown) => unknown;
  execute(args: Static<S>, ctx: ExtensionToolContext): Promise<ExtensionToolResult>;
}

/** A slash command: a prompt `/name args` runs `handler` instead of the model. */
export interface ExtensionCommand {
  description?: string;
  handler(args: string, ctx: ExtensionContext): void | Promise<void>;
}

/** The events an extension can subscribe to, with what each handler receives. */
export interface ExtensionEvents {
  /** The worker is ready (the mode is listening). */
  session_start: { type: "session_start" };
  /** A run is about to start; `systemPrompt` includes changes of earlier handlers. */
  before_agent_start: { type: "before_agent_start"; prompt: string; systemPrompt: string };
  /** Before each model request; `messages` is a copy, safe to change. */
  context: { type: "context"; messages: ExtensionMessage[] };
  /** A validated tool call, before it runs; `input` is a copy and may be changed in place. */
  tool_call: { type: "tool_call"; toolName: string; toolCallId: string; input: Record<string, unknown> };
  /** A tool finished; fields include changes of earlier handlers. */
  tool_result: {
    type: "tool_result";
    toolName: string;
    toolCallId: string;
    input: Record<string, unknown>;
    content: ExtensionToolContent[];
    details: unknown;
    isError: boolean;
  };
  /** A run ended; `messages` are the ones it added. */
  agent_end: { type: "agent_end"; messages: ExtensionMessage[] };
  /** The worker is shutting down. */
  session_shutdown: { type: "session_shutdown" };
}

/** What a handler may return for each event (nothing changes anything only where listed). */
export interface ExtensionEventResults {
  session_start: void;
  /** Replace the system prompt for this run only. */
  before_agent_start: { systemPrompt?: string } | void;
  /** Replace the messages sent to the model for this request only. */
  context: { messages?: ExtensionMessage[] } | void;
  /** Block the call (the model receives `reason` as an error result) or replace its arguments (validated again). */
  tool_call: { block: true; reason?: string } | { block?: false; input?: Record<string, unknown> } | void;
  /** Patch the result; omitted fields keep their values. */
  tool_result: { content?: ExtensionToolContent[]; details?: unknown; isError?: boolean } | void;
  agent_end: void;
  session_shutdown: void;
}

export type ExtensionEventName = keyof ExtensionEvents;

/** A handler of one event. Handlers run in load order; a throwing one is reported as `extension_error`. */
export type ExtensionHandler<E extends ExtensionEventName> = (
  event: ExtensionEvents[E],
  ctx: ExtensionContext,
) => ExtensionEventResults[E] | undefined | Promise<ExtensionEventResults[E] | undefined>;

/** The object an extension's default-exported function receives. */
export interface ExtensionApi {
  /** Offer a tool to the model; a tool named like a built-in replaces it. */
  registerTool<S extends TSchema>(tool: ExtensionTool<S>): void;
  /** Add `/name` (letters, digits, `_`, `-`); `get_commands` lists it. */
  registerCommand(name: string, command: ExtensionCommand): void;
  on<E extends ExtensionEventName>(event: E, handler: ExtensionHandler<E>): void;
  /** Prompt the agent as if the user typed `text` (a follow-up while a run is in progress). */
  sendUserMessage(text: string): Promise<void>;
}

/** The shape of an extension module's default export; it may be async. */
export type ExtensionFactory = (pi: ExtensionApi) => void | Promise<void>;
