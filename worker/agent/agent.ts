/**
 * The stateful agent: conversation, model settings, the steering and follow-up
 * queues and the one run that may be in progress. It knows nothing of sessions,
 * retries or extensions (the session layer drives it through `AgentHost` hooks);
 * it reports the events of its runs through `subscribe`.
 */
import type {
  AgentMessage,
  ImageContent,
  Model,
  TextContent,
  ThinkingLevel,
  UserMessage,
} from "../../shared/schema/messages.js";
import type { AgentEvent } from "../../shared/schema/events.js";
import { runAgentLoop } from "./loop.js";
import { toLlmMessages } from "./to-llm.js";
import type { AgentHost, AgentSettings, LoopConfig, QueueMode } from "./types.js";

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

  private steering: AgentMessage[] = [];
  private followUps: AgentMessage[] = [];
  private run: { controller: AbortController; done: Promise<void> } | null = null;
  private readonly listeners = new Set<(event: AgentEvent) => void>();

  constructor(
    private readonly host: AgentHost,
    settings: AgentSettings,
  ) {
    this.model = settings.model;
    this.thinkingLevel = settings.thinkingLevel;
    this.steeringMode = settings.steeringMode ?? "one-at-a-time";
    this.followUpMode = settings.followUpMode ?? "one-at-a-time";
  }

  /** Listen to the events of every run; listeners run synchronously in registration order. */
  subscribe(listener: (event: AgentEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: AgentEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  get isStreaming(): boolean {
    return this.run !== null;
  }

  /** The completion of the run in progress (it settles after `afterRun`), if any. */
  get running(): Promise<void> | undefined {
    return this.run?.done;
  }

  /** The signal of the run in progress (aborts with `abort`), if any. */
  get signal(): AbortSignal | undefined {
    return this.run?.controller.signal;
  }

  get pendingMessageCount(): number {
    return this.steering.length + this.followUps.length;
  }

  /** The queued messages themselves (steering first), as they will enter the context. */
  queuedMessages(): AgentMessage[] {
    return [...this.steering, ...this.followUps];
  }

  /** Take every queued message (steering first), to start a run with them. */
  takeQueued(): AgentMessage[] {
    const taken = [...this.steering.splice(0), ...this.followUps.splice(0)];
    if (taken.length > 0) this.emitQueue();
    return taken;
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
    this.host.onQueueChange?.();
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
      provider: (model) => host.provider(model),
      model: () => this.model,
      thinkingLevel: () => this.thinkingLevel,
      systemPrompt: host.systemPrompt,
      tools: host.tools,
      callableTools: host.callableTools,
      apiKey: (model) => host.apiKey(model),
      cwd: host.cwd,
      signal: controller.signal,
      takeSteering: () => this.take("steering", this.steeringMode),
      takeFollowUps: () => this.take("followUps", this.followUpMode),
      onInject: host.onInject,
      onDeliver: () => this.emitQueue(),
      toLlm: toLlmMessages,
      transformContext: host.transformContext,
      beforeToolCall: host.beforeToolCall,
      afterToolCall: host.afterToolCall,
      afterResponse: host.afterResponse,
      prepareNextTurn: host.prepareNextTurn,
      finishTurn: host.finishTurn,
      finalizeMessage: host.finalizeMessage,
      declareSystem: host.declareSystem,
      sessionId: host.sessionId,
      onPayload: host.onPayload,
      onResponse: host.onResponse,
      transformFullContext: host.transformFullContext,
      streamEvents: host.streamEvents,
      routeRequest: host.routeRequest,
      pace: host.pace,
    };
    const runMessages = await runAgentLoop(this.messages, prompts, config, (event) => this.emit(event));
    await host.afterRun?.(runMessages);
  }
}
