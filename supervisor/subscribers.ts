/**
 * Fan-out of agent events to subscribers. Publishing never waits on a subscriber:
 * each has its own queue bounded in messages and bytes, and one that falls behind by more than that
 * loses events, is told so with a `lagged` notice, and continues from the present.
 */
import type { EventMessage, IpcStreamMessage, LaggedMessage } from "../shared/schema/ipc.js";
import type { LoggedEvent, Replay, SeqGap } from "./event-log.js";

/** Default bounds of one subscriber's queue: messages, and bytes of their JSON (whichever is reached first). */
export const DEFAULT_SUBSCRIBER_MESSAGES = 10_000;
export const DEFAULT_SUBSCRIBER_BYTES = 16 * 1024 * 1024;
/** Bytes of a message's envelope around its event (`{"type":"event","agent":…,"seq":…,"at":…,"event":`). */
const ENVELOPE_BYTES = 64;

/** Characters of JSON lines handed to a text sink in one write at most. */
const TEXT_BATCH_CHARS = 256 * 1024;

/**
 * Where a subscription delivers; a returned promise is awaited before the next message
 * (back-pressure). A sink with `writeLines` gets everything queued as JSON lines in one
 * call (each line ends in a newline), so a socket sees one write per batch, and live
 * events from a worker reach it as text built once for every subscriber.
 */
export interface SubscriberSink {
  write(message: IpcStreamMessage): Promise<void> | void;
  writeLines?(text: string): Promise<void> | void;
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
  /** Bytes of queued event JSON before the subscriber counts as lagging (default 16 MiB). */
  maxBufferedBytes?: number;
}

/** Source of an agent's past events for `since`. */
export type HistorySource = (agent: string, since: number) => Replay | undefined;

/**
 * A live subscription; `close()` stops delivery and frees its queue. A queued item is a
 * message, or for a text sink the JSON line of a live event (without its newline).
 */
export class Subscription {
  private queue: (IpcStreamMessage | string)[] = [];
  /** Bytes of each queued message, same index as `queue`. */
  private sizes: number[] = [];
  private head = 0;
  private queuedBytes = 0;
  private readonly openGaps = new Map<string, LaggedMessage>();
  private pumping = false;
  private closedFlag = false;
  /** The sink takes JSON lines (`writeLines`): live events are queued as their shared text. */
  readonly takesText: boolean;

  constructor(
    readonly agents: ReadonlySet<string> | null,
    private readonly sink: SubscriberSink,
    private readonly maxBuffered: number,
    private readonly maxBufferedBytes: number,
    private readonly onClose: (sub: Subscription) => void,
    /** Where subscriptions of one hub share the text of a batch they all write. */
    private readonly batchText: BatchText = new BatchText(),
  ) {
    this.takesText = typeof sink.writeLines === "function";
  }

  /** True once closed, by the caller or after the sink failed. */
  get closed(): boolean {
    return this.closedFlag;
  }

  /** Messages waiting to be written. */
  get buffered(): number {
    return this.queue.length - this.head;
  }

  /** Bytes of the event JSON waiting to be written. */
  get bufferedBytes(): number {
    return this.queuedBytes;
  }

  /** Whether this subscription follows `agent`. */
  follows(agent: string): boolean {
    return this.agents === null || this.agents.has(agent);
  }

  /** Queue replayed events, each gap among them where it stands, without the lag check (history is bounded by the ring). */
  replay(agent: string, { events, gaps }: Replay): void {
    let g = 0;
    for (const e of events) {
      while (g < gaps.length && gaps[g]!.from < e.seq) this.enqueue(laggedNotice(agent, gaps[g++]!), 0);
      this.enqueue({ type: "event", agent, seq: e.seq, at: e.at, event: e.event }, JSON.stringify(e.event).length + ENVELOPE_BYTES);
    }
    while (g < gaps.length) this.enqueue(laggedNotice(agent, gaps[g++]!), 0);
    this.pump();
  }

