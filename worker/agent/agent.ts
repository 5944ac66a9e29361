/**
 * The stateful agent: conversation, model settings, the steering and follow-up
 * queues and the one run that may be in progress. Modes (rpc, print, interactive)
 * drive it; it reports everything through `subscribe`.
 */
import type {
  AgentMessage,
  ImageContent,
  Model,
  TextContent,
  ThinkingLevel,
  UserMessage,
} from "../../shared/schema/messages.js";
import type { WorkerEvent } from "../../shared/schema/events.js";
import type { AgentTool, Provider } from "../types.js";
import { runAgentLoop, type LoopConfig, type ToolCallDecision } from "./loop.js";
import { toLlmMessages } from "./to-llm.js";

/** How queued messages are released: all at once or one per turn. */
export type QueueMode = "all" | "one-at-a-time";

/** What the agent needs from its host: everything that is not conversation state. */
export interface AgentHost {
  cwd: string;
  provider: (model: Model) => Provider;
  apiKey: (model: Model) => string | undefined;
  systemPrompt: () => string;
  tools: () => AgentTool[];
  transformContext?: LoopConfig["transformContext"];
  beforeToolCall?: (call: { id: string; name: string }, args: Record<string, unknown>) => Promise<ToolCallDecision | undefined>;
  afterToolCall?: LoopConfig["afterToolCall"];
  onContextOverflow?: () => Promise<boolean>;
  shouldStop?: () => boolean;
  onTurnEnd?: () => Promise<void>;
  /** Before the first turn of a run (extensions' `before_agent_start`). */
  beforeRun?: (prompts: AgentMessage[]) => Promise<void>;
  /** After `agent_end` of a run. */
  afterRun?: (runMessages: AgentMessage[]) => Promise<void>;
}

/** Initial settings. */
export interface AgentSettings {
  model: Model;
  thinkingLevel: ThinkingLevel;
  steeringMode?: QueueMode;
  followUpMode?: QueueMode;
  autoRetry?: boolean;
  retryMaxAttempts?: number;
  retryBaseDelayMs?: number;
}

/** A user message from text and optional images, as pi builds it. */
export function userMessage(text: string, images?: ImageContent[]): UserMessage {
  const content: (TextContent | ImageContent)[] = [{ type: "text", text }];
  if (images) content.push(...images);
  return { role: "user", content, timestamp: Date.now() };
}

