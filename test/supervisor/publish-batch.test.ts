/**
 * The publish batch as the supervisor drives it: events of many agents staged in one
 * turn of the event loop, each agent's lines written in one write, then one socket-sized
 * write per subscriber. These pin what coalescing must never trade away: every event
 * arrives, in each agent's seq order, only after its log line is with the OS, a slow
 * subscriber is still told it lagged, and an event the disk refused waits.
 */
import { afterEach, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, rmdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentEventLog } from "../../supervisor/event-log.js";
import { PublishBatch } from "../../supervisor/publish-batch.js";
import { SubscriberHub, type SubscriberSink } from "../../supervisor/subscribers.js";
import { agentLogPaths } from "../../shared/paths.js";
import { scanEventType, scannedToolCallId } from "../../shared/event-type.js";

const dirs: string[] = [];
const logs: AgentEventLog[] = [];
afterEach(() => {
  for (const log of logs.splice(0)) log.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/**
 * How the actor logs a worker's line: parsed (`append`), or as its JSON and type when the
 * routing scan found it (`forward`, shared/event-type.ts). Every test runs with both.
 */
type Logging = "append" | "forward";

/** A supervisor's pieces without its processes: batched logs, the hub, the batch. */
function setup(agents: string[], logging: Logging = "append") {
  const logsDir = mkdtempSync(join(tmpdir(), "po-batch-"));
  dirs.push(logsDir);
  const logOf = new Map<string, AgentEventLog>();
  const hub = new SubscriberHub((agent, since) => logOf.get(agent)?.since(since));
  const batch = new PublishBatch(hub);
  for (const name of agents) {
    const log: AgentEventLog = new AgentEventLog({
      logsDir,
      name,
      batched: true,
      onWritten: () => batch.wake(name, log),
    });
    logs.push(log);
    logOf.set(name, log);
  }
  /** What the actor does with a worker's line: log it (staged), then hand it to the batch. */
  const emit = (agent: string, event: Record<string, unknown>) => {
    const raw = JSON.stringify(event);
    const log = logOf.get(agent)!;
    const entry =
      logging === "forward" && scanEventType(raw) !== null
        ? log.forward(event.type as string, raw, Date.now(), scannedToolCallId())
        : log.append(event, Date.now(), raw);
    batch.add(agent, log, entry, raw);
  };
  /** Seqs on disk in `agent`'s events file, read when called. */
  const onDisk = (agent: string): number[] => {
    let text = "";
    try {
      text = readFileSync(agentLogPaths(logsDir, agent).events, "utf8");
    } catch {
      return [];
    }
    return text
      .split("\n")
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { seq: number }).seq);
  };
  return { logsDir, hub, batch, emit, onDisk, logOf };
}

type Line = { type: string; agent: string; seq?: number; from?: number; to?: number; event?: { n?: number } };

/** A text sink recording each write, as the socket server's sink hands lines to its socket. */
function recordingSink(onWrite?: (text: string) => Promise<void> | void): { sink: SubscriberSink; writes: string[] } {
  const writes: string[] = [];
  return {
    writes,
    sink: {
      write: () => expect.fail("a text sink gets lines"),
      writeLines: (text) => {
        writes.push(text);
        return onWrite?.(text);
      },
    },
  };
}

const linesOf = (writes: string[]): Line[] =>
  writes
    .join("")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
const turn = () => new Promise<void>((r) => setImmediate(r));

