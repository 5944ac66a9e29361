import { afterEach, describe, expect, it } from "vitest";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compactSnapshots, joinGaps, type LoggedEvent, readLoggedRange, withGaps } from "../../shared/event-replay.js";
import { AgentEventLog } from "../../supervisor/event-log.js";
import { EventRing } from "../../supervisor/event-ring.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function logsDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "po-log-"));
  dirs.push(dir);
  return dir;
}

const ev = (seq: number, event: Record<string, unknown>): LoggedEvent => ({ seq, at: seq, event });
const line = (e: LoggedEvent) => JSON.stringify(e);
function ringOf(maxEvents: number, maxBytes: number, events: LoggedEvent[]): EventRing {
  const ring = new EventRing(maxEvents, maxBytes);
  for (const e of events) hold(ring, e.seq, e.at, JSON.stringify(e.event), e.event);
  return ring;
}
const seqs = (events: LoggedEvent[]) => events.map((e) => e.seq);
/** Hold `event` in `ring` as the log does: its JSON, its type, and itself for a tool call's id. */
function hold(ring: EventRing, seq: number, at: number, raw: string, event: Record<string, unknown>): void {
  ring.push(seq, at, raw, event.type, { event });
}

describe("EventRing", () => {
  const plain = (n: number) => Array.from({ length: n }, (_, i) => ev(i + 1, { type: "x", i }));
  it.each([
    {
      name: "by count: the newest stay, the evicted range is a gap",
      max: 3,
      bytes: Infinity,
      events: plain(5),
      since: 0,
      held: [3, 4, 5],
      gap: { from: 1, to: 2 },
    },
    {
      name: "since inside the held range has no gap",
      max: 3,
      bytes: Infinity,
      events: plain(5),
      since: 3,
      held: [4, 5],
      gap: null,
    },
    { name: "since at the end is empty", max: 3, bytes: Infinity, events: plain(5), since: 5, held: [], gap: null },
    {
      name: "by bytes: about two lines fit",
      max: 100,
      bytes: 2 * line(plain(1)[0]).length + 5,
      events: plain(6),
      since: 0,
      held: [5, 6],
      gap: { from: 1, to: 4 },
    },
    {
      name: "one event over the budget still stays",
      max: 100,
      bytes: 1,
      events: plain(3),
      since: 0,
      held: [3],
      gap: { from: 1, to: 2 },
    },
  ])("$name", ({ max, bytes, events, since, held, gap }) => {
    const got = ringOf(max, bytes, events).since(since);
    expect(seqs(got.events)).toEqual(held);
    expect(got.gap).toEqual(gap);
  });

  const skipping = (...s: number[]) => s.map((q) => ev(q, { type: "x", q }));
  it.each([
    {
      name: "a seq skipped between pushes is a lost hole",
      max: 100,
      events: skipping(1, 2, 5, 6),
      since: 0,
      gap: null,
      holes: [{ from: 3, to: 4, lost: true }],
    },
    {
      name: "since inside the hole clips it",
      max: 100,
      events: skipping(1, 2, 5, 6),
      since: 3,
      gap: null,
      holes: [{ from: 4, to: 4, lost: true }],
    },
    { name: "since past the hole has none", max: 100, events: skipping(1, 2, 5, 6), since: 5, gap: null, holes: [] },
    {
      name: "a hole older than the ring is left to the files",
      max: 2,
      events: skipping(1, 4, 5, 6),
      since: 0,
      gap: { from: 1, to: 4 },
      holes: [],
    },
    {
      name: "a hole just after the evicted range stays",
      max: 2,
      events: skipping(1, 2, 5, 6),
      since: 0,
      gap: { from: 1, to: 2 },
      holes: [{ from: 3, to: 4, lost: true }],
    },
  ])("$name", ({ max, events, since, gap, holes }) => {
    const got = ringOf(max, Infinity, events).since(since);
    expect(got.gap).toEqual(gap);
    expect(got.holes).toEqual(holes);
  });

  it("counts a hole from the seq it was told is not held (a new supervisor's first push)", () => {
    const ring = new EventRing(10);
    ring.notHeldThrough(7);
    hold(ring, 10, 10, "{}", {});
    expect(ring.since(7).holes).toEqual([{ from: 8, to: 9, lost: true }]);
  });

  it("drops the snapshots of a message and of a tool call once their end arrived, without a gap", () => {
    const events = [
      ev(1, { type: "message_start" }),
      ev(2, { type: "message_update", message: { text: "a" } }),
      ev(3, { type: "message_update", message: { text: "ab" } }),
      ev(4, { type: "message_end", message: { text: "abc" } }),
      ev(5, { type: "tool_execution_start", toolCallId: "t1" }),
      ev(6, { type: "tool_execution_update", toolCallId: "t1" }),
      ev(7, { type: "tool_execution_update", toolCallId: "t2" }),
      ev(8, { type: "tool_execution_end", toolCallId: "t1" }),
      ev(9, { type: "message_start" }),
      ev(10, { type: "message_update", message: { text: "still streaming" } }),
    ];
    const ring = ringOf(100, Infinity, events);
    expect(seqs(ring.since(0).events)).toEqual([1, 4, 5, 7, 8, 9, 10]);
    expect(ring.since(0).gap).toBeNull();
    expect(ring.size).toBe(7);
    expect(compactSnapshots(events).map((e) => e.seq)).toEqual([1, 4, 5, 7, 8, 9, 10]);
  });

  it("stays small over a long stream of compacted snapshots", () => {
    const ring = new EventRing(1000, 64 * 1024);
    let seq = 0;
    for (let m = 0; m < 2000; m++) {
      hold(ring, ++seq, 0, "{}", { type: "message_start" });
      for (let u = 0; u < 20; u++) hold(ring, ++seq, 0, `{"u":"${"x".repeat(200)}"}`, { type: "message_update" });
      hold(ring, ++seq, 0, "{}", { type: "message_end" });
    }
    expect(ring.heldBytes).toBeLessThanOrEqual(64 * 1024);
    expect(ring.size).toBeLessThanOrEqual(1000);
    // Slots of compacted entries are reclaimed, not kept until the front passes them.
    expect((ring as unknown as { entries: unknown[] }).entries.length).toBeLessThan(4 * 1000 + 1100);
  });
});

