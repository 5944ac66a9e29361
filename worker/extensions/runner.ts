/**
 * Runs the registered handlers when the session calls a hook, with pi's result
 * semantics: handlers run in load order, each seeing the changes of the ones
 * before; a throwing handler becomes an `extension_error` event and the next one
 * still runs. Notifications are delivered one after another in emission order.
 */
import type { WorkerEvent } from "../../shared/schema/events.js";
import type { AgentMessage, ImageContent, Model, ThinkingLevel, ToolCall } from "../../shared/schema/messages.js";
import type { ToolCallDecision } from "../agent/types.js";
import type { AgentTool, ToolResult } from "../types.js";
import { getCurrentSystemMessage } from "../providers/transcript.js";
import {
  commandInfos,
  invocationNames,
  mcpServerInfos,
  type ExtensionRegistry,
  type RegisteredFlag,
  type RegisteredProvider,
} from "./api.js";
import { commandContext, extensionContext } from "./context.js";
import type { ExtensionTrustDecision } from "./trust.js";
import type {
  BeforeAgentStartOutcome,
  DiscoveredResources,
  ExtensionCommandInfo,
  ExtensionHooks,
  InputOutcome,
  RunStart,
  RunPrompt,
} from "./hooks.js";
import type { ExtensionHost } from "./host.js";
import type { CustomMessageInput, ExtensionEvent, ExtensionToolDefinition, ExtensionUi } from "./types.js";
import { routeRequest, type RegisteredVirtualModel, type RouteInput } from "./virtual-models.js";

/** The event reporting a failing extension. */
export type ExtensionErrorEvent = Extract<WorkerEvent, { type: "extension_error" }>;

/** What a runner needs besides the registry. */
export interface RunnerOptions {
  registry: ExtensionRegistry;
  emit: (event: ExtensionErrorEvent) => void;
  /** Load failures; reported at `sessionStart`, when a mode is listening. */
  loadErrors?: ExtensionErrorEvent[];
  /** Project extensions found but not loaded (untrusted project). */
  skipped?: string[];
  /** Skill, prompt and theme paths of `--extension` packages: the first of what `sessionStart` reports. */
  packaged?: DiscoveredResources;
}

/** The `ExtensionHooks` of a set of loaded extensions. */
export class ExtensionRunner implements ExtensionHooks {
  private readonly registry: ExtensionRegistry;
  private readonly emitError: (event: ExtensionErrorEvent) => void;
  private readonly packaged: DiscoveredResources;
  private pendingLoadErrors: ExtensionErrorEvent[];
  private readonly skippedPaths: string[];
  private boundHost: ExtensionHost | null = null;
  private queue: Promise<void> = Promise.resolve();
  private readonly adapted = new WeakMap<ExtensionToolDefinition, AgentTool>();

  constructor(options: RunnerOptions) {
    this.registry = options.registry;
    this.emitError = options.emit;
    this.pendingLoadErrors = options.loadErrors ?? [];
    this.skippedPaths = options.skipped ?? [];
    this.packaged = options.packaged ?? { skillPaths: [], promptPaths: [], themePaths: [] };
  }

  bind(host: ExtensionHost): void {
    // Dialogs are told to handlers as pi 1.6's ui_prompt_start / ui_prompt_end.
    this.boundHost = { ...host, ui: () => this.promptTracked(host.ui()) };
  }

  /** Nested dialogs open at once count as one waiting span, as pi's `withUIPrompt`. */
  private uiPromptDepth = 0;
  private uiPrompt: { kind: string; title?: string } | undefined;

