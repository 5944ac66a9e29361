/**
 * Runs the registered handlers when the runtime calls a hook: in load order, each
 * seeing the changes of the ones before it. A throwing handler becomes an
 * `extension_error` event and the next handler still runs.
 */
import { isDeepStrictEqual } from "node:util";
import type { WorkerEvent } from "../../shared/schema/events.js";
import type { AgentMessage, ToolCall } from "../../shared/schema/messages.js";
import type { ToolCallDecision } from "../agent/types.js";
import type { AgentTool, ToolResult } from "../types.js";
import { extensionContext, type ContextSource, type ExtensionRegistry, type RegisteredCommand } from "./api.js";
import type { ExtensionCommandInfo, ExtensionHooks } from "./hooks.js";
import type {
  ExtensionContext,
  ExtensionEventName,
  ExtensionEventResults,
  ExtensionEvents,
  ExtensionHandler,
  ExtensionMessage,
  ExtensionUi,
} from "./types.js";

/** The event reporting a failing extension. */
export type ExtensionErrorEvent = Extract<WorkerEvent, { type: "extension_error" }>;

/** What a runner needs besides the registry. */
export interface RunnerOptions {
  registry: ExtensionRegistry;
  context: ContextSource;
  emit: (event: ExtensionErrorEvent) => void;
  /** Load failures; reported at `sessionStart`, when a mode is listening. */
  loadErrors?: ExtensionErrorEvent[];
  /** Project extensions found but not loaded (untrusted project). */
  skipped?: string[];
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: string };

/** The `ExtensionHooks` of a set of loaded extensions. */
export class ExtensionRunner implements ExtensionHooks {
  private readonly registry: ExtensionRegistry;
  private readonly source: ContextSource;
  private readonly emit: (event: ExtensionErrorEvent) => void;
  private pendingLoadErrors: ExtensionErrorEvent[];
  private readonly skippedPaths: string[];

  constructor(options: RunnerOptions) {
    this.registry = options.registry;
    this.source = options.context;
    this.emit = options.emit;
    this.pendingLoadErrors = options.loadErrors ?? [];
    this.skippedPaths = options.skipped ?? [];
  }

  tools(): AgentTool[] {
    return this.registry.tools.map((t) => t.tool);
  }

  commands(): ExtensionCommandInfo[] {
    return invocationNames(this.registry.commands).map(({ name, command }) => ({
      name,
      ...(command.description !== undefined ? { description: command.description } : {}),
      source: "extension",
      path: command.path,
    }));
  }

  async runCommand(name: string, args: string): Promise<boolean> {
    const entry = invocationNames(this.registry.commands).find((c) => c.name === name);
    if (!entry) return false;
    // The RPC mode reads the `extension_ui_response` a dialog waits for only after
    // this prompt is answered, so the answer cannot wait for a command that opened
    // one: it comes when the command finishes or opens its first dialog.
    let dialogOpened!: () => void;
    const opened = new Promise<void>((resolve) => (dialogOpened = resolve));
    const ctx = { ...extensionContext(this.source), ui: announcingDialogs(this.source.ui(), dialogOpened) };
    const run = this.guard(entry.command.path, `command:${name}`, () => entry.command.handler(args, ctx));
    await Promise.race([run, opened]);
    return true;
  }

  async sessionStart(): Promise<void> {
    const errors = this.pendingLoadErrors;
    this.pendingLoadErrors = [];
    for (const error of errors) this.emit(error);
    await this.dispatch("session_start", () => ({ type: "session_start" }));
  }

  async beforeAgentStart(prompt: string, systemPrompt: string): Promise<string | undefined> {
    let current = systemPrompt;
    await this.dispatch(
      "before_agent_start",
      () => ({ type: "before_agent_start", prompt, systemPrompt: current }),
      (result) => {
        if (typeof result?.systemPrompt === "string") current = result.systemPrompt;
      },
    );
    return current === systemPrompt ? undefined : current;
  }

  async context(messages: AgentMessage[]): Promise<AgentMessage[] | undefined> {
    if (!this.has("context")) return undefined;
    let current: ExtensionMessage[] = structuredClone(messages);
    let replaced = false;
    await this.dispatch(
      "context",
      () => ({ type: "context", messages: current }),
      (result) => {
        if (Array.isArray(result?.messages)) {
          current = result.messages;
          replaced = true;
        }
      },
    );
    // The handlers were told to keep the shapes they were given.
    return replaced ? (current as unknown as AgentMessage[]) : undefined;
  }

