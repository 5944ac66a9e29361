/**
 * The session layer (pi's `AgentSession`): around the provider-agnostic agent it
 * owns persistence (the session file), auto-retry, compaction, the extension hooks,
 * the message queues and every event that leaves the worker. The modes (rpc, print,
 * the TUI's in-process agent) drive it through one command map (modes/commands.ts).
 */
import type {
  AgentMessage,
  BashExecutionMessage,
  ImageContent,
  Model,
  ThinkingLevel,
} from "../../shared/schema/messages.js";
import { THINKING_LEVELS } from "../../shared/schema/messages.js";
import type { CompactionResult, WorkerEvent } from "../../shared/schema/events.js";
import { ensureHome, modelsJsonPath, piOrchHome } from "../../shared/paths.js";
import { Agent, AgentBusyError, userMessage } from "../agent/agent.js";
import type { AfterResponseContext, QueueMode } from "../agent/types.js";
import { NO_EXTENSIONS, type ExtensionHooks } from "../extensions/hooks.js";
import { ProviderSet } from "../providers/index.js";
import { loadFauxScript } from "../providers/faux.js";
import {
  apiKeyEnvVar,
  defaultProvider,
  loadCatalogue,
  resolveApiKey,
  resolveModel,
  type ModelCatalogue,
} from "../providers/models.js";
import { estimateContextTokens, shouldCompact } from "../session/compaction.js";
import { userMessageText } from "../session/context.js";
import { cloneSession, forkMessages, forkSession } from "../session/fork.js";
import { defaultSessionDir, latestSession, resolveSessionArg } from "../session/locate.js";
import { SessionStore, SessionWriteError } from "../session/session-file.js";
import { buildSystemPrompt, findContextFiles, resolveAppend, type ContextFile } from "../system-prompt.js";
import { BUILT_IN_TOOLS, selectTools } from "../tools/index.js";
import { inheritKeysFromEnv, setToolEnv, toolEnvFor } from "../tools/tool-env.js";
import type { AgentTool } from "../types.js";
import { AutoRetry } from "./auto-retry.js";
import { Compactor, type CompactionReason } from "./compactor.js";
import { lastAssistantText, sessionStats } from "./stats.js";

/** Everything a worker is started with (from the command line). */
export interface WorkerOptions {
  cwd: string;
  home?: string;
  provider?: string;
  model?: string;
  thinking?: ThinkingLevel;
  apiKey?: string;
  tools?: string;
  noTools?: boolean;
  systemPrompt?: string;
  appendSystemPrompt?: string[];
  noContextFiles?: boolean;
  fauxScript?: string;
  /** First automatic-retry delay (doubles each attempt; default 2000). */
  retryDelayMs?: number;
  /** `--session FILE|ID-PREFIX`. */
  session?: string;
  /** `--continue`: the latest session of this cwd. */
  continueSession?: boolean;
  sessionDir?: string;
  noSession?: boolean;
  /** Compaction: tokens kept free below the context window, and recent tokens kept verbatim. */
  compactionReserveTokens?: number;
  compactionKeepTokens?: number;
  /** `--bash-inherit-keys`: tool commands see the provider API keys (removed by default). */
  bashInheritKeys?: boolean;
  env?: NodeJS.ProcessEnv;
  /** Warnings for a human (stderr in the CLI). */
  warn?: (message: string) => void;
}

/** The result of the `bash` RPC command. */
export interface BashCommandResult {
  output: string;
  exitCode: number | null;
  cancelled: boolean;
  truncated: boolean;
  fullOutputPath?: string;
}

