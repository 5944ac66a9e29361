/**
 * The event gate: the order in which the agent's events leave the worker when extensions
 * listen to them, as pi orders them. An event an extension handles goes out once its
 * handlers are done (what they show, a dialog included, comes first) and later agent
 * events wait behind it; the run itself never waits for those handlers (abort is answered
 * and the agent is idle when its loop ends). The gate also keeps the `agent_end` window:
 * what the first agent_end handler sends before its first wait belongs to the ended run
 * (queued), what it sends later starts a new run once that run settled.
 */
import type { WorkerEvent } from "../../shared/schema/events.js";
import type { ExtensionHooks } from "../extensions/hooks.js";
import type { ExtensionEvent } from "../extensions/types.js";

/** What the gate needs of the session it orders events for. */
export interface EventGateHost {
  /** The extensions loaded now (a reload replaces them). */
  extensions(): ExtensionHooks;
  /** The event leaves the worker; it may throw (an event that cannot be serialized). */
  send(event: WorkerEvent): void;
  /** Tell a human (an event that could not be sent). */
  warn(message: string): void;
  /** The agent's run in progress, if any (`Agent.running`). */
  running(): Promise<void> | undefined;
}

/** Orders the agent's events behind the extensions' handlers of them (see the file's comment). */
export class EventGate {
  /** The last agent event waiting for extension handlers (its own or an earlier one's); null when none waits. */
  private held: Promise<void> | null = null;
  /** Settles once the last run's agent_end went out (after its handlers, when an extension has one). */
  private agentEndOut: Promise<void> = Promise.resolve();
  /** The run whose loop emitted its agent_end (it takes no more messages), while that run has not settled. */
  private endedRun: Promise<void> | undefined;
  /**
   * The first agent_end handler is running up to its first wait: pi's run is not over
   * until then, so what it sends is queued as during the run.
   */
  private endWindow = false;
  /** pi's turn index of turn events, counted in event order from each agent_start. */
  private turnIndex = 0;

  constructor(private readonly host: EventGateHost) {}

  /**
   * An agent event (already persisted, its retry decided): out at once when no extension
   * handles it and nothing is held, else after the handlers of it and of the events before it.
   */
  pass(event: WorkerEvent): void {
    if (event.type === "agent_end") this.endedRun = this.host.running();
    const seen = this.extensionEventOf(event);
    if (!seen && !this.held) {
      try {
        this.host.send(event);
      } catch (err) {
        // As on the held path: an event that cannot be sent is reported, and the run goes on.
        this.reportUnsent(event, err);
      }
      if (event.type === "agent_end") this.agentEndOut = Promise.resolve();
      return;
    }
    const ending = event.type === "agent_end";
    const begun = () => {
      if (ending) this.endWindow = false;
    };
    const next = (this.held ?? Promise.resolve())
      .then(() => {
        if (!seen) return undefined;
        if (ending) this.endWindow = true;
        return this.host.extensions().notify(seen, begun);
      })
      .catch(() => undefined)
      .then(() => {
        begun();
        this.host.send(event);
      })
      // An event that cannot be sent (details holding a BigInt) is reported; the events behind it still go out.
      .catch((err: unknown) => this.reportUnsent(event, err));
    this.held = next;
    if (ending) this.agentEndOut = next;
    void next.then(() => {
      if (this.held === next) this.held = null;
    });
  }

  /** pi's turn index of the turn whose turn_end is next (the boundary's handlers see it before the event). */
  get currentTurnIndex(): number {
    return this.turnIndex;
  }

  /** Settles once the last run's agent_end went out: a run is over for its callers only then. */
  get agentEndSent(): Promise<void> {
    return this.agentEndOut;
  }

  /** Settles once every event held so far went out. */
  drained(): Promise<void> {
    return this.held ?? Promise.resolve();
  }

  /**
   * The first agent_end handler has not reached its first wait yet: a message an extension
   * sends now is queued in the ended run, as in pi.
   */
  get inEndWindow(): boolean {
    return this.endWindow;
  }

  /**
   * Before an extension's message that wants a turn is delivered: the run whose loop ended
   * (its loop takes no more messages) is waited for, so the message starts a new run once
   * that one settled. Nothing to wait for (undefined) inside the agent_end window, or when
   * the agent's run is another one (a before_agent_start handler awaiting its own send).
   */
  endedRunToAwait(triggerTurn: boolean): Promise<void> | undefined {
    if (this.endWindow || !triggerTurn || !this.endedRunGoing()) return undefined;
    return (async () => {
      while (this.endedRunGoing()) await this.endedRun;
    })();
  }

  /** As pi 1.6: `agent_settled` goes out after the extensions' handlers of it (what they show comes first). */
  settled(aborted: boolean): void {
    const extensions = this.host.extensions();
    if (!extensions.has("agent_settled")) return this.host.send({ type: "agent_settled", aborted });
    void extensions
      .notify({ type: "agent_settled", aborted })
      .catch(() => undefined)
      .then(() => this.host.send({ type: "agent_settled", aborted }));
  }

  private endedRunGoing(): boolean {
    return this.endedRun !== undefined && this.host.running() === this.endedRun;
  }

  private reportUnsent(event: WorkerEvent, err: unknown): void {
    this.host.warn(`could not send the ${event.type} event: ${err instanceof Error ? err.message : String(err)}`);
  }

  /**
   * An agent event as the extensions see it (pi's turn events carry a turn index), or
   * undefined when no extension handles it. message_end went to them before it was
   * emitted (they may replace the message); session-level events are not theirs.
   */
  private extensionEventOf(event: WorkerEvent): ExtensionEvent | undefined {
    const ext = this.host.extensions();
    switch (event.type) {
      case "agent_start":
        this.turnIndex = 0;
        return ext.has("agent_start") ? { type: "agent_start" } : undefined;
      case "turn_start":
        return ext.has("turn_start")
          ? { type: "turn_start", turnIndex: this.turnIndex, timestamp: Date.now() }
          : undefined;
      case "turn_end":
        // Its handlers ran as the turn_end boundary, before the event (worker/core/turn-boundary.ts).
        this.turnIndex++;
        return undefined;
      case "agent_end":
        return ext.has("agent_end") ? { type: "agent_end", messages: event.messages } : undefined;
      case "message_start":
      case "message_update":
      case "tool_execution_start":
      case "tool_execution_update":
      case "tool_execution_end":
        return ext.has(event.type) ? (event as unknown as ExtensionEvent) : undefined;
      default:
        return undefined;
    }
  }
}
