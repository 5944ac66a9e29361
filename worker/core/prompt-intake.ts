/**
 * What comes into a session to be answered: prompts (an extension command or an `input`
 * handler may take them first), steering and follow-up messages, and the messages
 * extensions send (`sendUserMessage`, `sendMessage`) as pi delivers them. A prompt is
 * written to the session file before it is accepted, so one the disk refuses is refused,
 * not lost.
 */
import type { PromptDisposition } from "../../shared/schema/rpc.js";
import type { WorkerEvent } from "../../shared/schema/events.js";
import type { AgentMessage, ImageContent, SystemMessage } from "../../shared/schema/messages.js";
import { type Agent, AgentBusyError, userMessage } from "../agent/agent.js";
import type { ExtensionHooks } from "../extensions/hooks.js";
import type { DeliverAs } from "../extensions/host.js";
import { type SessionStore, SessionWriteError } from "../session/session-file.js";
import type { EventGate } from "./event-gate.js";
import type { RunSettling } from "./run-settling.js";

/** Room a queued message needs on disk beyond its JSON: the entry's own fields. */
const ENTRY_OVERHEAD_BYTES = 4096;

/** What became of a prompt: the run's completion when one started, whether a run is going, pi 1.6's disposition. */
export interface PromptOutcome {
  done?: Promise<void>;
  /** A run is going now, so its `agent_settled` follows (false after a command or input handler that started none). */
  running: boolean;
  disposition: PromptDisposition;
}

/** Who sent a prompt (an `input` handler's `source`). */
export type PromptSourceKind = "rpc" | "interactive" | "extension";

/** What the intake reads and calls of its session. */
export interface PromptIntakeHost {
  agent(): Agent;
  extensions(): ExtensionHooks;
  /** The session (kept in memory with `--no-session`). */
  store(): SessionStore;
  gate(): EventGate;
  runs(): RunSettling;
  isCompacting(): boolean;
  /** Why the current model cannot be called (no key), or undefined when it can. */
  missingKeyProblem(): string | undefined;
  /** `/skill:name` and `/template` expanded. */
  expandPrompt(text: string): string;
  /** What the context has yet to be told of the prompt and tools (pi 1.6's system message). */
  declareSystem(): SystemMessage | undefined;
  /** Write a message to the session as it keeps it. */
  persist(message: AgentMessage): void;
  /** pi 1.6's check before a prompt's run: compact a context already past the threshold. */
  compactBeforePrompt(): Promise<void>;
  emit(event: WorkerEvent): void;
}

/** A session's intake of prompts and messages. */
export class PromptIntake {
  /** Prompts written to the session when they were accepted, so their `message_end` does not write them twice. */
  private readonly persistedPrompts = new WeakSet<AgentMessage>();
  /** Custom messages queued for the next prompt (`deliverAs: "nextTurn"`). */
  private nextTurn: AgentMessage[] = [];
  /**
   * Extensions' `sendUserMessage` calls not yet delivered or refused (their `input` and
   * command hooks may still run): a command's prompt is answered once they are, so the
   * answer can say whether a run is going.
   */
  readonly pendingSends = new Set<Promise<void>>();

  constructor(private readonly host: PromptIntakeHost) {}

  /** Whether `message` was written when it was accepted (its `message_end` writes nothing). */
  wasPersisted(message: AgentMessage): boolean {
    return this.persistedPrompts.has(message);
  }

  /** The custom messages queued for the next prompt, taken. */
  takeNextTurn(): AgentMessage[] {
    return this.nextTurn.splice(0);
  }

  /**
   * Accept a prompt. `/name args` runs an extension command at once (even while
   * streaming). While a run is in progress a prompt needs a behaviour (`steer` or
   * `followUp`), else `AgentBusyError`.
   */
  async prompt(
    text: string,
    images?: ImageContent[],
    behavior?: "steer" | "followUp",
    source: PromptSourceKind = "rpc",
  ): Promise<PromptOutcome> {
    const { host } = this;
    const agent = host.agent();
    const command = /^\/([\w:-]+)(?:\s+([\s\S]*))?$/.exec(text.trim());
    // Only the sends this prompt's handlers make are awaited: one made earlier may wait on a
    // dialog (an input handler's confirm), which would hold this answer and the RPC queue.
    const before = new Set(this.pendingSends);
    if (command && (await host.extensions().runCommand(command[1], command[2] ?? "")))
      return this.afterHandlers(before);
    const input = await host.extensions().input(text, images, source);
    if (input.action === "handled") return this.afterHandlers(before);
    const message = userMessage(host.expandPrompt(input.text), input.images);
    if (host.runs().busy) {
      if (behavior !== "steer" && behavior !== "followUp") throw new AgentBusyError();
      this.checkPersistable(message);
      if (behavior === "steer") agent.steer(message);
      else agent.followUp(message);
      return { running: true, disposition: "queued" };
    }
    if (host.isCompacting()) throw new Error("the session is being compacted; try again when compaction_end arrives");
    const problem = host.missingKeyProblem();
    if (problem) throw new Error(problem);
    // As pi 1.6's _prepareRun: a context past the threshold (automatic compaction turned on
    // since, a resumed session) is compacted before the prompt joins it, before agent_start.
    await host.compactBeforePrompt();
    // A prompt is on disk before it is accepted: one the disk refuses is refused, not lost.
    // A message_end handler may replace it (pi persists the replacement): then it is
    // written at its message_end, once the disk was checked for room.
    // The prompt and tools it will be answered with are declared first, in pi 1.6's order
    // (a system message before the prompt in the file as in the run's events).
    const declared = host.declareSystem();
    const store = host.store();
    if (host.extensions().has("message_end")) {
      this.checkPersistable(message);
    } else {
      recordOrRefuse(() => {
        if (declared) store.append({ type: "message", message: declared });
        store.append({ type: "message", message });
      });
      if (declared) this.persistedPrompts.add(declared);
      this.persistedPrompts.add(message);
    }
    const runs = host.runs();
    return {
      done: declared ? runs.start(declared, message) : runs.start(message),
      running: true,
      disposition: "started",
    };
  }

