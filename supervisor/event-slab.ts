/**
 * The held events of one agent's ring, kept off the V8 heap: their JSON as UTF-8 bytes in
 * one Buffer (its backing store is outside the heap, so a scavenge never copies it) and,
 * per slot, its seq, `at`, place in the Buffer, counted bytes and whether it is still held
 * in typed arrays. A held event is then no object at all for the collector: before, each
 * was its JSON string and an entry object, both copied by two scavenges before they were
 * old, and they were most of what survived a scavenge while agents streamed.
 */

/** Longest event (in UTF-16 units) held in the Buffer; a longer one is held as its string (a large string lives outside the young generation). */
export const SLAB_MAX_EVENT_CHARS = 16 * 1024;

/** The Buffer's and the slot arrays' least sizes: an agent that holds a few events costs little. */
const MIN_BYTES = 4096;
const MIN_SLOTS = 16;
/** Past this the Buffer goes to its steady size at once (see `grown`): an agent that holds less never takes that. */
const SMALL_BYTES = 256 * 1024;

/** A slot whose event is held as a string (`big`), not in the Buffer. */
const IN_BIG = -1;

/**
 * Events in seq order, appended at the end, released anywhere (evicted at the front,
 * compacted in the middle). Released slots and their bytes are reclaimed when the slots
 * or the Buffer are full: the held ones move to the front in order (one copy per run of
 * adjacent bytes), and the storage follows what is held, down as well as up.
 */
export class EventSlab {
  /**
   * `steadyBytes`: the Buffer's size once more than a few events are held (0: none,
   * it grows as it needs). A Buffer outgrown stays allocated until a full collection,
   * and memory allocated outside the heap brings the next full collection nearer as
   * the heap's own does: a ring that streams gets the Buffer a full ring needs in one
   * step (its pages take memory only once written).
   */
  constructor(private readonly steadyBytes = 0) {}

  private seqs = new Float64Array(MIN_SLOTS);
  private ats = new Float64Array(MIN_SLOTS);
  /** Offset of the event's bytes in `bytes`, or `IN_BIG`. */
  private starts = new Float64Array(MIN_SLOTS);
  private lens = new Uint32Array(MIN_SLOTS);
  /** What the owner counts for the event (its log line's length). */
  private sizes = new Uint32Array(MIN_SLOTS);
  private held = new Uint8Array(MIN_SLOTS);
  /** Slots in use are `[head, tail)`; below `head` none is held. */
  private head = 0;
  private tail = 0;
  private count = 0;
  private counted = 0;
  /** The events' UTF-8 bytes: `[0, used)` written, of them `live` still held. */
  private bytes: Buffer | null = null;
  private used = 0;
  private live = 0;
  /** Events longer than `SLAB_MAX_EVENT_CHARS`, by seq. */
  private readonly big = new Map<number, string>();

  /** Number of events held. */
  get size(): number {
    return this.count;
  }

  /** Sum of the held events' counted sizes. */
  get countedBytes(): number {
    return this.counted;
  }

  /** Slots the arrays have room for, and bytes the Buffer has: what this slab takes beyond what it holds. */
  get capacity(): { slots: number; bytes: number } {
    return { slots: this.seqs.length, bytes: this.bytes?.length ?? 0 };
  }

  /** Hold event `seq` (above every seq held before) given as its JSON; `size` is what `countedBytes` counts for it. */
  push(seq: number, at: number, raw: string, size: number): void {
    // At most 3 bytes per UTF-16 unit: the room is made before the write, which then never cuts the text.
    const most = raw.length > SLAB_MAX_EVENT_CHARS ? 0 : raw.length * 3;
    if (this.tail === this.seqs.length || (most > 0 && (this.bytes === null || this.used + most > this.bytes.length)))
      this.compact(most);
    const i = this.tail++;
    this.seqs[i] = seq;
    this.ats[i] = at;
    this.sizes[i] = size;
    this.held[i] = 1;
    if (most === 0 && raw.length > 0) {
      this.starts[i] = IN_BIG;
      this.lens[i] = 0;
      this.big.set(seq, raw);
    } else {
      const n = raw.length === 0 ? 0 : this.bytes!.write(raw, this.used, "utf8");
      this.starts[i] = this.used;
      this.lens[i] = n;
      this.used += n;
      this.live += n;
    }
    this.count++;
    this.counted += size;
  }

  /** Whether event `seq` is held. */
  isHeld(seq: number): boolean {
    const i = this.slotOf(seq);
    return i >= 0 && this.held[i] === 1;
  }

  /** Let event `seq` go (a no-op when it is not held). */
  release(seq: number): void {
    const i = this.slotOf(seq);
    if (i >= 0) this.releaseSlot(i);
  }

  /** Let the oldest held event go; its seq, or 0 when none is held. */
  releaseOldest(): number {
    while (this.head < this.tail) {
      const i = this.head++;
      if (this.held[i] === 0) continue;
      const seq = this.seqs[i]!;
      this.releaseSlot(i);
      return seq;
    }
    return 0;
  }

