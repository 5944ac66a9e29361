/**
 * One worker's agent session: the agent, its model catalogue and providers, its
 * tools and system prompt, and (later) its session file. The modes (rpc, print,
 * interactive) are thin drivers over this object.
 */
import type {
  AgentMessage,
  AssistantMessage,
  BashExecutionMessage,
  ImageContent,
  Model,
  ThinkingLevel,
} from "../shared/schema/messages.js";
import { modelsJsonPath, piOrchHome } from "../shared/paths.js";
import { Agent, AgentBusyError, userMessage, type QueueMode } from "./agent/agent.js";
import { ProviderSet } from "./providers/index.js";
import { loadFauxScript } from "./providers/faux.js";
import {
  defaultProvider,
  loadCatalogue,
  resolveApiKey,
  resolveModel,
  type ModelCatalogue,
} from "./providers/models.js";
import { buildSystemPrompt, findContextFiles, resolveAppend, type ContextFile } from "./system-prompt.js";
import { BUILT_IN_TOOLS, selectTools } from "./tools/index.js";
import type { AgentTool } from "./types.js";

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
  /** First automatic-retry delay (doubles each attempt). */
  retryDelayMs?: number;
  env?: NodeJS.ProcessEnv;
}

const THINKING_LEVELS: ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh"];

/** The result of the `bash` RPC command. */
export interface BashCommandResult {
  output: string;
  exitCode: number | null;
  cancelled: boolean;
  truncated: boolean;
  fullOutputPath?: string;
}

/** A worker's agent session and the operations the protocol exposes. */
export class WorkerRuntime {
  readonly agent: Agent;
  readonly cwd: string;
  readonly home: string;
  readonly catalogue: ModelCatalogue;
  readonly sessionId: string = crypto.randomUUID();
  sessionName?: string;
  private activeToolNames: string[];
  private systemPromptText = "";
  private readonly contextFiles: ContextFile[];
  private readonly providers: ProviderSet;
  private readonly explicitApiKey?: string;
  private readonly env: NodeJS.ProcessEnv;
  private bashAbort: AbortController | null = null;

  constructor(private readonly options: WorkerOptions) {
    this.cwd = options.cwd;
    this.env = options.env ?? process.env;
    this.home = options.home ?? piOrchHome(this.env);
    this.catalogue = loadCatalogue(modelsJsonPath(this.home));
    const providerName = options.provider ?? (options.model?.includes("/") ? undefined : defaultProvider(this.env));
    const model = resolveModel(this.catalogue, providerName, options.model);
    this.explicitApiKey = options.apiKey;
    const chunkMs = Number(this.env.PI_ORCH_FAUX_CHUNK_MS ?? 0);
    this.providers = new ProviderSet({
      script: options.fauxScript ? loadFauxScript(options.fauxScript) : undefined,
      chunkDelayMs: Number.isFinite(chunkMs) ? chunkMs : 0,
    });
    this.activeToolNames = selectTools(options.tools, BUILT_IN_TOOLS.map((t) => t.name), options.noTools);
    this.contextFiles = options.noContextFiles ? [] : findContextFiles(this.cwd, this.home);
    this.rebuildSystemPrompt();
    this.agent = new Agent(
      {
        cwd: this.cwd,
        provider: (m) => this.providers.for(m),
        apiKey: (m) => this.apiKeyFor(m),
        systemPrompt: () => this.systemPromptText,
        tools: () => this.activeTools(),
      },
      {
        model,
        thinkingLevel: options.thinking ?? "off",
        retryBaseDelayMs: options.retryDelayMs,
      },
    );
  }

  /** The key for a model's provider; a missing key for an SDK provider is a clear error. */
  apiKeyFor(model: Model): string | undefined {
    if (model.api === "faux") return undefined;
    return resolveApiKey(this.catalogue, model.provider, this.explicitApiKey, this.env);
  }

  /** Tools the model may call now. */
  activeTools(): AgentTool[] {
    return BUILT_IN_TOOLS.filter((t) => this.activeToolNames.includes(t.name));
  }

