/**
 * The most recent events of one agent in memory, for late subscribers: bounded by a
 * number of events and by bytes, with the streaming snapshots of a finished message or
 * tool call compacted away. Older events replay from the files (`shared/event-replay.ts`).
 */
import type { LoggedEvent, SeqGap } from "../shared/event-replay.js";

/** Default bounds of an agent's ring: events and bytes of their JSON, whichever is reached first. */
export const DEFAULT_RING_EVENTS = 10_000;
export const DEFAULT_RING_BYTES = 1024 * 1024;

/**
 * One held event: its JSON as the worker wrote it (or as serialised once), parsed again
 * only when replayed. The text alone, not the whole log line around it, so a held event
 * is two small heap objects for the collector to move, not four.
 */
interface RingEntry {
  seq: number;
  at: number;
  /** The event's JSON; empty once dropped. */
  raw: string;
  /** Length of its log line (`{"seq","at","event"}`), what the byte budget counts. */
  bytes: number;
  /** Still counted in the ring (not evicted, not compacted). */
  held: boolean;
}

/**
 * The most recent events in sequence order, bounded by a number of events and by the
 * bytes of their JSON. Snapshot events (`message_update`, `tool_execution_update`) are
 * dropped once their `_end` arrived: the end carries the final state, and the snapshots
 * are most of the bytes of a stream.
 */
export class EventRing {
  private entries: RingEntry[] = [];
  private head = 0;
  private count = 0;
  private bytes = 0;
  /** Highest seq evicted by the bounds (compaction does not count): `since` below it has a gap. */
  private evictedThrough = 0;
  /** Seq of the newest event pushed (or `notHeldThrough`): a push past the next one leaves a hole. */
  private pushedThrough = 0;
  /** Seqs never pushed between held ones (lines the disk's backlog dropped), oldest first. */
  private holes: SeqGap[] = [];
  private messageUpdates: RingEntry[] = [];
  private readonly toolUpdates = new Map<string, RingEntry[]>();

  constructor(
    readonly maxEvents: number,
    readonly maxBytes: number = Number.POSITIVE_INFINITY,
  ) {
    if (!Number.isInteger(maxEvents) || maxEvents < 1)
      throw new TypeError(`ring capacity must be a positive integer, got ${maxEvents}`);
    if (!(maxBytes > 0)) throw new TypeError(`ring byte budget must be positive, got ${maxBytes}`);
  }

  /** Number of events held. */
  get size(): number {
    return this.count;
  }

  /** Bytes of the events held. */
  get heldBytes(): number {
    return this.bytes;
  }

  /** Events up to `seq` are not held (they were before this ring existed): `since` below it has a gap. */
  notHeldThrough(seq: number): void {
    this.evictedThrough = Math.max(this.evictedThrough, seq);
    this.pushedThrough = Math.max(this.pushedThrough, seq);
  }

  /**
   * Hold event `seq` given as its JSON and `type`; `logged` is asked for the event itself
   * only for a tool call's id (compaction), and only when it does not tell the id itself.
   */
  push(seq: number, at: number, raw: string, type: unknown, logged: HeldSource): void {
    // Pushes come in seq order; a seq skipped is one whose line never reached the disk.
    if (seq > this.pushedThrough + 1) this.holes.push({ from: this.pushedThrough + 1, to: seq - 1, lost: true });
    this.pushedThrough = Math.max(this.pushedThrough, seq);
    const entry: RingEntry = {
      seq,
      at,
      raw,
      bytes: raw.length + LINE_FRAME_CHARS + digits(seq) + digits(at),
      held: true,
    };
    this.entries.push(entry);
    this.count++;
    this.bytes += entry.bytes;
    this.compact(entry, type, logged);
    // The newest event always stays, even alone over the byte budget.
    while (this.count > 1 && (this.count > this.maxEvents || this.bytes > this.maxBytes)) this.evictOldest();
    // Compacted entries stay in the array until the front passes them: rebuild it
    // before they outnumber the held ones, or a long stream of snapshots grows it.
    const slots = this.entries.length - this.head;
    if ((this.head > 1024 && this.head * 2 > this.entries.length) || (slots > 1024 && slots > 2 * this.count)) {
      this.entries = this.entries.slice(this.head).filter((e) => e.held);
      this.head = 0;
    }
  }

