/**
 * The session layer (pi's `AgentSession`): around the provider-agnostic agent it
 * owns persistence (the session file), auto-retry, compaction, the extension hooks,
 * the message queues and every event that leaves the worker. The modes (rpc, print,
 * the TUI's in-process agent) drive it through one command map (modes/commands.ts).
 */
import type { AgentMessage, ImageContent, Model, ThinkingLevel } from "../../shared/schema/messages.js";
import type { CompactionResult, WorkerEvent } from "../../shared/schema/events.js";
import type { RpcSessionState, RpcSessionStats } from "../../shared/schema/rpc.js";
import { agentDir, modelsJsonPath } from "../../shared/paths.js";
import { AuthKeys, authJsonPath } from "../providers/auth-file.js";
import { Agent } from "../agent/agent.js";
import type { AfterResponseContext, QueueMode } from "../agent/types.js";
import type { ExtensionHooks } from "../extensions/hooks.js";
import type { ExtensionHost, NewSessionOptions, RunMode } from "../extensions/host.js";
import type { ExtensionUi } from "../extensions/types.js";
import type { ProviderSet } from "../providers/index.js";
import { loadCatalogue, type ModelCatalogue } from "../providers/models.js";
import type { Resources } from "../resources/index.js";
import type { PackageOrigin } from "../packages/resolve.js";
import { exportSessionHtml } from "../session/export-html.js";
import { exportSessionJsonl } from "../session/export-jsonl.js";
import type { TreeNode } from "../session/tree.js";
import { defaultSessionDir } from "../session/locate.js";
import type { SessionEntry } from "../../shared/schema/session.js";
import type { SessionStore } from "../session/session-file.js";
import { setSessionEnvSource } from "../tools/session-env.js";
import type { AgentTool } from "../types.js";
import { AutoRetry, retrySettingsOf } from "./auto-retry.js";
import type { SummaryModel } from "./compactor.js";
import { CompactionTriggers } from "./compaction-triggers.js";
import { lastAssistantText, sessionStats } from "./stats.js";
import { turnEndBoundary, type BoundaryHost } from "./turn-boundary.js";
import { ModelSelection } from "./model-selection.js";
import { openInitialSession, SessionSwitching } from "./session-switching.js";
import type { WorkerOptions } from "./worker-options.js";
import { EventGate } from "./event-gate.js";
import { customMessage, extensionHost } from "./extension-host.js";
import { type BashCommandResult, UserBash } from "./user-bash.js";
import { ToolSet } from "./tool-set.js";
import { MessageEntries } from "./message-entries.js";
import { extensionAgentHooks } from "./extension-agent-hooks.js";
import { ProviderCatalogue } from "./provider-catalogue.js";
import { RunSettling } from "./run-settling.js";
import { PromptIntake, type PromptOutcome, type PromptSourceKind } from "./prompt-intake.js";
import { SessionPrompt } from "./session-prompt.js";
import { SessionResources, type SlashCommandInfo } from "./session-resources.js";
import { trustHint } from "./trust-hint.js";
import { ExtensionLifecycle } from "./extension-lifecycle.js";