  /**
   * The dialogs of `ui`, each wrapped in pi 1.6's `ui_prompt_start` / `ui_prompt_end`
   * notifications (best effort: not awaited before the dialog shows or closes).
   */
  private promptTracked(ui: ExtensionUi): ExtensionUi {
    if (!this.has("ui_prompt_start") && !this.has("ui_prompt_end")) return ui;
    const around = <T>(kind: string, title: string | undefined, run: () => Promise<T>): Promise<T> => {
      if (this.uiPromptDepth++ === 0) {
        this.uiPrompt = { kind, ...(title ? { title } : {}) };
        const start = { type: "ui_prompt_start" as const, reason: "ui_prompt", ...this.uiPrompt };
        // Straight to the handlers, not behind the queue: the handler that opened the dialog holds it.
        queueMicrotask(() => void this.dispatch(start));
      }
      const finish = () => {
        if (--this.uiPromptDepth > 0) return;
        this.uiPromptDepth = 0;
        const end = { type: "ui_prompt_end" as const, reason: "ui_prompt", ...(this.uiPrompt ?? { kind }) };
        this.uiPrompt = undefined;
        queueMicrotask(() => void this.dispatch(end));
      };
      try {
        return run().finally(finish);
      } catch (err) {
        finish();
        throw err;
      }
    };
    return {
      notify: (message, type) => ui.notify(message, type),
      setStatus: (key, text) => ui.setStatus(key, text),
      ...(ui.setWidget ? { setWidget: (key, lines, placement) => ui.setWidget?.(key, lines, placement) } : {}),
      ...(ui.setTitle ? { setTitle: (title) => ui.setTitle?.(title) } : {}),
      ...(ui.setEditorText ? { setEditorText: (text) => ui.setEditorText?.(text) } : {}),
      select: (title, options, opts) => around("select", title, () => ui.select(title, options, opts)),
      confirm: (title, message, opts) => around("confirm", title, () => ui.confirm(title, message, opts)),
      input: (title, placeholder, opts) => around("input", title, () => ui.input(title, placeholder, opts)),
      editor: (title, prefill, opts) => around("editor", title, () => ui.editor(title, prefill, opts)),
    };
  }

  /** A tool was registered: once bound, the session refreshes its tools and prompt. */
  toolsChanged(): void {
    this.boundHost?.toolsChanged();
  }

  /** A provider was registered or removed: once bound, the session rebuilds its model list. */
  providersChanged(): void {
    this.boundHost?.providersChanged();
  }

  /** An MCP server was registered or removed: once bound, handlers get `mcp_servers_change` with every registered server. */
  mcpServersChanged(): void {
    if (this.boundHost) void this.notify({ type: "mcp_servers_change", servers: mcpServerInfos(this.registry) });
  }

  providers(): RegisteredProvider[] {
    return this.registry.providers;
  }

  virtualModels(): RegisteredVirtualModel[] {
    return this.registry.virtualModels;
  }

  routeRequest(input: RouteInput): Promise<{ model: Model; thinkingLevel: ThinkingLevel }> {
    const host = this.host();
    return routeRequest(
      this.registry.virtualModels,
      {
        models: () => host.models(),
        hasKey: (m) => m.api === "faux" || host.apiKeyFor(m) !== undefined,
        branch: () => host.branch(),
        appendEntry: (customType, data) => host.appendEntry(customType, data),
        context: () => extensionContext(host),
      },
      input,
    );
  }

  /** The session; extensions act on it only after `bind`. */
  host(): ExtensionHost {
    if (!this.boundHost)
      throw new Error(
        "the extension is not bound to a session yet: use the API from handlers, commands and tools, not while loading",
      );
    return this.boundHost;
  }

  tools(): AgentTool[] {
    return this.registry.tools.map((t) => this.adapt(t.path, t.tool));
  }

  commands(): ExtensionCommandInfo[] {
    return commandInfos(this.registry).map(({ name, description, source, path }) => ({
      name,
      ...(description !== undefined ? { description } : {}),
      source,
      path,
    }));
  }

  flags(): RegisteredFlag[] {
    return this.registry.flags;
  }

  has(event: string): boolean {
    return this.registry.handlers.some((h) => h.event === event);
  }

  skipped(): string[] {
    return [...this.skippedPaths];
  }