describe("EventRing without the end of a stream", () => {
  it("keeps no slot of an evicted snapshot while a message or tool call streams without its end", () => {
    const ring = new EventRing(100, Infinity);
    let seq = 0;
    hold(ring, ++seq, 0, "{}", { type: "message_start" });
    for (let u = 0; u < 50_000; u++) {
      hold(ring, ++seq, 0, "{}", { type: "message_update" });
      hold(ring, ++seq, 0, "{}", { type: "tool_execution_update", toolCallId: "t1" });
    }
    expect(ring.size).toBe(100);
    const inner = ring as unknown as { messageUpdates: unknown[]; toolUpdates: Map<string, unknown[]> };
    expect(inner.messageUpdates.length).toBeLessThanOrEqual(1025);
    expect(inner.toolUpdates.get("t1")!.length).toBeLessThanOrEqual(1025);
    // The end still drops the snapshots it finalises.
    hold(ring, ++seq, 0, "{}", { type: "message_end" });
    hold(ring, ++seq, 0, "{}", { type: "tool_execution_end", toolCallId: "t1" });
    expect(ring.size).toBe(2);
  });
});

describe("AgentEventLog", () => {
  it("writes each event before append returns, rotates by size and continues numbering after a reopen", () => {
    const dir = logsDir();
    const log = new AgentEventLog({ logsDir: dir, name: "a", ringSize: 4, maxFileBytes: 200, keepFiles: 2 });
    for (let i = 0; i < 10; i++) {
      log.append({ type: "x", i }, 1);
      // Write-ahead: on disk (in the OS) already, no flush needed.
      expect(readFileSync(join(dir, "a.events.jsonl"), "utf8")).toContain(`"i":${i}}`);
    }
    log.appendStderr("boom\n");
    log.close();
    expect(log.lastSeq).toBe(10);
    expect(existsSync(join(dir, "a.events.jsonl.1"))).toBe(true);
    expect(readFileSync(join(dir, "a.stderr.log"), "utf8")).toBe("boom\n");
    const again = new AgentEventLog({ logsDir: dir, name: "a", ringSize: 4, maxFileBytes: 200, keepFiles: 2 });
    expect(again.lastSeq).toBe(10);
    expect(again.append({ type: "y" }).seq).toBe(11);
    again.close();
  });

  it("finds the last seq in a rotated file when the current one is empty", () => {
    const dir = logsDir();
    writeFileSync(join(dir, "a.events.jsonl.1"), `${line(ev(41, { type: "x" }))}\n${line(ev(42, { type: "x" }))}\n`);
    writeFileSync(join(dir, "a.events.jsonl"), "");
    const log = new AgentEventLog({ logsDir: dir, name: "a" });
    expect(log.append({ type: "y" }).seq).toBe(43);
    log.close();
  });

  it("finds the last seq behind a last line longer than the tail it reads first (no seq reused after a big event)", () => {
    const dir = logsDir();
    const big = "x".repeat(1024 * 1024);
    writeFileSync(join(dir, "a.events.jsonl.1"), `${line(ev(7, { type: "x" }))}\n`);
    writeFileSync(
      join(dir, "a.events.jsonl"),
      `${line(ev(8, { type: "x" }))}\n${line(ev(9, { type: "tool_execution_end", big }))}\n`,
    );
    const log = new AgentEventLog({ logsDir: dir, name: "a" });
    expect(log.lastSeq).toBe(9);
    expect(log.append({ type: "y" }).seq).toBe(10);
    log.close();
  });

  it("in batched mode stages appends and writes them in one write on commit, holding them in the ring only then", () => {
    const dir = logsDir();
    const path = join(dir, "a.events.jsonl");
    const log = new AgentEventLog({ logsDir: dir, name: "a", batched: true });
    const seqsOf = [log.append({ type: "x", i: 1 }, 1), log.append({ type: "x", i: 2 }, 2, '{"type":"x","i":2}')].map(
      (e) => e.seq,
    );
    expect(seqsOf).toEqual([1, 2]);
    // Not on disk yet, so not announced: the next supervisor would number from the file.
    expect(log.lastSeq).toBe(0);
    expect(existsSync(path) ? readFileSync(path, "utf8") : "").toBe("");
    expect(log.held.events).toBe(0);
    log.commit();
    expect(log.lastSeq).toBe(2);
    expect(readFileSync(path, "utf8")).toBe(
      '{"seq":1,"at":1,"event":{"type":"x","i":1}}\n{"seq":2,"at":2,"event":{"type":"x","i":2}}\n',
    );
    expect(log.held.events).toBe(2);
    // A replay or a close commits what is staged first, so nothing is lost or skipped.
    log.append({ type: "x", i: 3 }, 3);
    expect(seqs(log.since(0).events)).toEqual([1, 2, 3]);
    log.append({ type: "x", i: 4 }, 4);
    log.close();
    expect(readFileSync(path, "utf8").trim().split("\n")).toHaveLength(4);
  });

  it("forwards an event given as its JSON and type as it appends the parsed one: the same lines, ring, compaction and replay", () => {
    const dir = logsDir();
    const events: Record<string, unknown>[] = [
      { type: "message_start" },
      { type: "message_update", delta: "a\n\u00e9", n: 1 },
      { type: "tool_execution_update", toolCallId: "t1", partial: "x" },
      { type: "tool_execution_update", toolCallId: "t2", partial: "y" },
      { type: "tool_execution_end", toolCallId: "t1" },
      { type: "message_update", delta: "b", n: 2 },
      { type: "message_end" },
      { type: "turn_end" },
    ];
    // A tool call's id as the routing scan read it, or not read (null: the ring parses the event for it).
    for (const [batched, readIds] of [
      [false, true],
      [true, true],
      [true, false],
    ]) {
      const appended = new AgentEventLog({ logsDir: dir, name: `append-${batched}-${readIds}`, batched });
      const forwarded = new AgentEventLog({ logsDir: dir, name: `forward-${batched}-${readIds}`, batched });
      const entries = events.map((event, i) => {
        const raw = JSON.stringify(event);
        appended.append(event, 100 + i, raw);
        const id = readIds ? (event.toolCallId ?? "") : null;
        return forwarded.forward(event.type as string, raw, 100 + i, id as string | null);
      });
      appended.commit();
      forwarded.commit();
      const file = (name: string) => readFileSync(join(dir, `${name}.events.jsonl`), "utf8");
      expect(file(`forward-${batched}-${readIds}`)).toBe(file(`append-${batched}-${readIds}`));
      // The snapshots their ends finalised are gone from both rings alike.
      expect(seqs(forwarded.since(0).events)).toEqual([1, 4, 5, 7, 8]);
      expect(forwarded.since(0)).toEqual(appended.since(0));
      // With the ids read, nothing was parsed to route them (a replay parses the ring's own text).
      if (readIds)
        expect(entries.filter((e) => (e as unknown as { parsed?: unknown }).parsed !== undefined)).toEqual([]);
      // The entry's event is the parsed JSON, made when read.
      expect(entries.map((e) => ({ seq: e.seq, at: e.at, event: e.event }))).toEqual(
        events.map((event, i) => ({ seq: i + 1, at: 100 + i, event })),
      );
      appended.close();
      forwarded.close();
    }
  });

  it("cuts a torn last record before appending, so no later line continues it", () => {
    const dir = logsDir();
    const path = join(dir, "a.events.jsonl");
    writeFileSync(path, `${line(ev(1, { type: "x" }))}\n{"seq":2,"at":2,"event":{"type":"tor`);
    const log = new AgentEventLog({ logsDir: dir, name: "a" });
    // The torn record's seq is not reused either: it may have reached a subscriber.
    expect(log.append({ type: "y" }).seq).toBe(3);
    log.close();
    const lines = readFileSync(path, "utf8").split("\n").filter(Boolean);
    expect(lines.map((l) => JSON.parse(l).seq)).toEqual([1, 3]);
  });

  it("replays from the files what the ring no longer holds, snapshots compacted, bounded in bytes", () => {
    const dir = logsDir();
    const log = new AgentEventLog({ logsDir: dir, name: "a", ringSize: 3, maxFileBytes: 300, keepFiles: 5 });
    log.append({ type: "message_start" });
    for (let i = 0; i < 5; i++) log.append({ type: "message_update", i });
    log.append({ type: "message_end" });
    for (let i = 0; i < 5; i++) log.append({ type: "x", i });
    const all = log.since(0);
    expect(all.gaps).toEqual([]);
    expect(seqs(all.events)).toEqual([1, 7, 8, 9, 10, 11, 12]);
    const tail = log.since(9);
    expect(seqs(tail.events)).toEqual([10, 11, 12]);
    log.close();
    // With a small replay budget only the newest part of the gap comes from disk.
    const small = new AgentEventLog({
      logsDir: dir,
      name: "a",
      ringSize: 1,
      maxFileBytes: 300,
      keepFiles: 5,
      replayBytes: 100,
    });
    small.append({ type: "y" });
    const bounded = small.since(0);
    expect(bounded.gaps).toHaveLength(1);
    expect(bounded.gaps[0]!.from).toBe(1);
    expect(bounded.events.at(-1)!.seq).toBe(13);
    small.close();
  });

  it.each([
    { name: "contiguous", seqs: [3, 4, 5], from: 3, to: 5, kept: [3, 4, 5], gaps: [] },
    { name: "older than the files: not held", seqs: [4, 5], from: 1, to: 5, kept: [4, 5], gaps: [{ from: 1, to: 3 }] },
    {
      name: "between events: lost",
      seqs: [1, 2, 6, 7, 9],
      from: 1,
      to: 9,
      kept: [1, 2, 6, 7, 9],
      gaps: [
        { from: 3, to: 5, lost: true },
        { from: 8, to: 8, lost: true },
      ],
    },
    {
      name: "after the last: lost",
      seqs: [1, 2],
      from: 1,
      to: 4,
      kept: [1, 2],
      gaps: [{ from: 3, to: 4, lost: true }],
    },
    { name: "nothing at all: not held", seqs: [], from: 1, to: 4, kept: [], gaps: [{ from: 1, to: 4 }] },
    { name: "a seq twice is given once", seqs: [1, 2, 2, 3], from: 1, to: 3, kept: [1, 2, 3], gaps: [] },
    {
      name: "before the first with older events held: lost",
      seqs: [5, 6],
      from: 4,
      to: 6,
      olderHeld: true,
      kept: [5, 6],
      gaps: [{ from: 4, to: 4, lost: true }],
    },
  ])("withGaps: $name", ({ seqs: given, from, to, olderHeld, kept, gaps }) => {
    const got = withGaps(
      given.map((q) => ev(q, { type: "x" })),
      from,
      to,
      olderHeld,
    );
    expect(seqs(got.events)).toEqual(kept);
    expect(got.gaps).toEqual(gaps);
  });

  it.each([
    {
      name: "apart",
      gaps: [
        { from: 5, to: 6, lost: true as const },
        { from: 1, to: 2 },
      ],
      joined: [
        { from: 1, to: 2 },
        { from: 5, to: 6, lost: true },
      ],
    },
    {
      name: "touching lost ones",
      gaps: [
        { from: 1, to: 2, lost: true as const },
        { from: 3, to: 4, lost: true as const },
      ],
      joined: [{ from: 1, to: 4, lost: true }],
    },
    {
      name: "not held then lost: not held",
      gaps: [
        { from: 1, to: 2 },
        { from: 3, to: 4, lost: true as const },
      ],
      joined: [{ from: 1, to: 4 }],
    },
  ])("joinGaps: $name", ({ gaps, joined }) => {
    expect(joinGaps(gaps)).toEqual(joined);
  });

  it("replays a seq hole in the files as a lost gap, after a restart too", () => {
    const dir = logsDir();
    const path = join(dir, "a.events.jsonl");
    writeFileSync(path, [1, 2, 5, 6].map((q) => `${line(ev(q, { type: "x", q }))}\n`).join(""));
    const log = new AgentEventLog({ logsDir: dir, name: "a", ringSize: 2 });
    log.append({ type: "y" });
    log.append({ type: "y" });
    const all = log.since(0);
    expect(seqs(all.events)).toEqual([1, 2, 5, 6, 7, 8]);
    expect(all.gaps).toEqual([{ from: 3, to: 4, lost: true }]);
    expect(log.since(3).gaps).toEqual([{ from: 4, to: 4, lost: true }]);
    log.close();
  });

  it("readLoggedRange skips foreign and torn lines", () => {
    const dir = logsDir();
    const path = join(dir, "a.events.jsonl");
    writeFileSync(
      path,
      `${line(ev(1, { type: "x" }))}\nnot json\n{"seq":2,"at":1,"event":{"ty\n${line(ev(3, { type: "x" }))}\n`,
    );
    appendFileSync(path, `${line(ev(4, { type: "x" }))}\n`);
    expect(seqs(readLoggedRange(path, 3, 1, 4, 1e9).events)).toEqual([1, 3, 4]);
    // The torn record is not held: a seq no file has although older and later ones are there, so lost.
    expect(readLoggedRange(path, 3, 2, 4, 1e9).gaps).toEqual([{ from: 2, to: 2, lost: true }]);
    expect(readLoggedRange(path, 3, 1, 4, 1e9).gaps).toEqual([{ from: 2, to: 2, lost: true }]);
  });
});