/** A worker's agent session and the operations the protocol exposes. */
export class AgentSession {
  readonly agent: Agent;
  readonly cwd: string;
  readonly home: string;
  readonly catalogue: ModelCatalogue;
  /** Which model and thinking level requests go to, and the keys they are sent with. */
  private readonly models: ModelSelection;
  readonly sessionDir: string;
  /** Settings, skills, prompt templates and system prompt files, with those the extensions found. */
  private readonly res: SessionResources;
  /** The system prompt: built, declared to the context, changed for a run. */
  private readonly system: SessionPrompt;
  /** The session: a file, or kept in memory with `--no-session` (pi's in-memory SessionManager). */
  private store: SessionStore;
  /** Moving between sessions: new, switch, fork, clone, the tree. */
  private readonly switching: SessionSwitching;
  /** Which tools exist here and which are active. */
  private readonly tools: ToolSet;
  /** The entry each message the session persisted became (turn_end boundaries name them). */
  private readonly entries = new MessageEntries();
  /** models.json's catalogue with the extensions' providers applied. */
  private readonly providerCatalogue: ProviderCatalogue;
  private readonly providers: ProviderSet;
  private readonly env: NodeJS.ProcessEnv;
  private readonly warn: (message: string) => void;
  /** The user's shell commands (`bash`, `!cmd`). */
  private readonly userBash = new UserBash({
    cwd: () => this.cwd,
    extensions: () => this.extensions,
    agent: () => this.agent,
    store: () => this.store,
  });
  /** The extensions: installed, started at each session, reloaded. */
  private readonly ext: ExtensionLifecycle;
  autoCompaction = true;
  /** Compactions: by hand, at the threshold, after an overflow. */
  private readonly compaction: CompactionTriggers;
  private readonly retry: AutoRetry;
  private readonly listeners = new Set<(event: WorkerEvent) => void>();
  /** Agent events wait here for the extensions' handlers of them. */
  private readonly gate: EventGate = new EventGate({
    extensions: () => this.extensions,
    send: (event) => this.release(event),
    warn: (message) => this.warn(message),
    running: () => this.agent.running,
  });
  private shutdownRequested = false;
  /** Prompts, steering, follow-ups and the messages extensions send. */
  private readonly intake: PromptIntake = new PromptIntake({
    agent: () => this.agent,
    extensions: () => this.extensions,
    store: () => this.store,
    gate: () => this.gate,
    runs: () => this.runs,
    isCompacting: () => this.isCompacting,
    missingKeyProblem: () => this.missingKeyProblem(),
    expandPrompt: (text) => this.expandPrompt(text),
    declareSystem: () => this.system.declare(this.agent.messages),
    persist: (message) => this.persist(message),
    compactBeforePrompt: () => this.compaction.afterReply(true),
    emit: (event) => this.emit(event),
  });
  /** Runs followed through their retries and `agent_before_settle` to `agent_settled`. */
  private readonly runs: RunSettling = new RunSettling({
    agent: () => this.agent,
    retry: () => this.retry,
    gate: () => this.gate,
    extensions: () => this.extensions,
    store: () => this.store,
    boundaryHost: () => this.boundaryHost(),
    compactAfterRun: () => this.compaction.afterReply(),
    emit: (event) => this.emit(event),
  });
  /** The mode's dialogs, and whether someone can answer them (`ctx.hasUI`). */
  private ui: { ui: ExtensionUi; interactive: boolean } | null = null;
  /** `ctx.mode`: the mode that set the dialogs last. */
  private runMode: RunMode = "print";
  /** Called when an extension asked the worker to shut down and the agent is idle (set by the mode). */
  onShutdownRequest: (() => void) | null = null;
  /** While the mode's reader of the events is behind: a promise that settles when it caught up (set by the mode). */
  outputBehind: (() => Promise<void> | undefined) | null = null;

