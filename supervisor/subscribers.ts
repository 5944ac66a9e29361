/**
 * Fan-out of agent events to subscribers. Publishing never waits on a subscriber:
 * each has its own queue bounded in messages and bytes, and one that falls behind by more than that
 * loses events, is told so with a `lagged` notice, and continues from the present.
 */
import type { EventMessage, IpcStreamMessage, LaggedMessage } from "../shared/schema/ipc.js";
import type { LoggedEvent, Replay, SeqGap } from "../shared/event-replay.js";
import { atPart } from "./at-part.js";

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
 * A live event from a worker, for text sinks: the pieces of its wire line
 * (`{"type":"event","agent":…,"seq":…,"at":…,"event":RAW}`), made once and shared by
 * every subscriber that follows its agent. The line itself is only ever built inside
 * the text of a whole batch (`BatchText`), so a routed event costs no string of its own.
 */
export class LiveLine {
  constructor(
    /** `{"type":"event","agent":"NAME","seq":`. */
    readonly prefix: string,
    readonly seq: number,
    /** `,"at":AT,"event":` (`atPart`). */
    readonly at: string,
    /** The event's JSON as the worker wrote it. */
    readonly raw: string,
  ) {}

  /** Characters of the line (without its newline), counted without building it. */
  get length(): number {
    return this.prefix.length + decimalChars(this.seq) + this.at.length + this.raw.length + 1;
  }
}

/** Characters of `n` in JSON. */
function decimalChars(n: number): number {
  if (!Number.isInteger(n) || n < 0 || n > Number.MAX_SAFE_INTEGER) return String(n).length;
  let d = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    d++;
  }
  return d;
}

/** A queued item: a message, or for a text sink a live event's line. */
type Queued = IpcStreamMessage | LiveLine;

/** A live subscription; `close()` stops delivery and frees its queue. */
export class Subscription {
  /**
   * Queued items: slots from `head` up to `tail`. Emptied by moving `tail` back, not by
   * `length = 0`, which makes V8 drop the storage and the next batch allocate it again.
   */
  private queue: (Queued | null)[] = [];
  /** Bytes of each queued message, same index as `queue`. */
  private sizes: number[] = [];
  private tail = 0;
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
    return this.tail - this.head;
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
      this.enqueue(
        { type: "event", agent, seq: e.seq, at: e.at, event: e.event },
        JSON.stringify(e.event).length + ENVELOPE_BYTES,
      );
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
   * Queue live event `seq` of `agent` — its message, or its line for a text sink —
   * of `bytes`; past the buffer (messages or bytes) it is dropped and accounted for in a
   * `lagged` notice. One event always fits an empty queue. With `deliver` false the
   * caller delivers later (`deliver()`), after queueing a whole batch.
   */
  offer(agent: string, seq: number, item: EventMessage | LiveLine, bytes: number, deliver = true): void {
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
    if (this.head < this.tail) this.pump();
  }

  close(): void {
    if (this.closedFlag) return;
    this.closedFlag = true;
    this.queue = [];
    this.sizes = [];
    this.head = 0;
    this.tail = 0;
    this.queuedBytes = 0;
    this.openGaps.clear();
    this.onClose(this);
  }

  private enqueue(item: Queued, bytes: number): void {
    this.queue[this.tail] = item;
    this.sizes[this.tail] = bytes;
    this.tail++;
    this.queuedBytes += bytes;
  }

  private pump(): void {
    if (this.pumping || this.closedFlag) return;
    this.pumping = true;
    this.drain();
  }

  /** The next queued item, taken off the queue. */
  private take(): Queued {
    const item = this.queue[this.head]!;
    this.queue[this.head] = null;
    this.queuedBytes -= this.sizes[this.head];
    this.head++;
    // Once its notice is on the way out, the gap is final and new events may flow again.
    if (!(item instanceof LiveLine) && item.type === "lagged" && this.openGaps.get(item.agent) === item)
      this.openGaps.delete(item.agent);
    return item;
  }