describe.each<Logging>(["append", "forward"])("PublishBatch, events logged by %s", (logging) => {
  it("gives two subscribers the events of many agents staged in one turn, complete and in each agent's order, in one write each, after their log lines", async () => {
    const agents = Array.from({ length: 12 }, (_, i) => `a${i}`);
    const { hub, emit, onDisk } = setup(agents, logging);
    const subs = [0, 1].map(() =>
      recordingSink((text) => {
        // Write-ahead: every event a subscriber is handed is in its agent's log file already.
        for (const l of linesOf([text])) expect(onDisk(l.agent)).toContain(l.seq);
      }),
    );
    for (const s of subs) hub.subscribe({ agents: null, sink: s.sink }, []);
    // Interleaved as pipe reads of one turn deliver them: agent by agent, a few lines each, round after round.
    const perAgent = 9;
    for (let round = 0; round < 3; round++)
      for (const agent of agents)
        for (let i = 0; i < 3; i++) emit(agent, { type: "message_update", n: round * 3 + i + 1 });
    for (const agent of agents) expect(onDisk(agent)).toEqual([]);
    for (const s of subs) expect(s.writes).toEqual([]);
    await turn();
    for (const agent of agents) expect(onDisk(agent)).toEqual(Array.from({ length: perAgent }, (_, i) => i + 1));
    for (const s of subs) {
      expect(s.writes).toHaveLength(1);
      const lines = linesOf(s.writes);
      expect(lines).toHaveLength(agents.length * perAgent);
      for (const agent of agents) {
        const own = lines.filter((l) => l.agent === agent);
        expect(own.map((l) => l.seq)).toEqual(Array.from({ length: perAgent }, (_, i) => i + 1));
        expect(own.map((l) => l.event?.n)).toEqual(Array.from({ length: perAgent }, (_, i) => i + 1));
      }
    }
    expect(subs[1]!.writes).toEqual(subs[0]!.writes);
    // The next turn is a write of its own, carrying only its events.
    emit("a3", { type: "message_update", n: 10 });
    emit("a0", { type: "message_update", n: 10 });
    await turn();
    for (const s of subs) {
      expect(s.writes).toHaveLength(2);
      expect(linesOf(s.writes.slice(1)).map((l) => `${l.agent}:${l.seq}`)).toEqual(["a3:10", "a0:10"]);
    }
  });

  it("still lags a slow subscriber by its budget while the fast one gets every event", async () => {
    const agents = ["a", "b", "c"];
    const { hub, emit } = setup(agents, logging);
    const fast = recordingSink();
    let release!: () => void;
    const stuck = new Promise<void>((r) => (release = r));
    let first = true;
    // The first write is not taken until released: what follows queues against the budget.
    const slow = recordingSink(() => {
      if (!first) return;
      first = false;
      return stuck;
    });
    hub.subscribe({ agents: null, sink: fast.sink }, []);
    hub.subscribe({ agents: null, sink: slow.sink, maxBuffered: 4 }, []);
    for (const agent of agents) emit(agent, { type: "message_update", n: 1 });
    await turn();
    for (let i = 2; i <= 5; i++) for (const agent of agents) emit(agent, { type: "message_update", n: i });
    await turn();
    for (const agent of agents) emit(agent, { type: "message_update", n: 6 });
    await turn();
    expect(slow.writes).toHaveLength(1);
    release();
    await stuck;
    await turn();
    const fastLines = linesOf(fast.writes);
    expect(fastLines).toHaveLength(18);
    for (const agent of agents)
      expect(fastLines.filter((l) => l.agent === agent).map((l) => l.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    // Four messages fitted behind the stuck write; from then on each agent is one lagged notice, widened to its last seq.
    const slowLines = linesOf(slow.writes);
    const show = (l: Line) => (l.type === "lagged" ? `${l.agent} lagged ${l.from}-${l.to}` : `${l.agent}:${l.seq}`);
    expect(slowLines.map(show)).toEqual([
      "a:1",
      "b:1",
      "c:1",
      "a:2",
      "b:2",
      "c:2",
      "a:3",
      "b lagged 3-6",
      "c lagged 3-6",
      "a lagged 4-6",
    ]);
  });

  it("holds back the events of an agent whose log write the disk refused, publishes the others, and the held ones in order once written", async () => {
    const { hub, emit, onDisk, logsDir, logOf } = setup(["ok", "refused"], logging);
    const sub = recordingSink();
    hub.subscribe({ agents: null, sink: sub.sink }, []);
    // The events file cannot be opened for writing (a folder in its place): every write is refused.
    const events = agentLogPaths(logsDir, "refused").events;
    mkdirSync(events);
    for (let i = 1; i <= 3; i++) {
      emit("refused", { type: "message_update", n: i });
      emit("ok", { type: "message_update", n: i });
    }
    await turn();
    expect(linesOf(sub.writes).map((l) => `${l.agent}:${l.seq}`)).toEqual(["ok:1", "ok:2", "ok:3"]);
    expect(logOf.get("refused")!.isWithheld(1)).toBe(true);
    // Events that come while the disk refuses wait behind the first ones.
    emit("refused", { type: "message_update", n: 4 });
    await turn();
    expect(linesOf(sub.writes).filter((l) => l.agent === "refused")).toEqual([]);
    rmdirSync(events);
    // The disk takes writes again: the backlog is written, and its events are published in the next turn.
    logOf.get("refused")!.flush();
    expect(onDisk("refused")).toEqual([1, 2, 3, 4]);
    await turn();
    const refused = linesOf(sub.writes).filter((l) => l.agent === "refused");
    expect(refused.map((l) => l.seq)).toEqual([1, 2, 3, 4]);
    expect(refused.map((l) => l.event?.n)).toEqual([1, 2, 3, 4]);
  });
});

describe("PublishBatch with forwarded events", () => {
  it("gives a text subscriber the very lines, and one in this process the very events, of events parsed and logged", async () => {
    const events = [
      { type: "message_update", delta: 'a "quoted"\nline \\ é 😀 \u2028', n: 1 },
      { type: "tool_execution_update", toolCallId: "t1", partialResult: { content: [] } },
      { type: "turn_end", message: { content: [{ type: "text", text: "" }] } },
    ];
    const outputs = [];
    for (const logging of ["append", "forward"] as const) {
      const { hub, emit } = setup(["a"], logging);
      const text = recordingSink();
      const objects: unknown[] = [];
      hub.subscribe({ agents: null, sink: text.sink }, []);
      hub.subscribe({ agents: null, sink: { write: (m) => void objects.push(m) } }, []);
      for (const event of events) emit("a", event);
      await turn();
      // A late subscriber's replay from the ring too.
      const replayed: unknown[] = [];
      hub.subscribe({ agents: null, since: 0, sink: { write: (m) => void replayed.push(m) } }, ["a"]);
      outputs.push({ text: text.writes.join("").replace(/"at":\d+/g, '"at":0'), objects, replayed });
    }
    const [appended, forwarded] = outputs;
    expect(forwarded!.text).toBe(appended!.text);
    expect(linesOf([forwarded!.text]).map((l) => l.event)).toEqual(events);
    const noAt = (list: unknown[]) => list.map((m) => ({ ...(m as object), at: 0 }));
    expect(noAt(forwarded!.objects)).toEqual(noAt(appended!.objects));
    expect(noAt(forwarded!.replayed)).toEqual(noAt(appended!.replayed));
    expect(forwarded!.objects.map((m) => (m as { event: unknown }).event)).toEqual(events);
  });
});