function messageText(m: AgentMessage): string {
  if (m.role !== "user") return "";
  if (typeof m.content === "string") return m.content;
  return m.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

/** Raised when a prompt arrives while a run is in progress and no queue behaviour was given. */
export class AgentBusyError extends Error {
  constructor() {
    super("Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.");
  }
}

/** One agent: at most one run at a time, queues for messages that arrive meanwhile. */
export class Agent {
  messages: AgentMessage[] = [];
  model: Model;
  thinkingLevel: ThinkingLevel;
  steeringMode: QueueMode;
  followUpMode: QueueMode;
  autoRetry: boolean;
  retryMaxAttempts: number;
  retryBaseDelayMs: number;

  private steering: AgentMessage[] = [];
  private followUps: AgentMessage[] = [];
  private run: { controller: AbortController; done: Promise<void> } | null = null;
  private retrySkip: AbortController | null = null;
  private readonly listeners = new Set<(event: WorkerEvent) => void>();

  constructor(
    private readonly host: AgentHost,
    settings: AgentSettings,
  ) {
    this.model = settings.model;
    this.thinkingLevel = settings.thinkingLevel;
    this.steeringMode = settings.steeringMode ?? "one-at-a-time";
    this.followUpMode = settings.followUpMode ?? "one-at-a-time";
    this.autoRetry = settings.autoRetry ?? true;
    this.retryMaxAttempts = settings.retryMaxAttempts ?? 3;
    this.retryBaseDelayMs = settings.retryBaseDelayMs ?? 2000;
  }

  /** Listen to every event; listeners run synchronously in registration order. */
  subscribe(listener: (event: WorkerEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Send an event to every listener (also used by the host for session-level events). */
  emit(event: WorkerEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  get isStreaming(): boolean {
    return this.run !== null;
  }

  get pendingMessageCount(): number {
    return this.steering.length + this.followUps.length;
  }

  /** Texts waiting in the queues, for `queue_update` and UIs. */
  queues(): { steering: string[]; followUp: string[] } {
    return { steering: this.steering.map(messageText), followUp: this.followUps.map(messageText) };
  }

  /**
   * Start a run with these messages. Returns once the run was accepted; the promise
   * in `done` settles after `agent_end`. Throws `AgentBusyError` while a run is going.
   */
  start(prompts: AgentMessage[]): { done: Promise<void> } {
    if (this.run) throw new AgentBusyError();
    const controller = new AbortController();
    const done = this.execute(prompts, controller).finally(() => {
      this.run = null;
    });
    this.run = { controller, done };
    return { done };
  }

  /** Queue a steering message (delivered after the current turn's tool calls). */
  steer(message: AgentMessage): void {
    this.steering.push(message);
    this.emitQueue();
  }

  /** Queue a follow-up (delivered when the agent would otherwise stop). */
  followUp(message: AgentMessage): void {
    this.followUps.push(message);
    this.emitQueue();
  }

  /** Abort the run (model stream and tools, through one signal); resolves after `agent_end`. */
  async abort(): Promise<void> {
    const run = this.run;
    if (!run) return;
    run.controller.abort();
    await run.done;
  }

  /** Stop waiting before the next automatic retry; the run then ends with the error. */
  abortRetry(): void {
    this.retrySkip?.abort();
  }

  /** Resolves when no run is in progress. */
  async waitForIdle(): Promise<void> {
    while (this.run) await this.run.done;
  }

  /** Drop queued messages (used when a session is replaced). */
  clearQueues(): void {
    if (this.steering.length === 0 && this.followUps.length === 0) return;
    this.steering = [];
    this.followUps = [];
    this.emitQueue();
  }

  private emitQueue(): void {
    this.emit({ type: "queue_update", ...this.queues() });
  }

  private take(queue: "steering" | "followUps", mode: QueueMode): AgentMessage[] {
    return mode === "all" ? this[queue].splice(0) : this[queue].splice(0, 1);
  }

  private async execute(prompts: AgentMessage[], controller: AbortController): Promise<void> {
    // Let the caller answer "accepted" before the first event of the run goes out.
    await new Promise((resolve) => setImmediate(resolve));
    const host = this.host;
    await host.beforeRun?.(prompts);
    const config: LoopConfig = {
      provider: () => host.provider(this.model),
      model: () => this.model,
      thinkingLevel: () => this.thinkingLevel,
      systemPrompt: host.systemPrompt,
      tools: host.tools,
      apiKey: () => host.apiKey(this.model),
      cwd: host.cwd,
      signal: controller.signal,
      retry: () => {
        this.retrySkip = new AbortController();
        return {
          enabled: this.autoRetry,
          maxAttempts: this.retryMaxAttempts,
          baseDelayMs: this.retryBaseDelayMs,
          skipSignal: () => this.retrySkip?.signal,
        };
      },
      takeSteering: () => this.take("steering", this.steeringMode),
      takeFollowUps: () => this.take("followUps", this.followUpMode),
      onInject: (_messages, from) => {
        if (from !== "prompt") this.emitQueue();
      },
      toLlm: toLlmMessages,
      transformContext: host.transformContext,
      beforeToolCall: host.beforeToolCall,
      afterToolCall: host.afterToolCall,
      onContextOverflow: host.onContextOverflow,
      shouldStop: host.shouldStop,
      onTurnEnd: host.onTurnEnd,
    };
    const runMessages = await runAgentLoop(this.messages, prompts, config, (event) => this.emit(event));
    await host.afterRun?.(runMessages);
  }
}