  async runCommand(name: string, args: string): Promise<boolean> {
    const entry = invocationNames(this.registry.commands).find((c) => c.name === name);
    if (!entry) return false;
    const host = this.host();
    // As pi: the command's prompt is answered once its handler is done, dialogs included.
    const ctx = commandContext(host, (event, error) =>
      this.emitError({ type: "extension_error", extensionPath: "<runtime>", event, error }),
    );
    // pi names a failed command by its name, not its file: extensionPath "command:NAME", event "command".
    await this.guard(`command:${name}`, "command", () => entry.command.handler(args, ctx));
    return true;
  }

  notify(event: ExtensionEvent, begun?: () => void): Promise<void> {
    if (!this.has(event.type)) {
      begun?.();
      return this.queue;
    }
    const next = this.queue.then(() => {
      // dispatch calls the first handler before it returns: its synchronous part has run.
      const dispatched = this.dispatch(event);
      begun?.();
      return dispatched;
    });
    this.queue = next;
    return next;
  }

  async before(event: ExtensionEvent): Promise<Record<string, unknown> | undefined> {
    let result: Record<string, unknown> | undefined;
    await this.dispatch(event, (value) => {
      if (value && typeof value === "object") {
        result = value as Record<string, unknown>;
        if (result.cancel === true) return "stop";
      }
      return undefined;
    });
    return result;
  }

  async boundary<C>(
    base: ExtensionEvent,
    preview: (entries: unknown) => { entries: C[]; context: unknown },
  ): Promise<{ entries: C[]; continue: boolean }> {
    let proposed: unknown = [];
    let checked = preview([]);
    let valid = true;
    let decided = false;
    await this.dispatch(
      () => ({ ...base, entries: proposed, continue: decided, context: checked.context }),
      (value, path) => {
        const r = value as { entries?: unknown; continue?: unknown } | undefined;
        if (r?.entries !== undefined) proposed = r.entries;
        if (typeof r?.continue === "boolean") decided = r.continue;
        try {
          checked = preview(proposed);
          valid = true;
        } catch (err) {
          valid = false;
          const error = `Invalid boundary entries: ${err instanceof Error ? err.message : String(err)}`;
          this.emitError({ type: "extension_error", extensionPath: path, event: base.type, error });
        }
        return undefined;
      },
    );
    // As pi: a proposal that ends invalid writes nothing and asks for nothing.
    return valid ? { entries: checked.entries, continue: decided } : { entries: [], continue: false };
  }

  async sessionStart(
    reason: "startup" | "new" | "resume" | "fork" | "reload",
    previousSessionFile?: string,
  ): Promise<DiscoveredResources> {
    const errors = this.pendingLoadErrors;
    this.pendingLoadErrors = [];
    for (const error of errors) this.emitError(error);
    await this.notify({ type: "session_start", reason, ...(previousSessionFile ? { previousSessionFile } : {}) });
    const found: DiscoveredResources = {
      skillPaths: [...this.packaged.skillPaths],
      promptPaths: [...this.packaged.promptPaths],
      themePaths: [...this.packaged.themePaths],
    };
    if (!this.has("resources_discover")) return found;
    await this.queue;
    const cwd = this.host().cwd;
    // As pi: every handler runs; string entries of each list are collected in load order.
    await this.dispatch(
      { type: "resources_discover", cwd, reason: reason === "reload" ? "reload" : "startup" },
      (value) => {
        const r = value as Partial<Record<keyof DiscoveredResources, unknown>> | undefined;
        for (const key of ["skillPaths", "promptPaths", "themePaths"] as const) {
          const list = r?.[key];
          // As given: loading resolves them as pi does (`~` is the home folder, the rest is relative to cwd).
          if (Array.isArray(list)) for (const p of list) if (typeof p === "string" && p.length > 0) found[key].push(p);
        }
        return undefined;
      },
    );
    return found;
  }

  async sessionShutdown(
    reason: "quit" | "new" | "resume" | "fork" | "reload",
    targetSessionFile?: string,
  ): Promise<void> {
    await this.notify({ type: "session_shutdown", reason, ...(targetSessionFile ? { targetSessionFile } : {}) });
  }