/** A worker's agent session and the operations the protocol exposes. */
export class AgentSession {
  readonly agent: Agent;
  readonly cwd: string;
  readonly home: string;
  readonly catalogue: ModelCatalogue;
  readonly sessionDir: string;
  private store: SessionStore | null = null;
  private readonly ephemeralId: string = crypto.randomUUID();
  private ephemeralName?: string;
  private activeToolNames: string[];
  private systemPromptText = "";
  private runSystemPrompt: string | null = null;
  private readonly contextFiles: ContextFile[];
  /** `--append-system-prompt` values with files read, once: the prompt is rebuilt whenever the tools change. */
  private readonly appendTexts: string[];
  private readonly providers: ProviderSet;
  private readonly explicitApiKey?: string;
  private readonly env: NodeJS.ProcessEnv;
  private readonly warn: (message: string) => void;
  private bashAbort: AbortController | null = null;
  /** Prompts written to the session when they were accepted, so their `message_end` does not write them twice. */
  private readonly persistedPrompts = new WeakSet<AgentMessage>();
  private extensions: ExtensionHooks = NO_EXTENSIONS;
  autoCompaction = true;
  private readonly compactor = new Compactor();
  private readonly retry: AutoRetry;
  /** Whether the request in flight was already retried after an overflow compaction. */
  private overflowRetried = false;
  private readonly listeners = new Set<(event: WorkerEvent) => void>();

  constructor(private readonly options: WorkerOptions) {
    this.cwd = options.cwd;
    this.env = options.env ?? process.env;
    this.warn = options.warn ?? ((m) => process.stderr.write(`pi: ${m}\n`));
    this.home = options.home ?? piOrchHome(this.env);
    this.catalogue = loadCatalogue(modelsJsonPath(this.home));
    this.sessionDir = options.sessionDir ?? defaultSessionDir(this.cwd, this.home);
    this.explicitApiKey = options.apiKey;
    const inherit = options.bashInheritKeys === true || inheritKeysFromEnv(this.env);
    setToolEnv(toolEnvFor(process.env, this.catalogue.keySettings.values(), options.apiKey, inherit));
    const chunkMs = Number(this.env.PI_ORCH_FAUX_CHUNK_MS ?? 0);
    this.providers = new ProviderSet({
      script: options.fauxScript ? loadFauxScript(options.fauxScript) : undefined,
      chunkDelayMs: Number.isFinite(chunkMs) ? chunkMs : 0,
    });
    this.activeToolNames = selectTools(options.tools, BUILT_IN_TOOLS.map((t) => t.name), options.noTools);
    this.contextFiles = options.noContextFiles ? [] : findContextFiles(this.cwd, this.home);
    this.appendTexts = (options.appendSystemPrompt ?? []).map((a) => resolveAppend(a, this.cwd));
    this.rebuildSystemPrompt();

    const store = this.openInitialSession();
    const restored = store?.buildContext();
    const model = this.initialModel(restored?.model);
    this.retry = new AutoRetry({ enabled: true, maxAttempts: 3, baseDelayMs: options.retryDelayMs ?? 2000 }, (e) => this.emit(e));
    this.agent = new Agent(
      {
        cwd: this.cwd,
        provider: (m) => this.providers.for(m),
        apiKey: (m) => this.apiKeyFor(m),
        systemPrompt: () => this.runSystemPrompt ?? this.systemPromptText,
        tools: () => this.activeTools(),
        transformContext: async (messages) => (await this.extensions.context(messages)) ?? messages,
        beforeToolCall: ({ toolCall, args }) => this.extensions.toolCall(toolCall, args),
        afterToolCall: async ({ toolCall, result, isError }) => this.extensions.toolResult(toolCall, result, isError),
        afterResponse: (ctx) => this.afterResponse(ctx),
        shouldStopAfterTurn: async () => {
          await this.maybeCompactAtThreshold();
          return false;
        },
        onQueueChange: () => this.emit({ type: "queue_update", ...this.agent.queues() }),
        beforeRun: async (prompts) => {
          const text = prompts.map((p) => (p.role === "user" ? userMessageText(p) : "")).join("\n");
          this.runSystemPrompt = (await this.extensions.beforeAgentStart(text, this.systemPromptText)) ?? null;
        },
        afterRun: async (messages) => {
          this.runSystemPrompt = null;
          await this.extensions.agentEnd(messages);
        },
      },
      { model, thinkingLevel: this.options.thinking ?? restored?.thinkingLevel ?? "off" },
    );
    if (restored) this.agent.messages = restored.messages;
    this.agent.subscribe((event) => {
      // Persist before the event leaves the worker (appends are synchronous). A message
      // that already happened is kept in memory when the disk refuses it, and written
      // when space returns; a prompt was written when it was accepted.
      if (event.type === "message_end" && this.store && !this.persistedPrompts.has(event.message)) {
        this.store.appendOrKeep({ type: "message", message: event.message });
      }
      this.emit(event);
    });
    if (store) this.attachStore(store, !restored || restored.messages.length === 0);
  }