  /**
   * Held events with `seq > since`, oldest first, the part of that range evicted
   * (`gap`: older than the ring, the files may have it), and the lost seqs among the
   * held ones (`holes`).
   */
  since(since: number): { events: LoggedEvent[]; gap: SeqGap | null; holes: SeqGap[] } {
    const events: LoggedEvent[] = [];
    for (let i = this.head; i < this.entries.length; i++) {
      const entry = this.entries[i];
      if (entry.held && entry.seq > since)
        events.push({ seq: entry.seq, at: entry.at, event: JSON.parse(entry.raw) as Record<string, unknown> });
    }
    const gap = since < this.evictedThrough ? { from: since + 1, to: this.evictedThrough } : null;
    const holes = this.holes.filter((h) => h.to > since).map((h) => ({ ...h, from: Math.max(h.from, since + 1) }));
    return { events, gap, holes };
  }

  private evictOldest(): void {
    while (this.head < this.entries.length) {
      const entry = this.entries[this.head++];
      if (!entry.held) continue;
      this.release(entry);
      this.evictedThrough = entry.seq;
      // Holes older than the ring are the files' to tell (readLoggedRange finds them there).
      while (this.holes.length > 0 && this.holes[0]!.to < entry.seq) this.holes.shift();
      return;
    }
  }

  private release(entry: RingEntry): void {
    if (!entry.held) return;
    entry.held = false;
    entry.raw = "";
    this.count--;
    this.bytes -= entry.bytes;
  }

  /**
   * `updates` without the entries the bounds evicted meanwhile, once those outnumber the
   * held ones: a message (or tool call) that streams for long without its end would
   * otherwise keep every snapshot's slot for good.
   */
  private pruned(updates: RingEntry[]): RingEntry[] {
    return updates.length > 1024 && updates.length > 2 * this.count ? updates.filter((e) => e.held) : updates;
  }

  private compact(entry: RingEntry, type: unknown, logged: HeldSource): void {
    switch (type) {
      case "message_start":
        this.messageUpdates = [];
        break;
      case "message_update":
        this.messageUpdates.push(entry);
        this.messageUpdates = this.pruned(this.messageUpdates);
        break;
      case "message_end":
        for (const update of this.messageUpdates) this.release(update);
        this.messageUpdates = [];
        break;
      case "tool_execution_update":
      case "tool_execution_end": {
        const told = logged.toolCallId;
        const toolCallId = typeof told === "string" ? told : logged.event.toolCallId;
        const id = typeof toolCallId === "string" ? toolCallId : "";
        if (type === "tool_execution_update") {
          const list = this.toolUpdates.get(id);
          if (list) {
            list.push(entry);
            const kept = this.pruned(list);
            if (kept !== list) this.toolUpdates.set(id, kept);
          } else this.toolUpdates.set(id, [entry]);
        } else {
          for (const update of this.toolUpdates.get(id) ?? []) this.release(update);
          this.toolUpdates.delete(id);
        }
        break;
      }
    }
  }
}

/**
 * Where a held event comes from, for its compaction: the event (parsed when read), and
 * its `toolCallId` when already known ("" for none; absent or null: read from the event).
 */
export interface HeldSource {
  readonly event: Record<string, unknown>;
  readonly toolCallId?: string | null;
}

/** Characters of a log line around its event and numbers: `{"seq":,"at":,"event":}`. */
const LINE_FRAME_CHARS = '{"seq":,"at":,"event":}'.length;

/** Decimal digits of a non-negative integer (a seq, a timestamp). */
function digits(n: number): number {
  let d = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    d++;
  }
  return d;
}
