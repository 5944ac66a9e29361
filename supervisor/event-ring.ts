/**
 * The most recent events of one agent in memory, for late subscribers: bounded by a
 * number of events and by bytes, with the streaming snapshots of a finished message or
 * tool call compacted away. Older events replay from the files (`shared/event-replay.ts`).
 */
import type { LoggedEvent, SeqGap } from "../shared/event-replay.js";
import { EventSlab } from "./event-slab.js";

/** Default bounds of an agent's ring: events and bytes of their JSON, whichever is reached first. */
export const DEFAULT_RING_EVENTS = 10_000;
export const DEFAULT_RING_BYTES = 1024 * 1024;

/**
 * The most recent events in sequence order, bounded by a number of events and by the
 * bytes of their JSON. Snapshot events (`message_update`, `tool_execution_update`) are
 * dropped once their `_end` arrived: the end carries the final state, and the snapshots
 * are most of the bytes of a stream. The events themselves are held off the V8 heap
 * (`EventSlab`), parsed again only when replayed.
 */
export class EventRing {
  private readonly held: EventSlab;
  /** Highest seq evicted by the bounds (compaction does not count): `since` below it has a gap. */
  private evictedThrough = 0;
  /** Seq of the newest event pushed (or `notHeldThrough`): a push past the next one leaves a hole. */
  private pushedThrough = 0;
  /** Seqs never pushed between held ones (lines the disk's backlog dropped), oldest first. */
  private holes: SeqGap[] = [];
  /** Seqs of the current message's snapshots, and of each streaming tool call's. */
  private messageUpdates: number[] = [];
  private readonly toolUpdates = new Map<string, number[]>();

  constructor(
    readonly maxEvents: number,
    readonly maxBytes: number = Number.POSITIVE_INFINITY,
  ) {
    if (!Number.isInteger(maxEvents) || maxEvents < 1)
      throw new TypeError(`ring capacity must be a positive integer, got ${maxEvents}`);
    if (!(maxBytes > 0)) throw new TypeError(`ring byte budget must be positive, got ${maxBytes}`);
    // Room for a full ring's bytes and a quarter more: what a streaming ring takes outside the heap.
    this.held = new EventSlab(Number.isFinite(maxBytes) ? Math.ceil(1.25 * maxBytes) : 0);
  }

  /** Number of events held. */
  get size(): number {
    return this.held.size;
  }

  /** Bytes of the events held. */
  get heldBytes(): number {
    return this.held.countedBytes;
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
    this.held.push(seq, at, raw, raw.length + LINE_FRAME_CHARS + digits(seq) + digits(at));
    this.compact(seq, type, logged);
    // The newest event always stays, even alone over the byte budget.
    while (this.held.size > 1 && (this.held.size > this.maxEvents || this.held.countedBytes > this.maxBytes))
      this.evictOldest();
  }

  /**
   * Held events with `seq > since`, oldest first, the part of that range evicted
   * (`gap`: older than the ring, the files may have it), and the lost seqs among the
   * held ones (`holes`).
   */
  since(since: number): { events: LoggedEvent[]; gap: SeqGap | null; holes: SeqGap[] } {
    const events: LoggedEvent[] = this.held.since(since);
    const gap = since < this.evictedThrough ? { from: since + 1, to: this.evictedThrough } : null;
    const holes = this.holes.filter((h) => h.to > since).map((h) => ({ ...h, from: Math.max(h.from, since + 1) }));
    return { events, gap, holes };
  }

  private evictOldest(): void {
    const seq = this.held.releaseOldest();
    if (seq === 0) return;
    this.evictedThrough = seq;
    // Holes older than the ring are the files' to tell (readLoggedRange finds them there).
    while (this.holes.length > 0 && this.holes[0]!.to < seq) this.holes.shift();
  }

  /**
   * `updates` without the seqs the bounds evicted meanwhile, once those outnumber the
   * held ones: a message (or tool call) that streams for long without its end would
   * otherwise keep every snapshot's seq for good.
   */
  private pruned(updates: number[]): number[] {
    return updates.length > 1024 && updates.length > 2 * this.held.size
      ? updates.filter((seq) => this.held.isHeld(seq))
      : updates;
  }

  private compact(seq: number, type: unknown, logged: HeldSource): void {
    switch (type) {
      case "message_start":
        this.messageUpdates = [];
        break;
      case "message_update":
        this.messageUpdates.push(seq);
        this.messageUpdates = this.pruned(this.messageUpdates);
        break;
      case "message_end":
        for (const update of this.messageUpdates) this.held.release(update);
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
            list.push(seq);
            const kept = this.pruned(list);
            if (kept !== list) this.toolUpdates.set(id, kept);
          } else this.toolUpdates.set(id, [seq]);
        } else {
          for (const update of this.toolUpdates.get(id) ?? []) this.held.release(update);
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