  async input(
    text: string,
    images: ImageContent[] | undefined,
    source: "rpc" | "interactive" | "extension",
  ): Promise<InputOutcome> {
    let current: InputOutcome = { action: "continue", text, images };
    let handled = false;
    await this.dispatch(
      () => ({ type: "input", text: current.text, images: current.images, source }),
      (value) => {
        const r = value as { action?: string; text?: unknown; images?: ImageContent[] } | undefined;
        if (r?.action === "handled") {
          handled = true;
          return "stop";
        }
        if (r?.action === "transform" && typeof r.text === "string")
          current = { action: "transform", text: r.text, images: r.images ?? current.images };
        return undefined;
      },
    );
    return handled ? { ...current, action: "handled" } : current;
  }

  async beforeAgentStart(
    start: RunStart,
    systemPrompt: string,
    prompt?: RunPrompt,
  ): Promise<BeforeAgentStartOutcome | undefined> {
    // As pi 1.6: handlers change the options in place and later ones see the prompt they
    // render; a returned systemPrompt is forced over them for the run (and chains).
    let forced: string | undefined;
    const current = () => forced ?? (prompt ? prompt.render(prompt.options) : systemPrompt);
    const messages: CustomMessageInput[] = [];
    await this.dispatch(
      () => ({
        type: "before_agent_start",
        ...start,
        get systemPrompt() {
          return current();
        },
        ...(prompt ? { systemPromptOptions: prompt.options } : {}),
      }),
      (value) => {
        const r = value as { systemPrompt?: unknown; message?: CustomMessageInput } | undefined;
        if (r?.message && typeof r.message === "object") messages.push(r.message);
        if (typeof r?.systemPrompt === "string") forced = r.systemPrompt;
        return undefined;
      },
      { getSystemPrompt: current },
    );
    const final = current();
    const changed = final !== systemPrompt;
    if (!changed && messages.length === 0) return undefined;
    return { ...(changed ? { systemPrompt: final } : {}), messages };
  }

  /**
   * `context`, as pi 1.6 runs it: each handler sees the conversation without the system
   * messages (they belong to pi) and may return a new list or edit `event.messages` in
   * place. An unchanged conversation keeps every system message where it was; a changed
   * one gets them replayed into one leading system message, so pruning or windowing can
   * never drop the prompt or the tools.
   */
  async context(messages: AgentMessage[]): Promise<AgentMessage[] | undefined> {
    if (!this.has("context")) return undefined;
    let current: AgentMessage[] = structuredClone(messages);
    let visible: AgentMessage[] = [];
    let snapshot: AgentMessage[] = [];
    await this.dispatch(
      () => {
        visible = current.filter((m) => m.role !== "system");
        snapshot = visible.slice();
        return { type: "context", messages: visible };
      },
      (value) => {
        const r = value as { messages?: unknown } | undefined;
        const returned = Array.isArray(r?.messages)
          ? (r.messages as AgentMessage[])
          : sameMessages(visible, snapshot)
            ? undefined
            : visible;
        if (returned === undefined || sameMessages(returned, snapshot)) return undefined;
        const head = getCurrentSystemMessage(current as unknown as { role: string }[]);
        current = head ? [head as AgentMessage, ...returned] : returned;
        return undefined;
      },
    );
    // Handlers keep the shapes they were given (pi's contract for this event).
    return current;
  }

  /**
   * `context_with_system` (pi 1.6): after `context`, handlers see the request's whole
   * transcript, system messages included, and what they return is sent as it is. One that
   * drops the leading system message is reported (the request then has no prompt or
   * initial tools) and still honoured, as pi does. Undefined when no handler is registered.
   */
  async contextWithSystem(messages: AgentMessage[]): Promise<AgentMessage[] | undefined> {
    if (!this.has("context_with_system")) return undefined;
    let current: AgentMessage[] = structuredClone(messages);
    let hadHead = false;
    await this.dispatch(
      () => {
        hadHead = current[0]?.role === "system";
        return { type: "context_with_system", messages: current };
      },
      (value, path) => {
        const r = value as { messages?: unknown } | undefined;
        if (Array.isArray(r?.messages)) current = r.messages as AgentMessage[];
        if (hadHead && current[0]?.role !== "system") {
          this.emitError({
            type: "extension_error",
            extensionPath: path,
            event: "context_with_system",
            error:
              "Handler removed the leading system message; the request has no prompt or initial tool declarations. Keep it at index 0 or replace a dropped prefix with getCurrentSystemMessage().",
          });
        }
        return undefined;
      },
    );
    return current;
  }