  /** Change the active tool set; the system prompt follows. */
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
      append: (this.options.appendSystemPrompt ?? []).map((a) => resolveAppend(a, this.cwd)),
      contextFiles: this.contextFiles,
    });
  }

  /** Check that the current model can be called (a key is present); returns the problem, if any. */
  missingKeyProblem(): string | undefined {
    const model = this.agent.model;
    if (model.api === "faux" || this.apiKeyFor(model)) return undefined;
    const env = model.provider === "anthropic" ? "ANTHROPIC_API_KEY" : model.provider === "openai" ? "OPENAI_API_KEY" : undefined;
    return (
      `no API key for provider "${model.provider}": ` +
      (env ? `set ${env}, ` : "") +
      `pass --api-key, or set providers.${model.provider}.apiKey in models.json (or use --provider faux for an offline demo)`
    );
  }

  /**
   * Accept a prompt. While a run is in progress it needs a behaviour (`steer` or
   * `followUp`), else `AgentBusyError`. Returns the run's completion when it starts one.
   */
  prompt(text: string, images?: ImageContent[], behavior?: "steer" | "followUp"): { done?: Promise<void> } {
    const message = userMessage(text, images);
    if (this.agent.isStreaming) {
      if (behavior === "steer") this.agent.steer(message);
      else if (behavior === "followUp") this.agent.followUp(message);
      else throw new AgentBusyError();
      return {};
    }
    return this.agent.start([message]);
  }

  steer(text: string, images?: ImageContent[]): void {
    this.agent.steer(userMessage(text, images));
  }

  followUp(text: string, images?: ImageContent[]): void {
    this.agent.followUp(userMessage(text, images));
  }

  /** The `get_state` payload. */
  state(): Record<string, unknown> {
    const a = this.agent;
    return {
      model: a.model,
      thinkingLevel: a.thinkingLevel,
      isStreaming: a.isStreaming,
      isCompacting: false,
      steeringMode: a.steeringMode,
      followUpMode: a.followUpMode,
      sessionId: this.sessionId,
      ...(this.sessionName ? { sessionName: this.sessionName } : {}),
      autoCompactionEnabled: false,
      messageCount: a.messages.length,
      pendingMessageCount: a.pendingMessageCount,
      tools: this.activeToolNames,
    };
  }

  setModel(provider: string, modelId: string): Model {
    const model = resolveModel(this.catalogue, provider, modelId);
    this.agent.model = model;
    return model;
  }

  /** Next model of the catalogue (wrapping); null when only one model is usable. */
  cycleModel(): { model: Model; thinkingLevel: ThinkingLevel; isScoped: boolean } | null {
    const usable = this.catalogue.models.filter((m) => m.api === "faux" || this.apiKeyFor(m));
    if (usable.length <= 1) return null;
    const current = usable.findIndex((m) => m.provider === this.agent.model.provider && m.id === this.agent.model.id);
    const next = usable[(current + 1) % usable.length];
    this.agent.model = next;
    if (!next.reasoning) this.agent.thinkingLevel = "off";
    return { model: next, thinkingLevel: this.agent.thinkingLevel, isScoped: false };
  }

  availableModels(): Model[] {
    return this.catalogue.models;
  }

  setThinkingLevel(level: ThinkingLevel): void {
    this.agent.thinkingLevel = level;
  }

  /** Next thinking level; null when the model does not reason. */
  cycleThinkingLevel(): { level: ThinkingLevel } | null {
    if (!this.agent.model.reasoning) return null;
    const i = THINKING_LEVELS.indexOf(this.agent.thinkingLevel);
    const level = THINKING_LEVELS[(i + 1) % (THINKING_LEVELS.length - 1)];
    this.agent.thinkingLevel = level;
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
    const { runBash } = await import("./tools/bash.js");
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
      this.onBashMessage?.(message);
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

  /** Called when a `bash` command result joins the conversation (persistence hooks in). */
  onBashMessage?: (message: BashExecutionMessage) => void;

  abortBash(): void {
    this.bashAbort?.abort();
  }

  /** Token and message counts of the conversation (`get_session_stats`). */
  sessionStats(): Record<string, unknown> {
    const messages = this.agent.messages;
    const assistants = messages.filter((m): m is AssistantMessage => m.role === "assistant");
    const tokens = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
    let cost = 0;
    for (const m of assistants) {
      tokens.input += m.usage.input;
      tokens.output += m.usage.output;
      tokens.cacheRead += m.usage.cacheRead;
      tokens.cacheWrite += m.usage.cacheWrite;
      tokens.total += m.usage.totalTokens;
      cost += m.usage.cost.total;
    }
    const lastUsage = [...assistants].reverse().find((m) => m.stopReason !== "error" && m.stopReason !== "aborted")?.usage;
    const contextWindow = this.agent.model.contextWindow;
    const contextTokens = lastUsage ? lastUsage.totalTokens : null;
    return {
      sessionId: this.sessionId,
      userMessages: messages.filter((m) => m.role === "user").length,
      assistantMessages: assistants.length,
      toolCalls: assistants.reduce((n, m) => n + m.content.filter((c) => c.type === "toolCall").length, 0),
      toolResults: messages.filter((m) => m.role === "toolResult").length,
      totalMessages: messages.length,
      tokens,
      cost,
      contextUsage: {
        tokens: contextTokens,
        contextWindow,
        percent: contextTokens === null ? null : (contextTokens / contextWindow) * 100,
      },
    };
  }

  /** Text of the last assistant message, or null. */
  lastAssistantText(): string | null {
    for (let i = this.agent.messages.length - 1; i >= 0; i--) {
      const m = this.agent.messages[i];
      if (m.role === "assistant") {
        return m.content
          .filter((c) => c.type === "text")
          .map((c) => (c as { text: string }).text)
          .join("");
      }
    }
    return null;
  }

  setSessionName(name: string): void {
    this.sessionName = name;
  }

  /** Messages of the conversation, as `get_messages` returns them. */
  messages(): AgentMessage[] {
    return this.agent.messages;
  }

  /** Abort the run and any bash command; resolves when the run has ended. */
  async shutdown(): Promise<void> {
    this.abortBash();
    await this.agent.abort();
  }
}
