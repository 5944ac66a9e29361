/**
 * `ctx` as pi hands it to handlers, tools and commands: the session's state read
 * at call time, its actions, `ctx.sessionManager` (the read API of the session
 * tree) and the whole `ctx.ui`, degraded as pi's RPC mode degrades it where a
 * piece needs a terminal (custom components, editors, themes).
 */
import type { Model } from "../../shared/schema/messages.js";
import type { SessionEntry } from "../../shared/schema/session.js";
import type { ExtensionHost, NewSessionOptions } from "./host.js";
import { completeOn, streamOn } from "./modules/ai.js";
import type { DialogOptions, ExtensionUi } from "./types.js";

/** The read API of the session, as `ctx.sessionManager` (pi's `ReadonlySessionManager`). */
export function sessionManagerView(host: ExtensionHost) {
  const labelOf = (id: string): string | undefined => {
    let label: string | undefined;
    for (const e of host.entries()) {
      if (e.type === "label" && (e as { targetId?: unknown }).targetId === id) {
        const value = (e as { label?: unknown }).label;
        label = typeof value === "string" && value !== "" ? value : undefined;
      }
    }
    return label;
  };
  return {
    getCwd: () => host.cwd,
    getSessionDir: () => host.sessionDir(),
    getSessionId: () => host.sessionId(),
    getSessionFile: () => host.sessionFile(),
    getSessionName: () => host.sessionName(),
    getLeafId: () => host.leafId(),
    getLeafEntry: (): SessionEntry | undefined => {
      const leaf = host.leafId();
      return leaf === null ? undefined : host.entries().find((e) => e.id === leaf);
    },
    getEntry: (id: string) => host.entries().find((e) => e.id === id),
    getEntries: () => [...host.entries()],
    getBranch: () => host.branch(),
    getLabel: labelOf,
    getChildren: (id: string) => host.entries().filter((e) => e.parentId === id),
  };
}

/** `ctx.modelRegistry`: the worker's model catalogue and its keys. */
export function modelRegistryView(host: ExtensionHost) {
  const keyFor = (model: Model) => (model.api === "faux" ? "faux" : host.apiKeyFor(model));
  return {
    find: (provider: string, id: string) => host.models().find((m) => m.provider === provider && m.id === id),
    getAll: () => host.models(),
    getAvailable: () => host.models().filter((m) => keyFor(m) !== undefined),
    getApiKey: async (model: Model) => keyFor(model),
    getApiKeyForProvider: async (provider: string) => {
      const model = host.models().find((m) => m.provider === provider);
      return model ? keyFor(model) : undefined;
    },
    hasConfiguredAuth: (model: Model) => keyFor(model) !== undefined,
    // pi 1.x: calls through the session's providers, extensions' registered ones included.
    complete: (model: Model, context: Parameters<typeof completeOn>[2], options?: Parameters<typeof completeOn>[3]) =>
      completeOn(host, model, context, options),
    streamSimple: (model: Model, context: Parameters<typeof streamOn>[2], options?: Parameters<typeof streamOn>[3]) =>
      streamOn(host, model, context, options),
    // pi 0.84+: a ModelsRefreshResult. The catalogue here is models.json's and the extensions', read at once.
    refresh: async () => ({ aborted: false, errors: new Map<string, Error>() }),
    // As pi's: a missing key is no error (ok, apiKey undefined), so an extension can say which one is missing.
    getApiKeyAndHeaders: async (model: Model) => ({
      ok: true as const,
      apiKey: keyFor(model),
      headers: undefined as Record<string, string> | undefined,
    }),
  };
}

/** A theme that styles nothing: there is no terminal to colour. */
export const PLAIN_THEME = new Proxy(
  {},
  {
    get: (_target, prop) => {
      if (prop === "name") return "plain";
      if (prop === "fg" || prop === "bg") return (_color: string, text: string) => text;
      return (text: unknown) => (typeof text === "string" ? text : "");
    },
  },
) as Record<string, unknown>;

/** pi's whole `ctx.ui` over a mode's dialogs; terminal-only pieces are no-ops, as in pi's RPC mode. */
export function fullUi(base: ExtensionUi) {
  const noop = () => undefined;
  return {
    select: (title: string, options: string[], opts?: DialogOptions) => base.select(title, options, opts),
    confirm: (title: string, message?: string, opts?: DialogOptions) => base.confirm(title, message, opts),
    input: (title: string, placeholder?: string, opts?: DialogOptions) => base.input(title, placeholder, opts),
    editor: (title: string, prefill?: string, opts?: DialogOptions) => base.editor(title, prefill, opts),
    notify: (message: string, type?: "info" | "warning" | "error" | "success") => base.notify(message, type),
    setStatus: (key: string, text: string | undefined) => base.setStatus(key, text),
    setWidget: (key: string, content: unknown, options?: { placement?: "aboveEditor" | "belowEditor" }) => {
      // Only lines travel; component factories need a terminal.
      if (content === undefined || Array.isArray(content))
        base.setWidget?.(key, content as string[] | undefined, options?.placement);
    },
    setTitle: (title: string) => base.setTitle?.(title),
    setEditorText: (text: string) => base.setEditorText?.(text),
    pasteToEditor: (text: string) => base.setEditorText?.(text),
    getEditorText: () => "",
    custom: async () => undefined,
    onTerminalInput: () => noop,
    setWorkingMessage: noop,
    setWorkingVisible: noop,
    setWorkingIndicator: noop,
    setHiddenThinkingLabel: noop,
    setFooter: noop,
    setHeader: noop,
    setEditorComponent: noop,
    getEditorComponent: noop,
    addAutocompleteProvider: noop,
    getToolsExpanded: () => false,
    setToolsExpanded: noop,
    theme: PLAIN_THEME,
    getAllThemes: () => [],
    getTheme: noop,
    setTheme: () => ({ success: false, error: "themes need pi's terminal UI" }),
  };
}