  async toolCall(call: ToolCall, args: Record<string, unknown>): Promise<ToolCallDecision | undefined> {
    if (!this.has("tool_call")) return undefined;
    let input: Record<string, unknown> = structuredClone(args);
    let blocked: ToolCallDecision | undefined;
    const failed: string[] = [];
    await this.dispatch(
      "tool_call",
      () => ({ type: "tool_call", toolName: call.name, toolCallId: call.id, input }),
      (result, path) => {
        if (result?.block === true) {
          blocked = { block: true, reason: result.reason ?? `Tool call "${call.name}" was blocked by the extension ${path}.` };
          return "stop";
        }
        if (result && typeof result.input === "object" && result.input !== null) input = result.input;
        return undefined;
      },
      (error, path) => failed.push(`${path}: ${error}`),
    );
    if (blocked) return blocked;
    // Fail safe: a guard that crashed must not let the call through unchecked.
    if (failed.length > 0) {
      return { block: true, reason: `Tool call "${call.name}" was blocked because an extension failed while checking it (${failed.join("; ")}).` };
    }
    return isDeepStrictEqual(input, args) ? undefined : { args: input };
  }

  async toolResult(call: ToolCall, result: ToolResult, isError: boolean): Promise<{ result: ToolResult; isError: boolean } | undefined> {
    if (!this.has("tool_result")) return undefined;
    let content = result.content;
    let details = result.details;
    let error = isError;
    let changed = false;
    await this.dispatch(
      "tool_result",
      () => ({ type: "tool_result", toolName: call.name, toolCallId: call.id, input: call.arguments, content, details, isError: error }),
      (patch) => {
        if (!patch) return;
        if (Array.isArray(patch.content)) {
          content = patch.content;
          changed = true;
        }
        if ("details" in patch) {
          details = patch.details;
          changed = true;
        }
        if (typeof patch.isError === "boolean") {
          error = patch.isError;
          changed = true;
        }
      },
    );
    if (!changed) return undefined;
    return { result: details === undefined ? { content } : { content, details }, isError: error };
  }

  async agentEnd(messages: AgentMessage[]): Promise<void> {
    await this.dispatch("agent_end", () => ({ type: "agent_end", messages }));
  }

  async sessionShutdown(): Promise<void> {
    await this.dispatch("session_shutdown", () => ({ type: "session_shutdown" }));
  }

  skipped(): string[] {
    return [...this.skippedPaths];
  }

  private has(event: ExtensionEventName): boolean {
    return this.registry.handlers.some((h) => h.event === event);
  }

  /**
   * Call every handler of `event` in order. `makeEvent` builds each handler's event
   * (so it sees earlier changes); `apply` takes a result and may stop the chain.
   */
  private async dispatch<E extends ExtensionEventName>(
    event: E,
    makeEvent: () => ExtensionEvents[E],
    apply?: (result: ExtensionEventResults[E] | undefined, path: string) => "stop" | void | undefined,
    onError?: (error: string, path: string) => void,
  ): Promise<void> {
    const handlers = this.registry.handlers.filter((h) => h.event === event);
    if (handlers.length === 0) return;
    const ctx: ExtensionContext = extensionContext(this.source);
    for (const { path, handler } of handlers) {
      const typed = handler as unknown as ExtensionHandler<E>;
      const outcome = await this.guard(path, event, () => typed(makeEvent(), ctx));
      if (!outcome.ok) {
        onError?.(outcome.error, path);
        continue;
      }
      if (apply?.(outcome.value ?? undefined, path) === "stop") return;
    }
  }

  /** Run extension code; a throw (or rejection) becomes an `extension_error`. */
  private async guard<T>(path: string, event: string, fn: () => T | Promise<T>): Promise<Outcome<T>> {
    try {
      return { ok: true, value: await fn() };
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      this.emit({ type: "extension_error", extensionPath: path, event, error });
      return { ok: false, error };
    }
  }
}

/**
 * The names commands are invoked by: their own, or `name:1`, `name:2`, … in load
 * order when several extensions registered the same one (as pi does).
 */
function invocationNames(commands: readonly RegisteredCommand[]): { name: string; command: RegisteredCommand }[] {
  const total = new Map<string, number>();
  for (const c of commands) total.set(c.name, (total.get(c.name) ?? 0) + 1);
  const seen = new Map<string, number>();
  return commands.map((command) => {
    if (total.get(command.name) === 1) return { name: command.name, command };
    const n = (seen.get(command.name) ?? 0) + 1;
    seen.set(command.name, n);
    return { name: `${command.name}:${n}`, command };
  });
}

/** `ui` that calls `onDialog` whenever a dialog opens. */
function announcingDialogs(ui: ExtensionUi, onDialog: () => void): ExtensionUi {
  return {
    select: (...a) => (onDialog(), ui.select(...a)),
    confirm: (...a) => (onDialog(), ui.confirm(...a)),
    input: (...a) => (onDialog(), ui.input(...a)),
    editor: (...a) => (onDialog(), ui.editor(...a)),
    notify: (...a) => ui.notify(...a),
    setStatus: (...a) => ui.setStatus(...a),
  };
}