  constructor(private readonly options: WorkerOptions) {
    this.cwd = options.cwd;
    this.env = options.env ?? process.env;
    this.warn = options.warn ?? ((m) => process.stderr.write(`pi: ${m}\n`));
    this.home = options.home ?? agentDir(this.env);
    this.catalogue = loadCatalogue(modelsJsonPath(this.home));
    this.models = new ModelSelection({
      agent: () => this.agent,
      catalogue: this.catalogue,
      options,
      env: this.env,
      authKeys: new AuthKeys(authJsonPath(this.home), this.warn),
      settings: () => this.resources.settings,
      store: () => this.store,
      extensions: () => this.extensions,
      emit: (event) => this.emit(event),
      warn: (message) => this.warn(message),
    });
    this.compaction = new CompactionTriggers({
      agent: () => this.agent,
      store: () => this.store,
      extensions: () => this.extensions,
      summaryModel: () => this.summaryModel(),
      options: this.options,
      settings: () => this.resources.settings,
      autoCompaction: () => this.autoCompaction,
      emit: (event) => this.emit(event),
    });
    this.res = new SessionResources({ options, cwd: this.cwd, home: this.home, warn: (m) => this.warn(m) });
    this.ext = new ExtensionLifecycle({
      bind: (hooks) => hooks.bind(this.extensionHost()),
      applyProviders: () => this.providerCatalogue.applyExtensions(this.extensions),
      restoreTools: () => this.restoreToolsFromTranscript(),
      rebuildSystem: () => this.system.rebuild(),
      readSystemFiles: () => this.system.readFiles(),
      resources: this.res,
      applySettings: (before, after) => this.applyChangedSettings(before, after),
      env: this.env,
      warn: (message) => this.warn(message),
    });
    for (const path of this.resources.skippedProject) {
      this.warn(`skipped ${path}: the project is not trusted (${trustHint(this.env)})`);
    }
    const settings = this.resources.settings;
    // pi's order: --session-dir, PI_CODING_AGENT_SESSION_DIR, the sessionDir setting, the agent directory's.
    this.sessionDir =
      options.sessionDir ??
      (this.env.PI_CODING_AGENT_SESSION_DIR || undefined) ??
      settings.sessionDir ??
      defaultSessionDir(this.cwd, this.home);
    this.switching = new SessionSwitching({
      agent: () => this.agent,
      cwd: this.cwd,
      sessionDir: this.sessionDir,
      models: this.models,
      store: () => this.store,
      attachStore: (store, fresh) => this.attachStore(store, fresh),
      requireIdle: (what) => this.requireIdle(what),
      extensions: () => this.extensions,
      startExtensions: (reason, previous) => this.ext.startSession(reason, previous),
      restoreTools: () => this.restoreToolsFromTranscript(),
      persist: (message) => this.persist(message),
      summarize: (request) => this.compaction.summarize(request),
      warn: (message) => this.warn(message),
    });
    this.providerCatalogue = new ProviderCatalogue(this.catalogue, options, this.env, settings);
    this.providers = this.providerCatalogue.providers;
    setSessionEnvSource(() => ({
      sessionId: this.sessionId,
      sessionFile: this.sessionFile,
      provider: this.agent.model.provider,
      modelId: this.agent.model.id,
      reasoningLevel: this.agent.thinkingLevel,
    }));
    this.tools = new ToolSet(options, settings.defaultTools, {
      extensions: () => this.extensions,
      changed: () => this.system.rebuild(),
    });
    this.system = new SessionPrompt({
      options,
      cwd: this.cwd,
      home: this.home,
      resources: () => this.resources,
      tools: () => this.tools.active(),
    });
    this.system.readFiles();
    this.system.rebuild();

    const store = openInitialSession(options, {
      cwd: this.cwd,
      home: this.home,
      sessionDir: this.sessionDir,
      warn: this.warn,
    });
    this.store = store;
    const restored = store.buildContext();
    const start = this.models.start(restored);
    this.retry = new AutoRetry(retrySettingsOf(settings, options.retryDelayMs), (e) => this.emit(e));
    this.autoCompaction = settings.compaction?.enabled ?? true;
    this.agent = new Agent(
      {
        cwd: this.cwd,
        provider: (m) => this.providers.for(m),
        apiKey: (m) => this.apiKeyFor(m),
        systemPrompt: () => this.system.forRequest(this.agent.messages),
        tools: () => this.activeTools(),
        callableTools: () => this.callableTools(),
        declareSystem: (context) => this.system.declare(context),
        sessionId: () => this.sessionId,
        ...extensionAgentHooks(() => this.extensions),
        afterResponse: (ctx) => this.afterResponse(ctx),
        routeRequest: (ctx) => this.models.routeRun(ctx, this.runs.takeRetriedResponse()),
        pace: () => this.outputBehind?.(),
        finishTurn: (turn) => turnEndBoundary(this.boundaryHost(), { ...turn, turnIndex: this.gate.currentTurnIndex }),
        // pi 1.6: between the turns of a run; after its last one, the run's end checks (runs).
        prepareNextTurn: () => this.compaction.betweenTurns(),
        onQueueChange: () => this.emit({ type: "queue_update", ...this.agent.queues() }),
        beforeRun: (prompts) => this.beforeRun(prompts),
        afterRun: async () => {
          // As pi: the agent is idle once its loop ended, while agent_end may still wait for
          // the extensions (a handler's sendMessage can start the next run); a shutdown asked
          // for during the run (or by an agent_end handler) comes after agent_end went out.
          // The run does not wait for the handlers of its events (a dialog, a ctx.waitForIdle):
          // abort is answered and get_state says idle when the loop ended, as in pi.
          void this.gate.agentEndSent.then(() => {
            if (this.shutdownRequested) this.onShutdownRequest?.();
          });
        },
      },
      start,
    );
    if (settings.steeringMode) this.agent.steeringMode = settings.steeringMode;
    if (settings.followUpMode) this.agent.followUpMode = settings.followUpMode;
    if (restored.messages.length > 0) {
      this.agent.messages = restored.messages;
      this.restoreToolsFromTranscript();
    }
    this.agent.subscribe((event) => {
      // Persist before the event leaves the worker (appends are synchronous). A message
      // that already happened is kept in memory when the disk refuses it, and written
      // when space returns; a prompt was written when it was accepted.
      if (event.type === "message_end" && !this.intake.wasPersisted(event.message)) this.persist(event.message);
      // The run's end decides its retry at once (pi's _createRetryPromiseForAgentEnd), so
      // the session stays busy until the retry run starts, whatever the handlers do.
      if (event.type === "agent_end" && this.retry.onAgentEnd(event.messages)) event = { ...event, willRetry: true };
      this.gate.pass(event);
    });
    this.recordStart(store, !this.models.waiting && restored.messages.length === 0);
  }