  async toolCall(call: ToolCall, args: Record<string, unknown>): Promise<ToolCallDecision | undefined> {
    if (!this.has("tool_call")) return undefined;
    // Handlers change `input` in place (pi's contract); later handlers and the tool see the changes.
    const input: Record<string, unknown> = structuredClone(args);
    let blocked: ToolCallDecision | undefined;
    const failed: string[] = [];
    await this.dispatch(
      () => ({ type: "tool_call", toolName: call.name, toolCallId: call.id, input }),
      (value, path) => {
        const r = value as { block?: unknown; reason?: unknown } | undefined;
        if (r?.block === true) {
          blocked = {
            block: true,
            reason:
              typeof r.reason === "string"
                ? r.reason
                : `Tool call "${call.name}" was blocked by the extension ${path}.`,
          };
          return "stop";
        }
        return undefined;
      },
      {},
      (error, path) => failed.push(`${path}: ${error}`),
    );
    if (blocked) return blocked;
    // Fail safe: a guard that crashed must not let the call through unchecked.
    if (failed.length > 0) {
      return {
        block: true,
        reason: `Tool call "${call.name}" was blocked because an extension failed while checking it (${failed.join("; ")}).`,
      };
    }
    return { args: input, revalidate: false };
  }

  async toolResult(
    call: ToolCall,
    args: Record<string, unknown>,
    result: ToolResult,
    isError: boolean,
  ): Promise<{ result: ToolResult; isError: boolean } | undefined> {
    if (!this.has("tool_result")) return undefined;
    let content = result.content;
    let details = result.details;
    let structuredContent = result.structuredContent;
    let error = isError;
    let changed = false;
    await this.dispatch(
      () => ({
        type: "tool_result",
        toolName: call.name,
        toolCallId: call.id,
        input: args,
        content,
        details,
        ...(structuredContent === undefined ? {} : { structuredContent }),
        isError: error,
      }),
      (value) => {
        const patch = value as
          | { content?: unknown; details?: unknown; structuredContent?: unknown; isError?: unknown }
          | undefined;
        if (!patch) return undefined;
        if (Array.isArray(patch.content)) {
          content = patch.content as ToolResult["content"];
          // As pi 1.6: data not replaced along with the content may no longer match it.
          if (patch.structuredContent === undefined) structuredContent = undefined;
          changed = true;
        }
        if (patch.structuredContent !== undefined) {
          structuredContent = patch.structuredContent;
          changed = true;
        }
        if (patch.details !== undefined) {
          details = patch.details;
          changed = true;
        }
        if (typeof patch.isError === "boolean") {
          error = patch.isError;
          changed = true;
        }
        return undefined;
      },
    );
    if (!changed) return undefined;
    const { structuredContent: _before, ...rest } = result;
    return {
      result: {
        ...rest,
        content,
        ...(details !== undefined ? { details } : {}),
        ...(structuredContent !== undefined ? { structuredContent } : {}),
      },
      isError: error,
    };
  }

  /** `message_end`: handlers may replace the message (same role); the last replacement wins. */
  async messageEnd(message: AgentMessage): Promise<AgentMessage | undefined> {
    if (!this.has("message_end")) return undefined;
    let current = message;
    await this.dispatch(
      () => ({ type: "message_end", message: current }),
      (value, path) => {
        const r = value as { message?: AgentMessage } | undefined;
        if (!r?.message) return undefined;
        if (r.message.role !== current.role) {
          this.emitError({
            type: "extension_error",
            extensionPath: path,
            event: "message_end",
            error: "message_end handlers must return a message with the same role",
          });
          return undefined;
        }
        current = r.message;
        return undefined;
      },
    );
    return current === message ? undefined : current;
  }

