/**
 * The session as extensions reach it (`pi.*`, `ctx.*`, pi's `ExtensionAPI` and context):
 * one object the extension runner binds, reading the session and calling its commands.
 */
import type { AgentMessage, ImageContent } from "../../shared/schema/messages.js";
import { userMessage } from "../agent/agent.js";
import type { ExtensionHooks } from "../extensions/hooks.js";
import type { DeliverAs, ExtensionHost, RunMode, ScopedModel } from "../extensions/host.js";
import type { CustomMessageInput, ExtensionUi } from "../extensions/types.js";
import type { ProviderSet } from "../providers/index.js";
import type { SessionStore } from "../session/session-file.js";
import { BUILT_IN_TOOLS } from "../tools/index.js";
import type { AgentSession } from "./agent-session.js";

/** What the host needs of the session beyond its public members. */
export interface ExtensionHostInternals {
  extensions(): ExtensionHooks;
  /** The session (kept in memory with `--no-session`). */
  store(): SessionStore;
  readonly providers: ProviderSet;
  /** The mode's dialogs and whether someone answers them (`ctx.hasUI`); null before a mode set them. */
  dialogs(): { ui: ExtensionUi; interactive: boolean } | null;
  /** `ctx.mode`. */
  mode(): RunMode;
  /** The system prompt of the run (before_agent_start's, else the built one). */
  systemPrompt(): string;
  /** `ctx.isProjectTrusted()`. */
  readonly trusted: boolean;
  scopedModels(): ScopedModel[];
  /** Whether a tool exists here (`--tools`, `--exclude-tools`). */
  registered(name: string): boolean;
  /** An extension's tools changed: the system prompt follows. */
  toolsChanged(): void;
  /** An extension registered or removed a provider. */
  providersChanged(): void;
  /** Deliver a message an extension sent, as pi does (`deliverAs`, `triggerTurn`). */
  deliver(message: AgentMessage, deliverAs: DeliverAs | undefined, triggerTurn: boolean): Promise<void>;
  /** `sendUserMessage` calls not yet delivered or refused (a command's prompt answer waits for its own). */
  readonly pendingSends: Set<Promise<void>>;
  /** `ctx.shutdown()`. */
  requestShutdown(): void;
}

/** The session as extensions reach it: `session`'s public members and `inner`'s. */
export function extensionHost(session: AgentSession, inner: ExtensionHostInternals): ExtensionHost {
  const store = inner.store;
  return {
    cwd: session.cwd,
    mode: () => inner.mode(),
    isProjectTrusted: () => inner.trusted,
    scopedModels: () => inner.scopedModels(),
    settings: () => structuredClone(session.resources.settings) as Record<string, unknown>,
    hasUI: () => inner.dialogs()?.interactive ?? false,
    ui: () => inner.dialogs()?.ui ?? HEADLESS_UI,
    model: () => session.agent.model,
    models: () => session.catalogue.models,
    apiKeyFor: (m) => session.apiKeyFor(m),
    provider: (m) => inner.providers.for(m),
    thinkingLevel: () => session.agent.thinkingLevel,
    systemPrompt: () => inner.systemPrompt(),
    messages: () => session.agent.messages,
    isIdle: () => !session.agent.isStreaming,
    hasPendingMessages: () => session.agent.pendingMessageCount > 0,
    signal: () => session.agent.signal,
    contextUsage: () => session.sessionStats().contextUsage,
    sessionFile: () => session.sessionFile,
    sessionId: () => session.sessionId,
    sessionName: () => session.sessionName,
    entries: () => store().entries,
    branch: () => store().pathToLeaf(),
    leafId: () => store().leafId,
    sessionDir: () => session.sessionDir,
    sendUserMessage: (content, deliverAs) => {
      const sending = (async () => {
        // As pi: the parts become one prompt (the texts joined by lines, the images after),
        // which the input handlers see; it is not run as a command or expanded as a template.
        const parts = typeof content === "string" ? [{ type: "text" as const, text: content }] : content;
        const text = parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n");
        const images = parts.filter((p): p is ImageContent => p.type === "image");
        const input = await inner.extensions().input(text, images.length > 0 ? images : undefined, "extension");
        if (input.action === "handled") return;
        await inner.deliver(userMessage(input.text, input.images), deliverAs ?? "followUp", true);
      })();
      inner.pendingSends.add(sending);
      const done = () => void inner.pendingSends.delete(sending);
      sending.then(done, done);
      return sending;
    },
    sendMessage: (input, options) =>
      inner.deliver(customMessage(input), options.deliverAs, options.triggerTurn === true),
    appendEntry: (customType, data) => {
      const entry = store().append({ type: "custom", customType, ...(data !== undefined ? { data } : {}) });
      session.emit({ type: "entry_appended", entry });
    },
    setSessionName: (name) => session.setSessionName(name),
    setLabel: (entryId, label) => store().setLabel(entryId, label),
    setModel: (provider, modelId) => session.setModel(provider, modelId),
    setThinkingLevel: (level) => session.setThinkingLevel(level),
    activeToolNames: () => session.activeTools().map((t) => t.name),
    setActiveTools: (names) => session.setActiveTools(names),
    allTools: () => {
      const ext = inner
        .extensions()
        .tools()
        .filter((t) => inner.registered(t.name));
      const builtIns = BUILT_IN_TOOLS.filter((t) => inner.registered(t.name) && !ext.some((e) => e.name === t.name));
      return [
        ...builtIns.map((t) => ({
          name: t.name,
          description: t.description,
          parameters: t.parameters,
          sourceInfo: { path: `<builtin:${t.name}>`, source: "builtin", scope: "temporary", origin: "top-level" },
        })),
        ...ext.map((t) => ({
          name: t.name,
          description: t.description,
          parameters: t.parameters,
          ...(t.exposure ? { exposure: t.exposure } : {}),
          ...(t.namespace ? { namespace: t.namespace } : {}),
          sourceInfo: { path: "<extension>", source: "local", scope: "temporary", origin: "top-level" },
        })),
      ];
    },
    toolsChanged: () => inner.toolsChanged(),
    providersChanged: () => inner.providersChanged(),
    reload: () => session.reload(),
    abort: () => session.abort(),
    requestShutdown: () => inner.requestShutdown(),
    compact: (customInstructions) => session.compact(customInstructions),
    waitForIdle: () => session.agent.waitForIdle(),
    newSession: (options = {}) => session.newSession(options.parentSession, options.setup),
    fork: async (entryId, position = "before") => (position === "at" ? session.clone() : session.fork(entryId)),
    switchSession: (path) => session.switchSession(path),
    navigateTree: async (targetId, options) => ({
      cancelled: (await session.navigateTree(targetId, options)).cancelled,
    }),
  };
}

/** A custom message from what an extension gave. */
export function customMessage(input: CustomMessageInput): AgentMessage {
  return {
    role: "custom",
    customType: input.customType,
    content: input.content,
    display: input.display ?? true,
    ...(input.details !== undefined ? { details: input.details } : {}),
    timestamp: Date.now(),
  };
}

/** Dialogs where no mode installed any (a session used as a library): every dialog resolves to its default. */
const HEADLESS_UI: ExtensionUi = {
  select: async () => undefined,
  confirm: async () => false,
  input: async () => undefined,
  editor: async () => undefined,
  notify: () => undefined,
  setStatus: () => undefined,
};
