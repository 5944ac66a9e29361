import { describe, expect, it } from "vitest";
import { EventSlab, SLAB_MAX_EVENT_CHARS } from "../../supervisor/event-slab.js";
import { seededRandom } from "../support/seeded-random.js";

/** What a slab should hold: seq → [at, raw], the reference the slab is checked against. */
type Model = Map<number, [number, string]>;

function expectSame(slab: EventSlab, model: Model, since = 0): void {
  const want = [...model]
    .filter(([seq]) => seq > since)
    .sort(([a], [b]) => a - b)
    .map(([seq, [at, raw]]) => ({ seq, at, event: JSON.parse(raw) }));
  expect(slab.since(since)).toEqual(want);
  expect(slab.size).toBe(model.size);
  expect(slab.countedBytes).toBe([...model.values()].reduce((n, [, raw]) => n + raw.length + 1, 0));
}

function push(slab: EventSlab, model: Model, seq: number, raw: string, at = seq * 10): void {
  slab.push(seq, at, raw, raw.length + 1);
  model.set(seq, [at, raw]);
}

const texts = [
  "plain",
  "grüße, naïve",
  "日本語のテキスト",
  "emoji 🙂 and 🚀",
  'quote " and \\ backslash',
  "\u2028 line sep",
];
const eventOf = (seq: number, pad: number) =>
  JSON.stringify({ type: "message_update", seq, text: texts[seq % texts.length]!.repeat(1 + (pad % 7)) });

describe("EventSlab", () => {
  it.each([
    { steady: 0, name: "doubling as it needs" },
    { steady: 2 * 1024 * 1024, name: "with a steady size" },
  ])(
    "holds events through compactions, in place and into new storage, as a plain map would ($name; seeded random walk)",
    ({ steady }) => {
      const rand = seededRandom(30 + steady);
      const slab = new EventSlab(steady);
      const model: Model = new Map();
      let seq = 0;
      let grew = 0;
      let most = 0;
      let last = slab.capacity.bytes;
      for (let step = 0; step < 20_000; step++) {
        // Growing for the first half, shrinking in the second.
        const r = rand() + (step < 10_000 ? 0 : 0.3);
        if (r < 0.6) {
          // Seqs ascend with gaps now and then (lines the disk's backlog dropped).
          seq += rand() < 0.05 ? 2 + Math.floor(rand() * 3) : 1;
          push(slab, model, seq, eventOf(seq, Math.floor(rand() * 100)));
        } else if (r < 0.8 && model.size > 0) {
          const oldest = Math.min(...model.keys());
          expect(slab.releaseOldest()).toBe(oldest);
          model.delete(oldest);
        } else if (model.size > 0) {
          // A compaction in the middle: any held seq, or one not held (a no-op).
          const keys = [...model.keys()];
          const pick = keys[Math.floor(rand() * keys.length)]! + (rand() < 0.2 ? 0.5 : 0);
          slab.release(pick);
          model.delete(pick);
        }
        const now = slab.capacity.bytes;
        if (now > last) grew++;
        most = Math.max(most, now);
        last = now;
        if (step % 997 === 0) {
          expectSame(slab, model);
          const keys = [...model.keys()];
          // A replay from the middle starts at the first seq above it, wherever compactions moved it.
          if (keys.length > 0) expectSame(slab, model, keys[Math.floor(keys.length / 2)]! - 1);
        }
      }
      expectSame(slab, model);
      expect(grew).toBeGreaterThan(3);
      // A slab with a steady size goes there in one step and stays (a grown one is garbage until a full collection).
      if (steady > 0) expect(most).toBe(steady);
      // Drained, it lets its storage go.
      while (slab.releaseOldest() !== 0);
      expect(slab.capacity.slots).toBe(16);
      expect(slab.capacity.bytes).toBeLessThanOrEqual(32 * 1024);
    },
  );

  it("grows for a burst and gives the memory back once the burst is let go", () => {
    const slab = new EventSlab();
    const model: Model = new Map();
    const raw = JSON.stringify({ type: "message_update", text: "x".repeat(500) });
    for (let seq = 1; seq <= 4000; seq++) push(slab, model, seq, raw);
    expect(slab.capacity.bytes).toBeGreaterThanOrEqual(4000 * raw.length);
    expectSame(slab, model);
    for (let seq = 1; seq <= 3990; seq++) {
      slab.releaseOldest();
      model.delete(seq);
    }
    // The next compaction (slots or bytes full) sizes the storage to what is held.
    for (let seq = 4001; seq <= 12_000; seq++) {
      push(slab, model, seq, "{}");
      slab.releaseOldest();
      model.delete(Math.min(...model.keys()));
    }
    expect(slab.capacity.bytes).toBeLessThan(64 * 1024);
    expect(slab.capacity.slots).toBeLessThan(1024);
    expectSame(slab, model);
  });

  it("holds an event longer than the slab takes as its string, beside small ones, and lets it go", () => {
    const slab = new EventSlab();
    const model: Model = new Map();
    const big = JSON.stringify({ type: "tool_execution_end", output: "é".repeat(SLAB_MAX_EVENT_CHARS) });
    push(slab, model, 1, '{"type":"a"}');
    push(slab, model, 2, big);
    push(slab, model, 3, '{"type":"b"}');
    expect(slab.capacity.bytes).toBeLessThan(big.length);
    expectSame(slab, model);
    expectSame(slab, model, 1);
    slab.release(2);
    model.delete(2);
    expectSame(slab, model);
    push(slab, model, 4, big);
    for (let seq = 5; seq < 2000; seq++) push(slab, model, seq, eventOf(seq, seq));
    expectSame(slab, model, 3);
  });

  it("starts over at the front once nothing is held", () => {
    const slab = new EventSlab();
    const model: Model = new Map();
    push(slab, model, 1, '{"a":1}');
    push(slab, model, 2, '{"a":2}');
    expect(slab.releaseOldest()).toBe(1);
    expect(slab.releaseOldest()).toBe(2);
    expect(slab.releaseOldest()).toBe(0);
    model.clear();
    expectSame(slab, model);
    push(slab, model, 7, '{"a":7}');
    expectSame(slab, model);
    expect(slab.isHeld(7)).toBe(true);
    expect(slab.isHeld(2)).toBe(false);
  });
});