  private openInitialSession(): SessionStore | null {
    const o = this.options;
    if (o.noSession) return null;
    ensureHome(this.home);
    if (o.session) return SessionStore.open(resolveSessionArg(o.session, this.sessionDir), { warn: this.warn });
    if (o.continueSession) {
      const latest = latestSession(this.sessionDir);
      if (latest) return SessionStore.open(latest, { warn: this.warn });
    }
    return SessionStore.create({ dir: this.sessionDir, cwd: this.cwd }, { warn: this.warn });
  }

  /** The model: flags win, then what the resumed session used, then the default provider. */
  private initialModel(fromSession?: { provider: string; modelId: string }): Model {
    const o = this.options;
    if (!o.provider && !o.model && fromSession) {
      try {
        return resolveModel(this.catalogue, fromSession.provider, fromSession.modelId);
      } catch (err) {
        this.warn(`the session's model ${fromSession.provider}/${fromSession.modelId} is not available (${(err as Error).message}); using the default`);
      }
    }
    const providerName = o.provider ?? (o.model?.includes("/") ? undefined : defaultProvider(this.env));
    return resolveModel(this.catalogue, providerName, o.model);
  }

  /** Make `store` the current session; a fresh one records the model and thinking level like pi. */
  private attachStore(store: SessionStore, fresh: boolean): void {
    this.store?.close();
    this.store = store;
    if (fresh && store.entries.length === 0) {
      store.append({ type: "model_change", provider: this.agent.model.provider, modelId: this.agent.model.id });
      store.append({ type: "thinking_level_change", thinkingLevel: this.agent.thinkingLevel });
    }
  }