  /** The held events with a seq above `since`, oldest first, each parsed from its JSON. */
  since(since: number): { seq: number; at: number; event: Record<string, unknown> }[] {
    const out: { seq: number; at: number; event: Record<string, unknown> }[] = [];
    for (let i = this.firstAbove(since); i < this.tail; i++) {
      if (this.held[i] === 0) continue;
      const seq = this.seqs[i]!;
      const start = this.starts[i]!;
      const raw = start === IN_BIG ? this.big.get(seq)! : this.bytes!.toString("utf8", start, start + this.lens[i]!);
      out.push({ seq, at: this.ats[i]!, event: JSON.parse(raw) as Record<string, unknown> });
    }
    return out;
  }

  private releaseSlot(i: number): void {
    if (this.held[i] === 0) return;
    this.held[i] = 0;
    this.count--;
    this.counted -= this.sizes[i]!;
    if (this.starts[i] === IN_BIG) this.big.delete(this.seqs[i]!);
    else this.live -= this.lens[i]!;
    // Nothing held: start over at the front, nothing to move, and let a burst's storage go.
    if (this.count === 0) {
      this.head = 0;
      this.tail = 0;
      this.used = 0;
      if (this.bytes !== null && this.bytes.length > 8 * MIN_BYTES) this.bytes = null;
      if (this.seqs.length > 8 * MIN_SLOTS) this.compact(0);
    }
  }

  /** Slot of `seq` among `[head, tail)`, or -1 (seqs ascend there: a binary search). */
  private slotOf(seq: number): number {
    const i = this.firstAbove(seq - 1);
    return i < this.tail && this.seqs[i] === seq ? i : -1;
  }

  /** First slot in `[head, tail)` whose seq is above `seq`, or `tail`. */
  private firstAbove(seq: number): number {
    let lo = this.head;
    let hi = this.tail;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.seqs[mid]! <= seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Move the held slots to the front, and their bytes to the front of the Buffer, with
   * room for one more slot and `extra` more bytes: in place while the storage `fits`
   * what is held, else into new storage (`grown`).
   */
  private compact(extra: number): void {
    const slots = this.count + 1;
    const slotCap = fits(this.seqs.length, slots, MIN_SLOTS) ? this.seqs.length : grown(slots, MIN_SLOTS, 2, 0);
    const need = this.live + extra;
    const current = this.bytes?.length ?? 0;
    const byteCap = fits(current, need, Math.max(MIN_BYTES, this.steadyBytes))
      ? current
      : grown(need, MIN_BYTES, 4, this.steadyBytes);
    const from = { seqs: this.seqs, ats: this.ats, starts: this.starts, lens: this.lens, sizes: this.sizes };
    const heldFrom = this.held;
    if (slotCap !== this.seqs.length) {
      this.seqs = new Float64Array(slotCap);
      this.ats = new Float64Array(slotCap);
      this.starts = new Float64Array(slotCap);
      this.lens = new Uint32Array(slotCap);
      this.sizes = new Uint32Array(slotCap);
      this.held = new Uint8Array(slotCap);
    }
    const source = this.bytes;
    const target = source !== null && byteCap === source.length ? source : Buffer.allocUnsafeSlow(byteCap);
    // Adjacent held bytes move as one run; moving toward the front, a run never overwrites one not yet moved.
    let w = 0;
    let runFrom = 0;
    let runTo = 0;
    let k = 0;
    for (let i = this.head; i < this.tail; i++) {
      if (heldFrom[i] === 0) continue;
      const start = from.starts[i]!;
      const len = from.lens[i]!;
      let at = start;
      if (start !== IN_BIG) {
        if (start !== runTo) {
          if (runTo > runFrom) source!.copy(target, w, runFrom, runTo);
          w += runTo - runFrom;
          runFrom = start;
          runTo = start;
        }
        at = w + (start - runFrom);
        runTo = start + len;
      }
      this.seqs[k] = from.seqs[i]!;
      this.ats[k] = from.ats[i]!;
      this.starts[k] = at;
      this.lens[k] = len;
      this.sizes[k] = from.sizes[i]!;
      this.held[k] = 1;
      k++;
    }
    if (runTo > runFrom) source!.copy(target, w, runFrom, runTo);
    w += runTo - runFrom;
    this.bytes = target;
    this.head = 0;
    this.tail = k;
    this.used = w;
  }
}

/**
 * Whether storage of `current` fits `need`: a fifth of it at least free after a
 * compaction (so each byte held moves at most about four times per byte appended), and
 * at most eight times `need` unless it is no more than `floor`.
 */
function fits(current: number, need: number, floor: number): boolean {
  return current >= 1.25 * need && (current <= 8 * need || current <= floor);
}

/**
 * Storage for `need`: `least` times the first power of `factor` that is at least 1.5
 * times `need`, or `steady` once past `SMALL_BYTES` when that is enough.
 */
function grown(need: number, least: number, factor: number, steady: number): number {
  if (steady > 0 && 1.5 * need > SMALL_BYTES && 1.5 * need <= steady) return steady;
  let size = least;
  while (size < 1.5 * need) size *= factor;
  return size;
}
