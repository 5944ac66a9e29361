/**
 * Fan-out of agent events to subscribers. Publishing never waits on a subscriber:
 * each has its own bounded queue, and one that falls behind by more than its buffer
 * loses events, is told so with a `lagged` notice, and continues from the present.
 */
import { withWire } from "../shared/jsonl.js";
import type { EventMessage, IpcStreamMessage, LaggedMessage } from "../shared/schema/ipc.js";
import type { LoggedEvent, SeqGap } from "./event-log.js";

/** Queued messages past which a subscriber's messages no longer carry the shared wire text. */
const WIRE_QUEUE_LIMIT = 64;

/** Where a subscription delivers; a returned promise is awaited before the next message (back-pressure). */
export interface SubscriberSink {
  write(message: IpcStreamMessage): Promise<void> | void;
}

/** Options of one subscription. */
export interface SubscribeOptions {
  /** Agent names to follow; `null` follows every agent, including ones spawned later. */
  agents: ReadonlySet<string> | null;
  /** Replay events with `seq > since` still held in memory; absent means live events only. */
  since?: number;
  sink: SubscriberSink;
  /** Messages queued before the subscriber counts as lagging (default 10,000). */
  maxBuffered?: number;
}

/** Source of an agent's past events for `since`. */
export type HistorySource = (agent: string, since: number) => { events: LoggedEvent[]; gap: SeqGap | null } | undefined;

/** A live subscription; `close()` stops delivery and frees its queue. */
export class Subscription {
  private queue: IpcStreamMessage[] = [];
  private head = 0;
  private readonly openGaps = new Map<string, LaggedMessage>();
  private pumping = false;
  private closedFlag = false;

  constructor(
    readonly agents: ReadonlySet<string> | null,
    private readonly sink: SubscriberSink,
    private readonly maxBuffered: number,
    private readonly onClose: (sub: Subscription) => void,
  ) {}

  /** True once closed, by the caller or after the sink failed. */
  get closed(): boolean {
    return this.closedFlag;
  }

  /** Messages waiting to be written. */
  get buffered(): number {
    return this.queue.length - this.head;
  }

  /** Whether this subscription follows `agent`. */
  follows(agent: string): boolean {
    return this.agents === null || this.agents.has(agent);
  }

  /** Queue a replayed gap or event without the lag check (history is bounded by the ring). */
  replay(agent: string, gap: SeqGap | null, events: readonly LoggedEvent[]): void {
    if (gap) this.queue.push({ type: "lagged", agent, from: gap.from, to: gap.to });
    for (const e of events) this.queue.push({ type: "event", agent, seq: e.seq, at: e.at, event: e.event });
    this.pump();
  }

  /** Queue a live event; past the buffer it is dropped and accounted for in a `lagged` notice. */
  offer(agent: string, entry: LoggedEvent, wire?: string): void {
    if (this.closedFlag) return;
    const gap = this.openGaps.get(agent);
    if (gap) {
      // Still behind for this agent: the notice is queued but not yet written, so widen it.
      gap.to = entry.seq;
      return;
    }
    if (this.buffered >= this.maxBuffered) {
      const notice: LaggedMessage = { type: "lagged", agent, from: entry.seq, to: entry.seq };
      this.openGaps.set(agent, notice);
      this.queue.push(notice);
      return;
    }
    const message: EventMessage = { type: "event", agent, seq: entry.seq, at: entry.at, event: entry.event };
    // The shared wire text saves serialising again, but it is extra memory per queued
    // message: a subscriber that is behind queues plain messages instead.
    this.queue.push(wire === undefined || this.buffered >= WIRE_QUEUE_LIMIT ? message : withWire(message, wire));
    this.pump();
  }

  close(): void {
    if (this.closedFlag) return;
    this.closedFlag = true;
    this.queue = [];
    this.head = 0;
    this.openGaps.clear();
    this.onClose(this);
  }

  private pump(): void {
    if (this.pumping || this.closedFlag) return;
    this.pumping = true;
    void this.drain();
  }

  private async drain(): Promise<void> {
    try {
      while (!this.closedFlag && this.head < this.queue.length) {
        const message = this.queue[this.head++];
        // Once its notice is on the way out, the gap is final and new events may flow again.
        if (message.type === "lagged" && this.openGaps.get(message.agent) === message) this.openGaps.delete(message.agent);
        if (this.head > 1024 && this.head * 2 > this.queue.length) {
          this.queue = this.queue.slice(this.head);
          this.head = 0;
        }
        const pending = this.sink.write(message);
        if (pending) await pending;
      }
    } catch {
      this.close();
    } finally {
      this.pumping = false;
    }
  }
}

/** All subscriptions of a supervisor. */
export class SubscriberHub {
  private readonly subs = new Set<Subscription>();

  constructor(private readonly history: HistorySource) {}

  /** Number of open subscriptions. */
  get size(): number {
    return this.subs.size;
  }

  /**
   * Start a subscription. With `since`, the held history of each followed agent
   * (`knownAgents` for "every agent") is queued first, then live events follow with
   * no gap or duplicate, because publishing happens on this same thread.
   */
  subscribe(opts: SubscribeOptions, knownAgents: readonly string[]): Subscription {
    const sub = new Subscription(opts.agents, opts.sink, opts.maxBuffered ?? 10_000, (s) => this.subs.delete(s));
    if (opts.since !== undefined) {
      const names = opts.agents ? [...opts.agents] : knownAgents;
      for (const agent of names) {
        const past = this.history(agent, opts.since);
        if (past) sub.replay(agent, past.gap, past.events);
      }
    }
    this.subs.add(sub);
    return sub;
  }

  /**
   * Offer an event to every subscriber that follows `agent`. With `raw` (the event's
   * JSON from the worker), the wire text is built once, for the first follower, and
   * shared by all of them; with no follower nothing is built.
   */
  publish(agent: string, entry: LoggedEvent, raw?: string): void {
    let wire: string | undefined;
    for (const sub of this.subs) {
      if (!sub.follows(agent)) continue;
      if (raw !== undefined) wire ??= `{"type":"event","agent":${JSON.stringify(agent)},"seq":${entry.seq},"at":${entry.at},"event":${raw}}`;
      sub.offer(agent, entry, wire);
    }
  }

  /** Close every subscription (shutdown). */
  closeAll(): void {
    for (const sub of [...this.subs]) sub.close();
  }
}