  /** `before_provider_request`: any value but undefined replaces the payload for later handlers and the request. */
  async providerRequest(payload: unknown): Promise<unknown> {
    let current = payload;
    await this.dispatch(
      () => ({ type: "before_provider_request", payload: current }),
      (value) => {
        if (value !== undefined) current = value;
        return undefined;
      },
    );
    return current;
  }

  /**
   * pi 1.6's `project_trust`, run before the session exists on the extensions that load
   * before trust (the user's and the command line's): handlers in load order, the first
   * "yes" or "no" wins ("no" for any answer other than yes or undecided, as pi reads it),
   * "undecided" falls through. A handler that throws is skipped and named in `errors`.
   */
  async projectTrust(ctx: ProjectTrustContext): Promise<{ decision?: ExtensionTrustDecision; errors: string[] }> {
    const errors: string[] = [];
    for (const { path, handler } of this.registry.handlers.filter((h) => h.event === "project_trust")) {
      try {
        const result = (await handler({ type: "project_trust", cwd: ctx.cwd }, ctx)) as
          | { trusted?: unknown; remember?: unknown }
          | undefined;
        if (result === null || typeof result !== "object") {
          throw new TypeError(
            `a project_trust handler must return { trusted: "yes" | "no" | "undecided" }, not ${String(result)}`,
          );
        }
        if (result.trusted === "undecided") continue;
        return { decision: { trusted: result.trusted === "yes", remember: result.remember === true }, errors };
      } catch (err) {
        errors.push(`Extension "${path}" project_trust error: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return { errors };
  }

  async userBash(
    command: string,
    excludeFromContext: boolean,
    cwd: string,
  ): Promise<Record<string, unknown> | undefined> {
    // As pi 1.6 (0.86's breaking change): user_bash fails closed. A handler that throws or
    // returns something other than undefined, { operations } or { result } aborts the
    // command (reported as extension_error, and the command's error), without running
    // later handlers or the command.
    const handlers = this.registry.handlers.filter((h) => h.event === "user_bash");
    if (handlers.length === 0) return undefined;
    const ctx = extensionContext(this.host());
    for (const { path, handler } of handlers) {
      const outcome = await this.guard(path, "user_bash", () =>
        handler({ type: "user_bash", command, excludeFromContext, cwd }, ctx),
      );
      if (!outcome.ok) throw new Error(outcome.error);
      if (outcome.value === undefined) continue;
      if (!isUserBashResult(outcome.value)) {
        const error =
          "Invalid user_bash handler result: return undefined for local execution or exactly one valid { operations } or { result } object";
        this.emitError({ type: "extension_error", extensionPath: path, event: "user_bash", error });
        throw new Error(error);
      }
      return outcome.value;
    }
    return undefined;
  }

  /**
   * Call every handler of an event in order. `event` is the event, or a function
   * building each handler's event (so it sees earlier changes); `apply` takes a
   * result and may stop the chain.
   */
  private async dispatch(
    event: ExtensionEvent | (() => ExtensionEvent),
    apply?: (result: unknown, path: string) => "stop" | undefined,
    ctxOverrides: { getSystemPrompt?: () => string } = {},
    onError?: (error: string, path: string) => void,
  ): Promise<void> {
    const make = typeof event === "function" ? event : () => event;
    const type = make().type;
    const handlers = this.registry.handlers.filter((h) => h.event === type);
    if (handlers.length === 0) return;
    const ctx = extensionContext(this.host(), ctxOverrides);
    for (const { path, handler } of handlers) {
      const outcome = await this.guard(path, type, () => handler(make(), ctx));
      if (!outcome.ok) {
        onError?.(outcome.error, path);
        continue;
      }
      if (apply?.(outcome.value, path) === "stop") return;
    }
  }

  /** Run extension code; a throw or rejection becomes `extension_error`. */
  private async guard<T>(
    path: string,
    event: string,
    fn: () => T | Promise<T>,
  ): Promise<{ ok: true; value: T } | { ok: false; error: string }> {
    try {
      return { ok: true, value: await fn() };
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      this.emitError({ type: "extension_error", extensionPath: path, event, error });
      return { ok: false, error };
    }
  }

  /** An extension tool as the agent loop sees it: pi's `execute(toolCallId, params, signal, onUpdate, ctx)`. */
  private adapt(path: string, tool: ExtensionToolDefinition): AgentTool {
    const known = this.adapted.get(tool);
    if (known) return known;
    const snippet = oneLine(tool.promptSnippet);
    const adapted: AgentTool = {
      name: tool.name,
      label: typeof tool.label === "string" ? tool.label : tool.name,
      description: tool.description,
      ...(snippet ? { snippet } : { listed: false }),
      ...(Array.isArray(tool.promptGuidelines) ? { guidelines: tool.promptGuidelines } : {}),
      parameters: tool.parameters,
      ...(tool.prepareArguments ? { prepareArguments: tool.prepareArguments } : {}),
      ...(tool.executionMode === "sequential" || tool.executionMode === "parallel"
        ? { executionMode: tool.executionMode }
        : {}),
      ...(tool.defaultActive === false || tool.exposure === "deferred" ? { defaultActive: false } : {}),
      ...(tool.exposure === "deferred" || tool.exposure === "model-only" || tool.exposure === "direct"
        ? { exposure: tool.exposure }
        : {}),
      ...(tool.namespace && typeof tool.namespace.name === "string" ? { namespace: tool.namespace } : {}),
      ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
      execute: async (args, toolCtx) => {
        // pi 1.6's ctx of a running tool also has the tools it may call, and the way to call them.
        const ctx = Object.assign(extensionContext(this.host()), {
          tools: toolCtx.tools ?? [],
          executeTool: toolCtx.executeTool,
        });
        const result = await tool.execute(toolCtx.toolCallId, args as never, toolCtx.signal, toolCtx.onUpdate, ctx);
        if (!result || !Array.isArray(result.content)) {
          throw new Error(`the tool ${tool.name} of ${path} returned no { content: [...] } result`);
        }
        return result;
      },
    };
    this.adapted.set(tool, adapted);
    return adapted;
  }
}

/** pi's check of a user_bash handler's answer: exactly one of `{ operations }` (with `exec`) or a whole `{ result }`. */
function isUserBashResult(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const { operations, result } = value as { operations?: unknown; result?: unknown };
  if ((operations !== undefined) === (result !== undefined)) return false;
  if (operations !== undefined)
    return (
      typeof operations === "object" &&
      operations !== null &&
      typeof (operations as { exec?: unknown }).exec === "function"
    );
  if (typeof result !== "object" || result === null) return false;
  const r = result as Record<string, unknown>;
  return (
    typeof r.output === "string" &&
    "exitCode" in r &&
    (r.exitCode === undefined || typeof r.exitCode === "number") &&
    typeof r.cancelled === "boolean" &&
    typeof r.truncated === "boolean" &&
    (r.fullOutputPath === undefined || typeof r.fullOutputPath === "string")
  );
}

/** pi's snippet normalisation: one line, runs of white space made one space; empty is none. */
function oneLine(text: unknown): string | undefined {
  if (typeof text !== "string") return undefined;
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 0 ? line : undefined;
}

/** What a `project_trust` handler gets as its context (pi 1.6's `ProjectTrustContext`): no session yet. */
export interface ProjectTrustContext {
  cwd: string;
  mode: string;
  hasUI: boolean;
  ui: {
    select(title: string, options: string[]): Promise<string | undefined>;
    confirm(title: string, message: string): Promise<boolean>;
    input(title: string, placeholder?: string): Promise<string | undefined>;
    notify(message: string, type?: "info" | "warning" | "error"): void;
  };
}

/** The same messages, object for object (pi's test of whether a `context` handler changed the list). */
function sameMessages(left: readonly unknown[], right: readonly unknown[]): boolean {
  return left.length === right.length && left.every((m, i) => m === right[i]);
}