  /**
   * Queue a live gap: seqs of `agent` no one will get (lost before the disk had them).
   * Behind already, the open notice widens over it; else it goes out in its place.
   */
  offerGap(agent: string, gap: SeqGap, deliver = true): void {
    if (this.closedFlag) return;
    const open = this.openGaps.get(agent);
    if (open) {
      open.to = Math.max(open.to, gap.to);
      return;
    }
    this.enqueue(laggedNotice(agent, gap), 0);
    if (deliver) this.pump();
  }

  /**
   * Queue live event `seq` of `agent` — its message, or its JSON line for a text sink —
   * of `bytes`; past the buffer (messages or bytes) it is dropped and accounted for in a
   * `lagged` notice. One event always fits an empty queue. With `deliver` false the
   * caller delivers later (`deliver()`), after queueing a whole batch.
   */
  offer(agent: string, seq: number, item: EventMessage | string, bytes: number, deliver = true): void {
    if (this.closedFlag) return;
    const gap = this.openGaps.get(agent);
    if (gap) {
      // Still behind for this agent: the notice is queued but not yet written, so widen it.
      gap.to = seq;
      return;
    }
    if (this.buffered >= this.maxBuffered || (this.buffered > 0 && this.queuedBytes + bytes > this.maxBufferedBytes)) {
      const notice: LaggedMessage = { type: "lagged", agent, from: seq, to: seq };
      this.openGaps.set(agent, notice);
      this.enqueue(notice, 0);
      return;
    }
    this.enqueue(item, bytes);
    if (deliver) this.pump();
  }

  /** Start writing what is queued (after offers with `deliver` false). */
  deliver(): void {
    if (this.head < this.queue.length) this.pump();
  }

  close(): void {
    if (this.closedFlag) return;
    this.closedFlag = true;
    this.queue = [];
    this.sizes = [];
    this.head = 0;
    this.queuedBytes = 0;
    this.openGaps.clear();
    this.onClose(this);
  }

  private enqueue(item: IpcStreamMessage | string, bytes: number): void {
    this.queue.push(item);
    this.sizes.push(bytes);
    this.queuedBytes += bytes;
  }

  private pump(): void {
    if (this.pumping || this.closedFlag) return;
    this.pumping = true;
    this.drain();
  }

  /** The next queued item, taken off the queue. */
  private take(): IpcStreamMessage | string {
    const item = this.queue[this.head];
    this.queuedBytes -= this.sizes[this.head];
    this.head++;
    // Once its notice is on the way out, the gap is final and new events may flow again.
    if (typeof item !== "string" && item.type === "lagged" && this.openGaps.get(item.agent) === item) this.openGaps.delete(item.agent);
    return item;
  }

  private compactQueue(): void {
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.sizes.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.sizes = this.sizes.slice(this.head);
      this.head = 0;
    }
  }

  /**
   * Write until the queue is empty, synchronously while the sink takes everything at
   * once; a returned promise pauses it until the sink is ready (back-pressure). A sink
   * that throws or rejects ends the subscription.
   */
  private drain(): void {
    try {
      while (!this.closedFlag && this.head < this.queue.length) {
        const pending = this.writeNext();
        if (pending) {
          pending.then(
            () => this.drain(),
            () => {
              this.pumping = false;
              this.close();
            },
          );
          return;
        }
      }
    } catch {
      this.close();
    }
    this.pumping = false;
  }

  /** Hand the sink its next write: everything queued as lines for a text sink, one message otherwise. */
  private writeNext(): Promise<void> | void {
    if (this.takesText) {
      const head = this.head;
      let end = head;
      for (let chars = 0; end < this.queue.length && chars < TEXT_BATCH_CHARS; end++) chars += this.sizes[end] + 1;
      const text = this.batchText.of(this.queue, head, end);
      while (this.head < end) this.take();
      this.compactQueue();
      return this.sink.writeLines!(text);
    }
    const item = this.take() as IpcStreamMessage;
    this.compactQueue();
    return this.sink.write(item);
  }
}

/** The `lagged` notice of a gap; a lost one says so (`reason: "not_logged"`). */
function laggedNotice(agent: string, gap: SeqGap): LaggedMessage {
  return gap.lost ? { type: "lagged", agent, from: gap.from, to: gap.to, reason: "not_logged" } : { type: "lagged", agent, from: gap.from, to: gap.to };
}

