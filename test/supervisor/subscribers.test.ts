import { afterEach, describe, expect, it, vi } from "vitest";
import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentEventLog, EventRing, type LoggedEvent } from "../../supervisor/event-log.js";
import { SubscriberHub } from "../../supervisor/subscribers.js";
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const entry = (seq: number): LoggedEvent => ({ seq, at: seq, event: { type: "message_update", n: seq } });

describe("EventRing", () => {
  it("keeps the newest events and reports the evicted range", () => {
    const ring = new EventRing(3);
    for (let s = 1; s <= 5; s++) ring.push(entry(s));
    expect(ring.since(0, 5)).toEqual({ events: [entry(3), entry(4), entry(5)], gap: { from: 1, to: 2 } });
    expect(ring.since(3, 5)).toEqual({ events: [entry(4), entry(5)], gap: null });
    expect(ring.since(5, 5)).toEqual({ events: [], gap: null });
  });
});

describe("AgentEventLog", () => {
  it("numbers events, writes them to disk, rotates by size and continues numbering after a reopen", () => {
    const logsDir = mkdtempSync(join(tmpdir(), "po-log-"));
    dirs.push(logsDir);
    const log = new AgentEventLog({ logsDir, name: "a", ringSize: 4, maxFileBytes: 200, keepFiles: 2 });
    for (let i = 0; i < 10; i++) {
      log.append({ type: "x", i }, 1);
      log.flush(); // one write batch per tick in real use
    }
    log.appendStderr("boom\n");
    log.close();
    expect(log.lastSeq).toBe(10);
    expect(log.since(0).gap).toEqual({ from: 1, to: 6 });
    expect(existsSync(join(logsDir, "a.events.jsonl.1"))).toBe(true);
    expect(readFileSync(join(logsDir, "a.stderr.log"), "utf8")).toBe("boom\n");
    const again = new AgentEventLog({ logsDir, name: "a" });
    expect(again.lastSeq).toBe(10);
    expect(again.append({ type: "y" }).seq).toBe(11);
    expect(again.since(3)).toEqual({ events: [expect.objectContaining({ seq: 11 })], gap: { from: 4, to: 10 } });
    again.close();
  });
});

describe("SubscriberHub", () => {
  const hubWith = (history: LoggedEvent[]) =>
    new SubscriberHub((_agent, since) => {
      const events = history.filter((e) => e.seq > since);
      return { events, gap: null };
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

  it("reports a since older than the held history as lagged first", async () => {
    const got: IpcStreamMessage[] = [];
    const hub = new SubscriberHub(() => ({ events: [entry(8)], gap: { from: 3, to: 7 } }));
    hub.subscribe({ agents: new Set(["a"]), since: 2, sink: { write: (m) => void got.push(m) } }, ["a"]);
    await new Promise((r) => setImmediate(r));
    expect(got).toEqual([{ type: "lagged", agent: "a", from: 3, to: 7 }, expect.objectContaining({ seq: 8 })]);
  });
});
