import { describe, expect, it, vi } from "vitest";
import type { LoggedEvent } from "../../shared/event-replay.js";
import { SubscriberHub } from "../../supervisor/subscribers.js";
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";

const entry = (seq: number): LoggedEvent => ({ seq, at: seq, event: { type: "message_update", n: seq } });

describe("SubscriberHub", () => {
  const hubWith = (history: LoggedEvent[]) =>
    new SubscriberHub((_agent, since) => {
      const events = history.filter((e) => e.seq > since);
      return { events, gaps: [] };
    });

  it("replays since a sequence number, then streams live events without a gap", async () => {
    const got: IpcStreamMessage[] = [];
    const hub = hubWith([entry(1), entry(2), entry(3)]);
    hub.subscribe({ agents: new Set(["a"]), since: 1, sink: { write: (m) => void got.push(m) } }, ["a"]);
    hub.publish("a", entry(4));
    hub.publish("b", entry(1));
    await new Promise((r) => setImmediate(r));
    expect(got.map((m) => (m.type === "event" ? m.seq : -1))).toEqual([2, 3, 4]);
  });

  it("tells a slow subscriber it lagged, continues from the present, and never blocks the fast one", async () => {
    const hub = hubWith([]);
    const fast: IpcStreamMessage[] = [];
    const slow: IpcStreamMessage[] = [];
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    let first = true;
    hub.subscribe({ agents: null, sink: { write: (m) => void fast.push(m) } }, []);
    hub.subscribe(
      {
        agents: null,
        maxBuffered: 3,
        sink: {
          write: async (m) => {
            slow.push(m);
            if (first) {
              first = false;
              await blocked; // the reader stalls on its first message
            }
          },
        },
      },
      [],
    );
    for (let s = 1; s <= 20; s++) hub.publish("a", entry(s));
    expect(fast).toHaveLength(20);
    release();
    // The backlog drains once the reader resumes: 2..4 and the lagged notice.
    await vi.waitFor(() => expect(slow).toHaveLength(5), { timeout: 2_000, interval: 5 });
    hub.publish("a", entry(21));
    await vi.waitFor(() => expect(slow).toHaveLength(6), { timeout: 2_000, interval: 5 });
    // 1 in flight, 2..4 buffered, 5..20 dropped and reported, then live again from 21.
    expect(slow).toEqual([
      expect.objectContaining({ seq: 1 }),
      expect.objectContaining({ seq: 2 }),
      expect.objectContaining({ seq: 3 }),
      expect.objectContaining({ seq: 4 }),
      { type: "lagged", agent: "a", from: 5, to: 20 },
      expect.objectContaining({ seq: 21 }),
    ]);
  });

  it("bounds a slow subscriber's queue in bytes too: big events lag it long before the message count does", async () => {
    const hub = hubWith([]);
    const slow: IpcStreamMessage[] = [];
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    let first = true;
    const sub = hub.subscribe(
      {
        agents: null,
        maxBuffered: 1_000,
        maxBufferedBytes: 10_000,
        sink: {
          write: async (m) => {
            slow.push(m);
            if (first) {
              first = false;
              await blocked;
            }
          },
        },
      },
      [],
    );
    const big = (seq: number): LoggedEvent => ({
      seq,
      at: seq,
      event: { type: "message_update", text: "x".repeat(3_000) },
    });
    // Raw JSON given, as from a worker: the wire text is what is counted.
    for (let s = 1; s <= 20; s++) hub.publish("a", big(s), JSON.stringify(big(s).event));
    // 1 in flight; 3 events of ~3 KB fit the 10,000 bytes, the 4th would not.
    expect(sub.buffered).toBe(4);
    expect(sub.bufferedBytes).toBeLessThanOrEqual(10_000);
    release();
    await vi.waitFor(() => expect(slow).toHaveLength(5), { timeout: 2_000, interval: 5 });
    expect(slow.map((m) => (m.type === "event" ? m.seq : `lagged ${m.from}-${m.to}`))).toEqual([
      1,
      2,
      3,
      4,
      "lagged 5-20",
    ]);
    expect(sub.bufferedBytes).toBe(0);
    // One event bigger than the whole budget still goes through to a reader that keeps up.
    hub.publish("a", { seq: 21, at: 21, event: { type: "message_update", text: "y".repeat(20_000) } });
    await vi.waitFor(() => expect(slow).toHaveLength(6), { timeout: 2_000, interval: 5 });
    expect(slow[5]).toMatchObject({ seq: 21 });
  });

  it("reports a since older than the held history as lagged first", async () => {
    const got: IpcStreamMessage[] = [];
    const hub = new SubscriberHub(() => ({ events: [entry(8)], gaps: [{ from: 3, to: 7 }] }));
    hub.subscribe({ agents: new Set(["a"]), since: 2, sink: { write: (m) => void got.push(m) } }, ["a"]);
    await new Promise((r) => setImmediate(r));
    expect(got).toEqual([{ type: "lagged", agent: "a", from: 3, to: 7 }, expect.objectContaining({ seq: 8 })]);
  });

  it("replays each gap where it stands among the events, a lost one with its reason", async () => {
    const got: IpcStreamMessage[] = [];
    const hub = new SubscriberHub(() => ({
      events: [entry(3), entry(6), entry(7)],
      gaps: [
        { from: 1, to: 2 },
        { from: 4, to: 5, lost: true },
        { from: 8, to: 9, lost: true },
      ],
    }));
    hub.subscribe({ agents: new Set(["a"]), since: 0, sink: { write: (m) => void got.push(m) } }, ["a"]);
    await new Promise((r) => setImmediate(r));
    expect(
      got.map((m) => (m.type === "event" ? m.seq : `lagged ${m.from}-${m.to}${m.reason ? ` ${m.reason}` : ""}`)),
    ).toEqual(["lagged 1-2", 3, "lagged 4-5 not_logged", 6, 7, "lagged 8-9 not_logged"]);
  });

  it("tells live subscribers of a lost gap in its place; one already behind has its notice widened over it", async () => {
    const hub = hubWith([]);
    const fast: IpcStreamMessage[] = [];
    const slow: IpcStreamMessage[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    hub.subscribe({ agents: new Set(["a"]), sink: { write: (m) => void fast.push(m) } }, ["a"]);
    hub.subscribe({ agents: new Set(["a"]), maxBuffered: 2, sink: { write: (m) => (slow.push(m), gate) } }, ["a"]);
    for (const seq of [1, 2, 3, 4]) hub.publish("a", entry(seq));
    hub.publishGap("a", { from: 5, to: 7, lost: true });
    hub.publish("a", entry(8));
    release();
    await vi.waitFor(() => expect(slow.length).toBeGreaterThanOrEqual(4), { timeout: 2_000, interval: 5 });
    const show = (m: IpcStreamMessage) =>
      m.type === "event" ? m.seq : `lagged ${m.from}-${m.to}${m.reason ? ` ${m.reason}` : ""}`;
    expect(fast.map(show)).toEqual([1, 2, 3, 4, "lagged 5-7 not_logged", 8]);
    expect(slow.map(show)).toEqual([1, 2, 3, "lagged 4-8"]);
  });

  it("hands a text sink a published batch as JSON lines in one write, built once for every follower", async () => {
    const hub = hubWith([]);
    const writes: string[][] = [[], []];
    for (const w of writes)
      hub.subscribe(
        {
          agents: null,
          sink: { write: () => expect.fail("a text sink gets lines"), writeLines: (t) => void w.push(t) },
        },
        [],
      );
    const raw = (n: number) => `{"type":"message_update","n":${n}}`;
    for (let s = 1; s <= 3; s++) hub.publish("a", entry(s), raw(s), false);
    // A supervisor event has no raw line: its message is serialised.
    hub.publish("a", { seq: 4, at: 4, event: { type: "agent_status", status: "idle" } }, undefined, false);
    expect(writes[0]).toEqual([]);
    hub.deliver();
    for (const w of writes) {
      expect(w).toHaveLength(1);
      const lines = w[0]!.split("\n");
      expect(lines.pop()).toBe("");
      expect(lines.map((l) => JSON.parse(l))).toEqual([
        ...[1, 2, 3].map((s) => ({
          type: "event",
          agent: "a",
          seq: s,
          at: s,
          event: { type: "message_update", n: s },
        })),
        { type: "event", agent: "a", seq: 4, at: 4, event: { type: "agent_status", status: "idle" } },
      ]);
    }
  });

  it("writes a live line byte for byte as its message serialised, whatever the times of the batch", () => {
    const hub = hubWith([]);
    const texts: string[] = [];
    hub.subscribe(
      {
        agents: null,
        sink: { write: () => expect.fail("a text sink gets lines"), writeLines: (t) => void texts.push(t) },
      },
      [],
    );
    // Times of the wall clock (13 digits), repeated and going back and forth between agents.
    const sent = [
      { agent: "a", seq: 7, at: 1_796_520_533_630, event: { type: "message_update", delta: "x\u2028y" } },
      { agent: "b", seq: 1, at: 1_796_520_533_630, event: { type: "tool_execution_update", toolCallId: "t" } },
      { agent: "a", seq: 8, at: 1_796_520_533_631, event: { type: "message_update", n: 1.5 } },
      { agent: "b", seq: 2, at: 1_796_520_533_630, event: { type: "turn_end" } },
      { agent: 'q"uote', seq: 99_999, at: 1_796_520_533_632, event: { type: "agent_end" } },
    ];
    for (const m of sent)
      hub.publish(m.agent, { seq: m.seq, at: m.at, event: m.event }, JSON.stringify(m.event), false);
    hub.deliver();
    expect(texts).toEqual([sent.map((m) => `${JSON.stringify({ type: "event", ...m })}\n`).join("")]);
  });

  it("gives text sinks that follow different agents each their own lines of one batch", () => {
    const hub = hubWith([]);
    const follows = [["a"], ["a", "b"], ["a"], ["b"]];
    const writes = follows.map(() => [] as string[]);
    follows.forEach((agents, i) =>
      hub.subscribe(
        {
          agents: new Set(agents),
          sink: { write: () => expect.fail("a text sink gets lines"), writeLines: (t) => void writes[i]!.push(t) },
        },
        [],
      ),
    );
    hub.publish("a", entry(1), '{"n":"a1"}', false);
    hub.publish("b", entry(1), '{"n":"b1"}', false);
    hub.publish("a", entry(2), '{"n":"a2"}', false);
    hub.deliver();
    const got = writes.map((w) =>
      w
        .join("")
        .split("\n")
        .filter(Boolean)
        .map(
          (l) => `${(JSON.parse(l) as { agent: string }).agent}${(JSON.parse(l) as { event: { n: string } }).event.n}`,
        ),
    );
    expect(got).toEqual([["aa1", "aa2"], ["aa1", "bb1", "aa2"], ["aa1", "aa2"], ["bb1"]]);
  });

  it("lags a slow text sink by its budget and tells it in the stream", async () => {
    const hub = hubWith([]);
    const texts: string[] = [];
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    let first = true;
    hub.subscribe(
      {
        agents: null,
        maxBuffered: 3,
        sink: {
          write: () => expect.fail("a text sink gets lines"),
          writeLines: async (t) => {
            texts.push(t);
            if (first) {
              first = false;
              await blocked;
            }
          },
        },
      },
      [],
    );
    for (let s = 1; s <= 20; s++) hub.publish("a", entry(s), `{"type":"message_update","n":${s}}`);
    release();
    await vi.waitFor(() => expect(texts.join("").split("\n").filter(Boolean)).toHaveLength(5), {
      timeout: 2_000,
      interval: 5,
    });
    const got = texts
      .join("")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as IpcStreamMessage);
    expect(got.map((m) => (m.type === "event" ? m.seq : `lagged ${m.from}-${m.to}`))).toEqual([
      1,
      2,
      3,
      4,
      "lagged 5-20",
    ]);
  });
});