/**
 * The text of the last batch a text sink was handed, for the next subscription whose
 * batch is the very same items: subscribers that follow the same agents get the same
 * shared lines, and the text is built (one flat string) once for all of them instead of
 * once per subscriber.
 */
export class BatchText {
  private items: (IpcStreamMessage | string)[] = [];
  private text = "";

  /** JSON lines of `queue[head, end)`, each ending in a newline. */
  of(queue: readonly (IpcStreamMessage | string)[], head: number, end: number): string {
    const n = end - head;
    if (n === this.items.length && n > 0) {
      let same = true;
      for (let i = 0; i < n && same; i++) same = queue[head + i] === this.items[i];
      if (same) return this.text;
    }
    const lines: string[] = new Array(n + 1);
    for (let i = 0; i < n; i++) {
      const item = queue[head + i]!;
      lines[i] = typeof item === "string" ? item : JSON.stringify(item);
    }
    lines[n] = "";
    this.items = queue.slice(head, end);
    this.text = lines.join("\n");
    return this.text;
  }

  /** Forget the last batch (its lines are written). */
  clear(): void {
    this.items = [];
    this.text = "";
  }
}

/** All subscriptions of a supervisor. */
export class SubscriberHub {
  private readonly subs = new Set<Subscription>();
  private readonly prefixes = new Map<string, string>();
  private readonly batchText = new BatchText();

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
    const sub = new Subscription(opts.agents, opts.sink, opts.maxBuffered ?? DEFAULT_SUBSCRIBER_MESSAGES, opts.maxBufferedBytes ?? DEFAULT_SUBSCRIBER_BYTES, (s) => this.subs.delete(s), this.batchText);
    if (opts.since !== undefined) {
      const names = opts.agents ? [...opts.agents] : knownAgents;
      for (const agent of names) {
        const past = this.history(agent, opts.since);
        if (past) sub.replay(agent, past);
      }
    }
    this.subs.add(sub);
    return sub;
  }

  /**
   * Offer an event to every subscriber that follows `agent`. With `raw` (the event's
   * JSON from the worker), its wire line is built once, for the first text sink that
   * follows, and shared by all of them; its message likewise for the other sinks (they
   * must not change it). With no follower nothing is built. With `deliver` false the
   * caller ends the batch with `deliver()`.
   */
  publish(agent: string, entry: LoggedEvent, raw?: string, deliver = true): void {
    let wire: string | undefined;
    let message: EventMessage | undefined;
    let bytes: number | undefined;
    for (const sub of this.subs) {
      if (!sub.follows(agent)) continue;
      if (raw !== undefined && sub.takesText) {
        wire ??= `${this.prefixOf(agent)}"seq":${entry.seq},"at":${entry.at},"event":${raw}}`;
        bytes ??= wire.length;
        sub.offer(agent, entry.seq, wire, bytes, deliver);
        continue;
      }
      message ??= { type: "event", agent, seq: entry.seq, at: entry.at, event: entry.event };
      bytes ??= raw !== undefined ? raw.length + ENVELOPE_BYTES : JSON.stringify(entry.event).length + ENVELOPE_BYTES;
      sub.offer(agent, entry.seq, message, bytes, deliver);
    }
  }

  /** Tell every subscriber that follows `agent` of seqs it will never get (lost before the disk had them). */
  publishGap(agent: string, gap: SeqGap, deliver = true): void {
    for (const sub of this.subs) if (sub.follows(agent)) sub.offerGap(agent, gap, deliver);
  }

  /** Start delivery of everything published with `deliver` false. */
  deliver(): void {
    for (const sub of this.subs) sub.deliver();
    this.batchText.clear();
  }

  /** `{"type":"event","agent":"NAME",`: the start of every wire line of an agent, built once. */
  private prefixOf(agent: string): string {
    let prefix = this.prefixes.get(agent);
    if (prefix === undefined) {
      prefix = `{"type":"event","agent":${JSON.stringify(agent)},`;
      this.prefixes.set(agent, prefix);
    }
    return prefix;
  }

  /** Close every subscription (shutdown). */
  closeAll(): void {
    for (const sub of [...this.subs]) sub.close();
  }
}