  /**
   * Whether a run is going once the `sendUserMessage` calls a handler left pending were
   * delivered or refused (pi's `sendUserMessage` returns before its message starts a
   * run, so right after the handler nothing may run yet though a run is coming), and
   * that run's completion. `before` are the sends already pending when the prompt came:
   * not this prompt's, so not awaited.
   */
  private async afterHandlers(before: ReadonlySet<Promise<void>>): Promise<PromptOutcome & { disposition: "handled" }> {
    for (;;) {
      const mine = [...this.pendingSends].filter((p) => !before.has(p));
      if (mine.length === 0) break;
      await Promise.allSettled(mine);
    }
    const runs = this.host.runs();
    const latest = runs.latestRun;
    return runs.busy && latest
      ? { done: latest, running: true, disposition: "handled" }
      : { running: runs.busy, disposition: "handled" };
  }

  /** Queue a steering message; pi 1.6's disposition of it. */
  steer(text: string, images?: ImageContent[]): "queued" {
    const message = userMessage(this.host.expandPrompt(text), images);
    this.checkPersistable(message);
    this.host.agent().steer(message);
    return "queued";
  }

  /** Queue a follow-up; pi 1.6's disposition of it. */
  followUp(text: string, images?: ImageContent[]): "queued" {
    const message = userMessage(this.host.expandPrompt(text), images);
    this.checkPersistable(message);
    this.host.agent().followUp(message);
    return "queued";
  }

  /** `clear_queue`: drop the queued steering and follow-up messages, returning their texts; pi announces the (empty) queues either way. */
  clearQueue(): { steering: string[]; followUp: string[] } {
    const agent = this.host.agent();
    const queued = agent.queues();
    if (agent.pendingMessageCount > 0) agent.clearQueues();
    else this.host.emit({ type: "queue_update", steering: [], followUp: [] });
    return queued;
  }

  /** Refuse a queued message the session could not record (it is written when delivered). */
  private checkPersistable(message: AgentMessage): void {
    const store = this.host.store();
    recordOrRefuse(() => store.checkWritable(Buffer.byteLength(JSON.stringify(message)) + ENTRY_OVERHEAD_BYTES));
  }

  /** Queue a message an extension sent (`sendUserMessage`, `sendMessage`) as pi delivers it. */
  async deliver(message: AgentMessage, deliverAs: DeliverAs | undefined, triggerTurn: boolean): Promise<void> {
    if (deliverAs === "nextTurn") {
      this.nextTurn.push(message);
      return;
    }
    const { host } = this;
    const gate = host.gate();
    // As pi: a turn wanted after the loop ended (by an agent_end handler, past its first
    // wait) is a new run once this one settled; queued, it would wait in a loop that takes
    // no more messages. What the handler sends before its first wait is queued, as in pi.
    // Only the run whose loop ended is waited for: a run that started since (a before_agent_start
    // handler awaiting its own send) takes the message in its queue, as pi's would.
    const ended = gate.endedRunToAwait(triggerTurn);
    if (ended) await ended;
    const agent = host.agent();
    if (host.runs().busy || gate.inEndWindow) {
      if (deliverAs === "followUp") agent.followUp(message);
      else agent.steer(message);
      return;
    }
    if (!triggerTurn) {
      // Idle and no turn wanted: the message joins the conversation as it is.
      agent.messages.push(message);
      host.emit({ type: "message_start", message });
      host.persist(message);
      host.emit({ type: "message_end", message });
      return;
    }
    const problem = host.missingKeyProblem();
    if (problem) throw new Error(problem);
    void host.runs().start(message);
  }
}

/** Run a session write; a write the disk refused refuses the message, saying nothing was run. */
function recordOrRefuse(write: () => unknown): void {
  try {
    write();
  } catch (error) {
    if (error instanceof SessionWriteError) throw new Error(`message refused, nothing was run: ${error.message}`);
    throw error;
  }
}