/** Parts of `ctx` a caller replaces: the system prompt (before_agent_start chains it) and the dialogs (commands announce them). */
export interface ContextOverrides {
  getSystemPrompt?: () => string;
  ui?: () => ExtensionUi;
}

/** `ctx` for event handlers and tools. */
export function extensionContext(host: ExtensionHost, overrides: ContextOverrides = {}) {
  const ui = overrides.ui ?? (() => host.ui());
  return {
    get ui() {
      return fullUi(ui());
    },
    get hasUI() {
      return host.hasUI();
    },
    get mode() {
      return host.mode();
    },
    get thinkingLevel() {
      return host.thinkingLevel();
    },
    get scopedModels() {
      return host.scopedModels();
    },
    isProjectTrusted: () => host.isProjectTrusted(),
    cwd: host.cwd,
    sessionManager: sessionManagerView(host),
    modelRegistry: modelRegistryView(host),
    get model() {
      return host.model();
    },
    get signal() {
      return host.signal();
    },
    isIdle: () => host.isIdle(),
    abort: () => void host.abort(),
    hasPendingMessages: () => host.hasPendingMessages(),
    shutdown: () => host.requestShutdown(),
    getContextUsage: () => host.contextUsage(),
    compact: (
      options: { customInstructions?: string; onComplete?: (r: unknown) => void; onError?: (e: Error) => void } = {},
    ) => {
      host.compact(options.customInstructions).then(
        (result) => options.onComplete?.(result),
        (err: unknown) => options.onError?.(err instanceof Error ? err : new Error(String(err))),
      );
    },
    getSystemPrompt: overrides.getSystemPrompt ?? (() => host.systemPrompt()),
  };
}

/** Reports a send that failed, as pi does: an extension_error from "<runtime>". */
export type SendFailure = (event: "send_message" | "send_user_message", error: string) => void;

/**
 * `sendUserMessage` and `sendMessage` as extensions call them, mostly without awaiting:
 * a message that cannot be sent (no API key, a full disk) is reported, as in pi, never a
 * rejection (which would end the worker).
 */
export function reportedSends(host: ExtensionHost, failed: SendFailure) {
  const report = (event: Parameters<SendFailure>[0]) => (err: unknown) =>
    failed(event, err instanceof Error ? err.message : String(err));
  return {
    sendUserMessage: (
      content: Parameters<ExtensionHost["sendUserMessage"]>[0],
      deliverAs?: Parameters<ExtensionHost["sendUserMessage"]>[1],
    ) => host.sendUserMessage(content, deliverAs).catch(report("send_user_message")),
    sendMessage: (
      message: Parameters<ExtensionHost["sendMessage"]>[0],
      options: Parameters<ExtensionHost["sendMessage"]>[1],
    ) => host.sendMessage(message, options).catch(report("send_message")),
  };
}

/** A command's `ctx`: the handler context plus session control; `failed` reports the replacement session's failed sends. */
export function commandContext(host: ExtensionHost, failed: SendFailure, overrides: ContextOverrides = {}) {
  const base = extensionContext(host, overrides);
  // Session replacement runs `withSession` with a context bound to the new session.
  const replaced = async (result: { cancelled: boolean }, withSession?: (ctx: unknown) => Promise<void> | void) => {
    if (!result.cancelled && withSession) {
      const sends = reportedSends(host, failed);
      await withSession({
        ...commandContext(host, failed),
        sendUserMessage: (content: string) => sends.sendUserMessage(content),
        sendMessage: (message: never, options: never = {} as never) => sends.sendMessage(message, options),
      });
    }
    return result;
  };
  return Object.defineProperties(
    base,
    Object.getOwnPropertyDescriptors({
      waitForIdle: () => host.waitForIdle(),
      newSession: async (options: NewSessionOptions = {}) =>
        replaced(await host.newSession(options), options.withSession),
      fork: async (
        entryId: string,
        options: { position?: "before" | "at"; withSession?: (ctx: unknown) => void } = {},
      ) => replaced(await host.fork(entryId, options.position), options.withSession),
      switchSession: async (path: string, options: { withSession?: (ctx: unknown) => void } = {}) =>
        replaced(await host.switchSession(path), options.withSession),
      navigateTree: (
        targetId: string,
        options?: { summarize?: boolean; customInstructions?: string; replaceInstructions?: boolean; label?: string },
      ) => host.navigateTree(targetId, options),
      reload: () => host.reload(),
    }),
  );
}