  private compactQueue(): void {
    if (this.head === this.tail) {
      this.head = 0;
      this.tail = 0;
      // A burst left a long array: let it go rather than keep its storage for good.
      if (this.queue.length > 1024) {
        this.queue = [];
        this.sizes = [];
      }
    } else if (this.head > 1024 && this.head * 2 > this.tail) {
      this.queue = this.queue.slice(this.head, this.tail);
      this.sizes = this.sizes.slice(this.head, this.tail);
      this.tail -= this.head;
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
      while (!this.closedFlag && this.head < this.tail) {
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
      for (let chars = 0; end < this.tail && chars < TEXT_BATCH_CHARS; end++) chars += this.sizes[end] + 1;
      const text = this.batchText.of(this.queue as readonly Queued[], head, end);
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
  return gap.lost
    ? { type: "lagged", agent, from: gap.from, to: gap.to, reason: "not_logged" }
    : { type: "lagged", agent, from: gap.from, to: gap.to };
}

/**
 * The text of the last batch a text sink was handed, for the next subscription whose
 * batch is the very same items: subscribers that follow the same agents get the same
 * shared lines, and the text is built (one flat string, in one join) once for all of
 * them instead of once per subscriber.
 */
export class BatchText {
  /** The items of the last batch: slots below `count` (overwritten, never emptied: V8 would drop the storage). */
  private readonly items: (Queued | null)[] = [];
  private count = 0;
  private text = "";

  /** JSON lines of `queue[head, end)`, each ending in a newline. */
  of(queue: readonly Queued[], head: number, end: number): string {
    const n = end - head;
    const items = this.items;
    if (n === this.count && n > 0) {
      let same = true;
      for (let i = 0; i < n && same; i++) same = queue[head + i] === items[i];
      if (same) return this.text;
    }
    // Pieces in one array of the most it needs (slots left empty join to nothing), joined
    // once: no string per line, and the numbers written straight into the text.
    const parts: (string | number)[] = new Array(n * 5);
    for (let i = 0, k = 0; i < n; i++) {
      const item = queue[head + i]!;
      items[i] = item;
      if (item instanceof LiveLine) {
        parts[k++] = item.prefix;
        parts[k++] = item.seq;
        parts[k++] = item.at;
        parts[k++] = item.raw;
        parts[k++] = "}\n";
      } else {
        parts[k++] = JSON.stringify(item);
        parts[k++] = "\n";
      }
    }
    for (let i = n; i < this.count; i++) items[i] = null;
    this.count = n;
    this.text = parts.join("");
    return this.text;
  }

  /** Forget the last batch (its lines are written). */
  clear(): void {
    for (let i = 0; i < this.count; i++) this.items[i] = null;
    this.count = 0;
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
    const sub = new Subscription(
      opts.agents,
      opts.sink,
      opts.maxBuffered ?? DEFAULT_SUBSCRIBER_MESSAGES,
      opts.maxBufferedBytes ?? DEFAULT_SUBSCRIBER_BYTES,
      (s) => this.subs.delete(s),
      this.batchText,
    );
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
   * JSON from the worker), its `LiveLine` is made once, for the first text sink that
   * follows, and shared by all of them; its message likewise for the other sinks (they
   * must not change it). With no follower nothing is built. With `deliver` false the
   * caller ends the batch with `deliver()`.
   */
  publish(agent: string, entry: LoggedEvent, raw?: string, deliver = true): void {
    let line: LiveLine | undefined;
    let message: EventMessage | undefined;
    let bytes: number | undefined;
    for (const sub of this.subs) {
      if (!sub.follows(agent)) continue;
      if (raw !== undefined && sub.takesText) {
        line ??= new LiveLine(this.prefixOf(agent), entry.seq, atPart(entry.at), raw);
        bytes ??= line.length;
        sub.offer(agent, entry.seq, line, bytes, deliver);
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

  /** `{"type":"event","agent":"NAME","seq":`: the start of every wire line of an agent, built once. */
  private prefixOf(agent: string): string {
    let prefix = this.prefixes.get(agent);
    if (prefix === undefined) {
      prefix = `{"type":"event","agent":${JSON.stringify(agent)},"seq":`;
      this.prefixes.set(agent, prefix);
    }
    return prefix;
  }

  /** Close every subscription (shutdown). */
  closeAll(): void {
    for (const sub of [...this.subs]) sub.close();
  }
}