  /** Listen to every event that leaves the worker; listeners run synchronously in order. */
  subscribe(listener: (event: WorkerEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Send an event to every listener: the agent's events (persisted first) and the session's own. */
  emit(event: WorkerEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  /** Install loaded extensions (after construction, so they can see the session). */
  setExtensions(hooks: ExtensionHooks): void {
    this.extensions = hooks;
    this.rebuildSystemPrompt();
  }

  /** The key for a model's provider. */
  apiKeyFor(model: Model): string | undefined {
    if (model.api === "faux") return undefined;
    return resolveApiKey(this.catalogue, model.provider, this.explicitApiKey, this.env);
  }

  /** Tools the model may call now: the active built-ins, replaced or extended by extension tools. */
  activeTools(): AgentTool[] {
    const extra = this.extensions.tools();
    const builtIns = BUILT_IN_TOOLS.filter((t) => this.activeToolNames.includes(t.name) && !extra.some((e) => e.name === t.name));
    return [...builtIns, ...extra];
  }

  /** Change the active built-in tool set; the system prompt follows. */
  setActiveTools(names: string[]): void {
    this.activeToolNames = names;
    this.rebuildSystemPrompt();
  }

  get systemPrompt(): string {
    return this.systemPromptText;
  }

  private rebuildSystemPrompt(): void {
    this.systemPromptText = buildSystemPrompt({
      cwd: this.cwd,
      tools: this.activeTools(),
      systemPrompt: this.options.systemPrompt,
      append: this.appendTexts,
      contextFiles: this.contextFiles,
    });
  }

  /** Why the current model cannot be called (no key), or undefined when it can. */
  missingKeyProblem(): string | undefined {
    const model = this.agent.model;
    if (model.api === "faux" || this.apiKeyFor(model)) return undefined;
    const env = apiKeyEnvVar(model.provider);
    return (
      `no API key for provider "${model.provider}": ` +
      (env ? `set ${env}, ` : "") +
      `pass --api-key, or set providers.${model.provider}.apiKey in models.json (or use --provider faux for an offline demo)`
    );
  }

  /**
   * Accept a prompt. `/name args` runs an extension command at once (even while
   * streaming). While a run is in progress a prompt needs a behaviour (`steer` or
   * `followUp`), else `AgentBusyError`. Returns the run's completion when one starts.
   */
  async prompt(text: string, images?: ImageContent[], behavior?: "steer" | "followUp"): Promise<{ done?: Promise<void> }> {
    const command = /^\/([\w:-]+)(?:\s+([\s\S]*))?$/.exec(text.trim());
    if (command && (await this.extensions.runCommand(command[1], command[2] ?? ""))) return {};
    const message = userMessage(text, images);
    if (this.agent.isStreaming) {
      if (behavior !== "steer" && behavior !== "followUp") throw new AgentBusyError();
      this.checkPersistable(message);
      if (behavior === "steer") this.agent.steer(message);
      else this.agent.followUp(message);
      return {};
    }
    if (this.isCompacting) throw new Error("the session is being compacted; try again when compaction_end arrives");
    const problem = this.missingKeyProblem();
    if (problem) throw new Error(problem);
    // A prompt is on disk before it is accepted: one the disk refuses is refused, not lost.
    if (this.store) {
      this.recordOrRefuse(() => this.store!.append({ type: "message", message }));
      this.persistedPrompts.add(message);
    }
    return this.agent.start([message]);
  }

  steer(text: string, images?: ImageContent[]): void {
    const message = userMessage(text, images);
    this.checkPersistable(message);
    this.agent.steer(message);
  }

  followUp(text: string, images?: ImageContent[]): void {
    const message = userMessage(text, images);
    this.checkPersistable(message);
    this.agent.followUp(message);
  }

  /** Refuse a queued message the session could not record (it is written when delivered). */
  private checkPersistable(message: AgentMessage): void {
    this.recordOrRefuse(() => this.store?.checkWritable(Buffer.byteLength(JSON.stringify(message)) + 4096));
  }

  private recordOrRefuse(write: () => unknown): void {
    try {
      write();
    } catch (error) {
      if (error instanceof SessionWriteError) throw new Error(`message refused, nothing was run: ${error.message}`);
      throw error;
    }
  }

  get sessionFile(): string | undefined {
    return this.store?.path;
  }

  get sessionId(): string {
    return this.store?.sessionId ?? this.ephemeralId;
  }

  get sessionName(): string | undefined {
    return this.store ? this.store.sessionName : this.ephemeralName;
  }

  get isCompacting(): boolean {
    return this.compactor.isCompacting;
  }

  get autoRetry(): boolean {
    return this.retry.settings.enabled;
  }

  set autoRetry(enabled: boolean) {
    this.retry.settings.enabled = enabled;
  }

  /** Stop waiting before the next automatic retry; the run then ends with the error. */
  abortRetry(): void {
    this.retry.abortWait();
  }

  /** Abort a compaction and the run in progress; resolves after `agent_end`. */
  async abort(): Promise<void> {
    this.abortCompaction();
    await this.agent.abort();
  }

  /** The `get_state` payload. */
  state(): Record<string, unknown> {
    const a = this.agent;
    return {
      model: a.model,
      thinkingLevel: a.thinkingLevel,
      isStreaming: a.isStreaming,
      isCompacting: this.isCompacting,
      steeringMode: a.steeringMode,
      followUpMode: a.followUpMode,
      ...(this.sessionFile ? { sessionFile: this.sessionFile } : {}),
      sessionId: this.sessionId,
      ...(this.sessionName ? { sessionName: this.sessionName } : {}),
      autoCompactionEnabled: this.autoCompaction,
      messageCount: a.messages.length,
      pendingMessageCount: a.pendingMessageCount,
      tools: this.activeTools().map((t) => t.name),
      cwd: this.cwd,
    };
  }

  setModel(provider: string, modelId: string): Model {
    const model = resolveModel(this.catalogue, provider, modelId);
    this.agent.model = model;
    this.store?.append({ type: "model_change", provider: model.provider, modelId: model.id });
    return model;
  }

  /** Next model of the catalogue that can be called (wrapping); null when there is only one. */
  cycleModel(): { model: Model; thinkingLevel: ThinkingLevel; isScoped: boolean } | null {
    const usable = this.catalogue.models.filter((m) => m.api === "faux" || this.apiKeyFor(m));
    if (usable.length <= 1) return null;
    const current = usable.findIndex((m) => m.provider === this.agent.model.provider && m.id === this.agent.model.id);
    const next = usable[(current + 1) % usable.length];
    this.setModel(next.provider, next.id);
    if (!next.reasoning && this.agent.thinkingLevel !== "off") this.setThinkingLevel("off");
    return { model: next, thinkingLevel: this.agent.thinkingLevel, isScoped: false };
  }

  availableModels(): Model[] {
    return this.catalogue.models;
  }

  setThinkingLevel(level: ThinkingLevel): void {
    this.agent.thinkingLevel = level;
    this.store?.append({ type: "thinking_level_change", thinkingLevel: level });
  }

  /** Next thinking level; null when the model does not reason. */
  cycleThinkingLevel(): { level: ThinkingLevel } | null {
    if (!this.agent.model.reasoning) return null;
    const i = THINKING_LEVELS.indexOf(this.agent.thinkingLevel);
    const level = THINKING_LEVELS[(i + 1) % THINKING_LEVELS.length];
    this.setThinkingLevel(level);
    return { level };
  }

  setSteeringMode(mode: QueueMode): void {
    this.agent.steeringMode = mode;
  }

  setFollowUpMode(mode: QueueMode): void {
    this.agent.followUpMode = mode;
  }

  /** Run a shell command for the user; its output joins the context of the next prompt. */
  async bash(command: string): Promise<BashCommandResult> {
    if (this.bashAbort) throw new Error("a bash command is already running; send abort_bash first");
    const { runBash } = await import("../tools/bash.js");
    const controller = new AbortController();
    this.bashAbort = controller;
    try {
      const r = await runBash(command, { cwd: this.cwd, signal: controller.signal });
      const message: BashExecutionMessage = {
        role: "bashExecution",
        command,
        output: r.output,
        exitCode: r.exitCode,
        cancelled: r.cancelled,
        truncated: r.truncated,
        fullOutputPath: r.fullOutputPath ?? null,
        timestamp: Date.now(),
      };
      this.agent.messages.push(message);
      this.store?.appendOrKeep({ type: "message", message });
      return {
        output: r.output,
        exitCode: r.exitCode,
        cancelled: r.cancelled,
        truncated: r.truncated,
        ...(r.fullOutputPath ? { fullOutputPath: r.fullOutputPath } : {}),
      };
    } finally {
      this.bashAbort = null;
    }
  }

  abortBash(): void {
    this.bashAbort?.abort();
  }

  /** Token and message counts of the conversation (`get_session_stats`). */
  sessionStats(): Record<string, unknown> {
    return sessionStats({
      messages: this.agent.messages,
      contextWindow: this.agent.model.contextWindow,
      sessionFile: this.sessionFile,
      sessionId: this.sessionId,
    });
  }

  /** Text of the last assistant message, or null. */
  lastAssistantText(): string | null {
    return lastAssistantText(this.agent.messages);
  }

  setSessionName(name: string): void {
    if (this.store) this.store.append({ type: "session_info", name });
    else this.ephemeralName = name;
  }

  /** Messages of the conversation, as `get_messages` returns them. */
  messages(): AgentMessage[] {
    return this.agent.messages;
  }

  private requireIdle(what: string): void {
    if (this.agent.isStreaming) throw new Error(`cannot ${what} while the agent is running; send abort first`);
    if (this.isCompacting) throw new Error(`cannot ${what} while the session is being compacted`);
  }

  private requireStore(what: string): SessionStore {
    if (!this.store) throw new Error(`cannot ${what}: this worker runs without a session file (--no-session)`);
    return this.store;
  }

  /** Load a session's conversation into the agent. */
  private loadFrom(store: SessionStore): void {
    const ctx = store.buildContext();
    this.agent.clearQueues();
    this.agent.messages = ctx.messages;
    if (ctx.model) {
      try {
        this.agent.model = resolveModel(this.catalogue, ctx.model.provider, ctx.model.modelId);
      } catch {
        this.warn(`the session's model ${ctx.model.provider}/${ctx.model.modelId} is not available; keeping ${this.agent.model.provider}/${this.agent.model.id}`);
      }
    }
    if (ctx.thinkingLevel) this.agent.thinkingLevel = ctx.thinkingLevel;
    this.attachStore(store, false);
  }

  /** `new_session`: a fresh, empty session file. */
  newSession(parentSession?: string): { cancelled: boolean } {
    this.requireIdle("start a new session");
    const store = SessionStore.create({ dir: this.sessionDir, cwd: this.cwd, parentSession }, { warn: this.warn });
    this.agent.clearQueues();
    this.agent.messages = [];
    this.attachStore(store, true);
    return { cancelled: false };
  }

  /** `switch_session`: continue another session file. */
  switchSession(path: string): { cancelled: boolean } {
    this.requireIdle("switch sessions");
    this.loadFrom(SessionStore.open(resolveSessionArg(path, this.sessionDir), { warn: this.warn }));
    return { cancelled: false };
  }

  /** `fork`: a new session holding the path before a user message; returns that message's text. */
  fork(entryId: string): { text: string; cancelled: boolean } {
    this.requireIdle("fork");
    const { path, text } = forkSession(this.requireStore("fork"), entryId, this.sessionDir);
    this.loadFrom(SessionStore.open(path, { warn: this.warn }));
    return { text, cancelled: false };
  }

  /** `clone`: a new session with the whole current path. */
  clone(): { cancelled: boolean } {
    this.requireIdle("clone");
    const path = cloneSession(this.requireStore("clone"), this.sessionDir);
    this.loadFrom(SessionStore.open(path, { warn: this.warn }));
    return { cancelled: false };
  }

  /** `get_fork_messages`: the user messages one can fork from. */
  forkMessages(): { entryId: string; text: string }[] {
    return this.store ? forkMessages(this.store) : [];
  }

  /** `compact`: summarize the older part of the conversation now. */
  async compact(customInstructions?: string): Promise<CompactionResult> {
    this.requireIdle("compact");
    const result = await this.runCompaction("manual", customInstructions, false);
    if (!result) throw new Error("nothing to compact yet: the conversation is shorter than the part that is always kept");
    return result;
  }

  /** Abort a compaction in progress. */
  abortCompaction(): void {
    this.compactor.abort();
  }

  /**
   * The agent's `afterResponse` hook: a context overflow is compacted and the request
   * sent once more; transient errors go to the automatic retry.
   */
  private async afterResponse(ctx: AfterResponseContext): Promise<"accept" | "repeat"> {
    if (ctx.repeats === 0) this.overflowRetried = false;
    if (ctx.failure?.contextOverflow && !this.overflowRetried && this.store && !ctx.signal.aborted) {
      this.overflowRetried = true;
      if (await this.runCompaction("overflow", undefined, true)) return "repeat";
    }
    return this.retry.afterResponse(ctx);
  }

  private async maybeCompactAtThreshold(): Promise<void> {
    if (!this.autoCompaction || !this.store) return;
    const reserve = this.options.compactionReserveTokens ?? 16_384;
    const tokens = estimateContextTokens(this.agent.messages);
    if (!shouldCompact(tokens, this.agent.model.contextWindow, reserve)) return;
    await this.runCompaction("threshold", undefined, false);
  }

  /**
   * Compact with the current model and replace the in-memory context in place, so a
   * run in progress continues with the compacted context (the original entries stay
   * in the file).
   */
  private async runCompaction(reason: CompactionReason, customInstructions: string | undefined, willRetry: boolean): Promise<CompactionResult | null> {
    const model = this.agent.model;
    const done = await this.compactor.run(
      {
        store: this.requireStore("compact"),
        model,
        provider: this.providers.for(model),
        apiKey: this.apiKeyFor(model),
        keepTokens: this.options.compactionKeepTokens ?? 20_000,
        emit: (e) => this.emit(e),
      },
      reason,
      customInstructions,
      willRetry,
    );
    if (!done) return null;
    this.agent.messages.splice(0, this.agent.messages.length, ...done.messages);
    return done.result;
  }

  /** Commands for `get_commands`. */
  commands(): unknown[] {
    return this.extensions.commands();
  }

  /** Announce the session to extensions (after the mode is ready to carry their UI). */
  async start(): Promise<void> {
    for (const path of this.extensions.skipped()) {
      this.warn(`skipped the project extension ${path}: the project is not trusted (run with --trust to allow it)`);
    }
    await this.extensions.sessionStart();
  }

  /** Abort the run and any bash command, tell extensions, close the session file. */
  async shutdown(): Promise<void> {
    this.abortBash();
    await this.abort();
    await this.extensions.sessionShutdown().catch(() => undefined);
    this.store?.close();
  }
}