  /**
   * Resolve a start model that waited for extensions (`deferModel`), now that their
   * providers are in the catalogue; throws what resolution says when it still fails.
   * Nothing to do when the constructor resolved it.
   */
  settleStartModel(): void {
    this.models.settleStart();
  }

  /** Make `store` the current session; a fresh one records the model and thinking level like pi. */
  private attachStore(store: SessionStore, fresh: boolean): void {
    this.store.close();
    this.store = store;
    this.recordStart(store, fresh);
  }

  /** A fresh session's first entries, as pi's: the model and the thinking level. */
  private recordStart(store: SessionStore, fresh: boolean): void {
    if (fresh && store.entries.length === 0) {
      store.appendOrKeep({ type: "model_change", provider: this.agent.model.provider, modelId: this.agent.model.id });
      store.appendOrKeep({ type: "thinking_level_change", thinkingLevel: this.agent.thinkingLevel });
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

  /** The extensions installed now (none until a mode installed them). */
  private get extensions(): ExtensionHooks {
    return this.ext.current;
  }

  /** Install loaded extensions (after construction, so they can see the session). */
  setExtensions(hooks: ExtensionHooks): void {
    this.ext.install(hooks);
  }

  /** The session as the extensions reach it (`pi.*`, `ctx.*`). */
  private extensionHost(): ExtensionHost {
    return extensionHost(this, {
      extensions: () => this.extensions,
      store: () => this.store,
      providers: this.providers,
      dialogs: () => this.ui,
      mode: () => this.runMode,
      systemPrompt: () => this.system.forRun(),
      trusted: this.options.trusted === true,
      scopedModels: () => this.models.scopedModels(),
      registered: (name) => this.tools.registered(name),
      toolsChanged: () => this.system.rebuild(),
      providersChanged: () => this.providerCatalogue.applyExtensions(this.extensions),
      deliver: (message, deliverAs, triggerTurn) => this.intake.deliver(message, deliverAs, triggerTurn),
      pendingSends: this.intake.pendingSends,
      requestShutdown: () => this.requestShutdown(),
    });
  }

  /** The tools the current branch declares, back (see ToolSet.restoreFrom). */
  private restoreToolsFromTranscript(): void {
    this.tools.restoreFrom(this.agent.messages);
  }

  /** Settings, skills, prompt templates and system prompt files of this start, with those the extensions found. */
  get resources(): Resources {
    return this.res.current;
  }

  /** How `reload` loads the extensions again (the mode that loaded them sets it). */
  setExtensionLoader(load: () => Promise<ExtensionHooks>): void {
    this.ext.setLoader(load);
  }

  /**
   * pi's `ctx.reload()` (see ExtensionLifecycle.reload). A setting pi reads live (retry,
   * auto-compaction) takes effect when the files changed it since they were last read;
   * one they did not change keeps the session's value, so a client's `set_auto_retry`
   * survives. As in pi 0.73.1, the queue modes, the model and the thinking level stay
   * as the session has them.
   */
  reload(): Promise<void> {
    return this.ext.reload();
  }

  /** The settings whose value differs between two reads of the settings files, applied to the running session. */
  private applyChangedSettings(before: Resources["settings"], after: Resources["settings"]): void {
    const changed = <T>(get: (s: Resources["settings"]) => T): T | undefined => {
      const next = get(after);
      return JSON.stringify(get(before)) === JSON.stringify(next) ? undefined : next;
    };
    // Field by field: a value set by hand since the last read stays unless the file changed it.
    const was = retrySettingsOf(before, this.options.retryDelayMs);
    const now = retrySettingsOf(after, this.options.retryDelayMs);
    this.retry.reloadSettings(was, now);
    if (was.maxRetryDelayMs !== now.maxRetryDelayMs) this.providers.maxRetryDelayMs = now.maxRetryDelayMs;
    const compaction = changed((s) => s.compaction?.enabled ?? true);
    if (compaction !== undefined) this.autoCompaction = compaction;
  }

  /** The mode's dialogs for extensions; `interactive` is `ctx.hasUI` (false in print mode). */
  setUi(ui: ExtensionUi, interactive: boolean, mode?: RunMode): void {
    this.ui = { ui, interactive };
    if (mode) this.runMode = mode;
  }

  /** A message as the session file keeps it: extension messages as pi's `custom_message` entries. */
  private persist(message: AgentMessage): void {
    this.entries.persist(this.store, message);
  }

  /** What a turn_end or agent_before_settle boundary needs of this session. */
  private boundaryHost(): BoundaryHost {
    return {
      extensions: () => this.extensions,
      store: () => this.store,
      messages: () => this.agent.messages,
      entryIdOf: (message) => this.entries.idOf(message),
      pending: () => this.agent.queuedMessages(),
      emit: (event) => this.emit(event),
    };
  }

  /** An agent event leaves the worker; a good answer ends a retry series. */
  private release(event: WorkerEvent): void {
    this.emit(event);
    if (event.type === "message_end" && event.message.role === "assistant") this.retry.onMessageEnd(event.message);
  }

  /** pi's `before_agent_start` (see SessionPrompt); the next-turn messages and the handlers' join the prompt. */
  private async beforeRun(prompts: AgentMessage[]): Promise<void> {
    const joined = await this.system.beforeAgentStart(this.extensions, prompts);
    if (!joined) return;
    prompts.push(...this.intake.takeNextTurn(), ...joined.map(customMessage));
  }

  /** The key for a model's provider: `--api-key`, then auth.json's, then models.json's or the environment's (pi 1.6.0's order). */
  apiKeyFor(model: Model): string | undefined {
    return this.models.apiKeyFor(model);
  }

  /** Tools the model may call now (see ToolSet.active). */
  activeTools(): AgentTool[] {
    return this.tools.active();
  }

  /** Tools a tool may call through `executeTool` (see ToolSet.callable). */
  callableTools(): AgentTool[] {
    return this.tools.callable();
  }

  /** Change the active tool set (built-in and extension tools by name); the system prompt follows. */
  setActiveTools(names: string[]): void {
    this.tools.setActive(names);
  }

  /** The built system prompt (no run's `before_agent_start` change). */
  get systemPrompt(): string {
    return this.system.text;
  }

  /** `/skill:name args` and `/template args` expanded, as pi expands a prompt before sending it. */
  expandPrompt(text: string): string {
    return this.res.expandPrompt(text);
  }

  /** Why the current model cannot be called (no key), or undefined when it can. */
  missingKeyProblem(): string | undefined {
    return this.models.missingKeyProblem();
  }

  /**
   * Accept a prompt (see PromptIntake.prompt): the run's completion when one starts, pi
   * 1.6's disposition of the prompt (`started`, `queued`, or `handled` by a command or an
   * `input` handler), and whether a run is going now (so its `agent_settled` follows).
   */
  prompt(
    text: string,
    images?: ImageContent[],
    behavior?: "steer" | "followUp",
    source?: PromptSourceKind,
  ): Promise<PromptOutcome> {
    return this.intake.prompt(text, images, behavior, source);
  }

  /** A run's `agent_settled` is still to come (its end, retries or `agent_before_settle` are not over). */
  get settling(): boolean {
    return this.runs.settling;
  }

  /** A run, an automatic retry's wait or a compaction is going: the worker is at work even while quiet on the wire. */
  get isWorking(): boolean {
    return this.isBusy || this.isCompacting;
  }

  /** A run is going, or a failed run waits for its automatic retry (which queues as a run would). */
  private get isBusy(): boolean {
    return this.runs.busy;
  }

  /** The model a request outside a run (a summary) goes to, and how it is called. */
  private async summaryModel(): Promise<SummaryModel> {
    const model = await this.models.directModel();
    return { model, provider: this.providers.for(model), apiKey: this.apiKeyFor(model) };
  }

  /** Queue a steering message; pi 1.6's disposition of it. */
  steer(text: string, images?: ImageContent[]): "queued" {
    return this.intake.steer(text, images);
  }

  /** Queue a follow-up; pi 1.6's disposition of it. */
  followUp(text: string, images?: ImageContent[]): "queued" {
    return this.intake.followUp(text, images);
  }

  /** `clear_queue`: drop the queued steering and follow-up messages, returning their texts. */
  clearQueue(): { steering: string[]; followUp: string[] } {
    return this.intake.clearQueue();
  }

  /** The context files (`AGENTS.md`, `CLAUDE.md`) the system prompt holds, for the interactive header. */
  get contextFilePaths(): string[] {
    return this.system.contextFilePaths;
  }

  /** The session file; undefined with `--no-session` (pi's get_state leaves it out). */
  get sessionFile(): string | undefined {
    return this.store.path;
  }

  get sessionId(): string {
    return this.store.sessionId;
  }

  get sessionName(): string | undefined {
    return this.store.sessionName;
  }

  get isCompacting(): boolean {
    return this.compaction.isCompacting;
  }

  get autoRetry(): boolean {
    return this.retry.settings.enabled;
  }

  set autoRetry(enabled: boolean) {
    this.retry.settings.enabled = enabled;
  }

  /** Stop waiting before the next automatic retry; the failed run stays the last one. */
  abortRetry(): void {
    this.retry.abortWait();
  }

  /** Abort a retry wait, a compaction and the run in progress; resolves after `agent_end`. */
  async abort(): Promise<void> {
    this.runs.noteAbort();
    this.abortRetry();
    this.abortCompaction();
    await this.agent.abort();
  }

  /** The `get_state` payload. */
  state(): RpcSessionState {
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

  /** `set_model`: a usable model of the catalogue; the thinking level follows, clamped to it. */
  setModel(provider: string, modelId: string): Model {
    return this.models.setModel(provider, modelId);
  }

  /** Next usable model (wrapping; within `--models` / `enabledModels` when given); null when there is only one. */
  cycleModel(): { model: Model; thinkingLevel: ThinkingLevel; isScoped: boolean } | null {
    return this.models.cycleModel();
  }

  /** The models that can be used now (`get_available_models`), as pi lists them. */
  availableModels(): Model[] {
    return this.models.availableModels();
  }

  /** Set the thinking level (clamped to the model), recorded and announced when it changes. */
  setThinkingLevel(level: ThinkingLevel): void {
    this.models.setThinkingLevel(level);
  }

  /** Next of the levels the model offers; null when the model does not reason. */
  cycleThinkingLevel(): { level: ThinkingLevel } | null {
    return this.models.cycleThinkingLevel();
  }

  /** `get_available_thinking_levels`: the levels the current model offers (`off` alone without reasoning). */
  availableThinkingLevels(): ThinkingLevel[] {
    return this.models.availableThinkingLevels();
  }

  setSteeringMode(mode: QueueMode): void {
    this.agent.steeringMode = mode;
  }

  setFollowUpMode(mode: QueueMode): void {
    this.agent.followUpMode = mode;
  }

  /**
   * Run a shell command for the user; its output joins the context of the next prompt
   * unless `excludeFromContext` (kept in the session, never sent). `onChunk` gets the
   * output as it arrives, plain text (pi 1.6's `bash_execution_update` deltas).
   */
  bash(
    command: string,
    options: { excludeFromContext?: boolean; onChunk?: (delta: string) => void } = {},
  ): Promise<BashCommandResult> {
    return this.userBash.run(command, options);
  }

  /** `abort_bash`: cancel the user's command in progress. */
  abortBash(): void {
    this.userBash.abort();
  }

  /** Token and message counts of the conversation (`get_session_stats`). */
  sessionStats(): RpcSessionStats {
    return sessionStats({
      entries: this.store.entries,
      path: this.store.pathToLeaf(),
      contextWindow: this.agent.model.contextWindow,
      sessionFile: this.sessionFile,
      sessionId: this.sessionId,
    });
  }

  /** Text of the last assistant message, or null. */
  lastAssistantText(): string | null {
    return lastAssistantText(this.agent.messages);
  }

  /** `set_session_name`: trimmed as pi does; a name of only white space is refused. */
  setSessionName(name: string): void {
    const trimmed = name.trim();
    if (!trimmed) throw new Error("Session name cannot be empty");
    this.store.append({ type: "session_info", name: trimmed });
    this.emit({ type: "session_info_changed", name: trimmed });
  }

  /** Messages of the conversation, as `get_messages` returns them. */
  messages(): AgentMessage[] {
    return this.agent.messages;
  }

  private requireIdle(what: string): void {
    if (this.isBusy) throw new Error(`cannot ${what} while the agent is running; send abort first`);
    if (this.isCompacting) throw new Error(`cannot ${what} while the session is being compacted`);
  }

  /** `new_session`: a fresh, empty session file (in memory with `--no-session`). */
  newSession(parentSession?: string, setup?: NewSessionOptions["setup"]): Promise<{ cancelled: boolean }> {
    return this.switching.newSession(parentSession, setup);
  }

  /** `switch_session`: continue another session file (a path that does not exist starts a new one there). */
  switchSession(path: string): Promise<{ cancelled: boolean }> {
    return this.switching.switchSession(path);
  }

  /** `fork`: a new session holding the path before a user message; returns that message's text. */
  fork(entryId: string): Promise<{ text?: string; cancelled: boolean }> {
    return this.switching.fork(entryId);
  }

  /** `clone`: a new session with the whole current path. */
  clone(): Promise<{ cancelled: boolean }> {
    return this.switching.clone();
  }

  /** `get_fork_messages`: the user messages one can fork from. */
  forkMessages(): { entryId: string; text: string }[] {
    return this.switching.forkMessages();
  }

  /** `compact`: summarize the older part of the conversation now. */
  compact(customInstructions?: string): Promise<CompactionResult> {
    this.requireIdle("compact");
    return this.compaction.manual(customInstructions);
  }

  /** Abort a compaction in progress. */
  abortCompaction(): void {
    this.compaction.abort();
  }

  /**
   * The agent's `afterResponse` hook: a context overflow is compacted and the request
   * sent once more; a transient error is kept (the run ends with it) and retried after
   * the run, by `followRetries`.
   */
  private async afterResponse(ctx: AfterResponseContext): Promise<"accept" | "repeat"> {
    if (await this.compaction.recoverOverflow(ctx)) return "repeat";
    this.retry.noteResponse(ctx.failure);
    return "accept";
  }

  /** Where each file of a pi package came from (set at each load of the extensions), for `sourceInfo`. */
  setPackageOrigins(origins: ReadonlyMap<string, PackageOrigin>): void {
    this.res.setPackageOrigins(origins);
  }

  /** `get_commands`: extension commands, prompt templates and skills, in pi 0.73's shape. */
  commands(): SlashCommandInfo[] {
    return this.res.commands(this.extensions);
  }

  /** `/export FILE.jsonl`: the current branch as a session file of its own (pi's `exportToJsonl`); returns its path. */
  exportJsonl(outputPath: string): { path: string } {
    return { path: exportSessionJsonl(this.store, outputPath, this.cwd) };
  }

  /** `export_html`: the session as one self-contained HTML file; returns its path. */
  exportHtml(outputPath?: string): { path: string } {
    const store = this.store;
    // pi 1.6.0's words: a session kept in memory (--no-session) has no file to export.
    if (!store.hasFile()) throw new Error("Cannot export in-memory session to HTML");
    const path = exportSessionHtml(
      store.path,
      {
        header: store.header,
        path: store.pathToLeaf(),
        entryCount: store.entries.length,
        name: this.sessionName,
        systemPrompt: this.system.text,
      },
      this.cwd,
      outputPath,
    );
    return { path };
  }

  /** `get_tree`: every entry as a forest, and the current leaf. */
  tree(): { tree: TreeNode[]; leafId: string | null } {
    return this.switching.tree();
  }

  /** `get_entries`: every entry in append order, or those after `since`; and the current leaf. */
  getEntries(since?: string): { entries: readonly SessionEntry[]; leafId: string | null } {
    return this.switching.getEntries(since);
  }

  /** `navigate_tree`: move the leaf to `targetId`, optionally summarizing the branch left. */
  navigateTree(
    targetId: string,
    options: { summarize?: boolean; customInstructions?: string; replaceInstructions?: boolean; label?: string } = {},
  ): Promise<{ cancelled: boolean; editorText?: string; summaryEntry?: unknown }> {
    return this.switching.navigateTree(targetId, options);
  }

  /** Flags extensions registered, for the CLI to accept. */
  extensionFlags() {
    return this.extensions.flags();
  }

  /** Announce the session to extensions (after the mode is ready to carry their UI). */
  start(): Promise<void> {
    return this.ext.start();
  }

  /** Abort the run and any bash command, tell extensions, close the session file. */
  async shutdown(): Promise<void> {
    this.abortBash();
    await this.abort();
    await this.extensions.sessionShutdown("quit").catch(() => undefined);
    this.store.close();
  }

  /** `ctx.shutdown()`: the worker ends once the agent is idle and what is held went out. */
  private requestShutdown(): void {
    this.shutdownRequested = true;
    // Outside a run (a command, or an agent_end handler once the agent is idle): after what is held went out.
    if (!this.agent.isStreaming) void this.gate.drained().then(() => setImmediate(() => this.onShutdownRequest?.()));
  }
}
