/**
 * When pi 1.6.0 compacts past the threshold, side by side with it on one scripted model
 * (a 1,000-token window, a 200-token reserve, so a reply reporting 910 tokens crosses it):
 * between the turns of a run only when another turn follows (after a tool batch, before
 * the next request), and after a run's last turn only once its `agent_end` went out (then
 * `agent_settled`). A single exchange crosses it too, but a compaction needs something to
 * summarize before the kept part: with one turn, neither side compacts. Before a prompt's
 * run too (automatic compaction turned on again past the threshold), ahead of its response
 * and `agent_start`. A reply's usage is not trusted once a `context_edit` came after it:
 * the projection is estimated instead (an extension's turn_end edit). A steer sent during a
 * between-turn compaction joins the turn after it. Both sides must
 * send the same requests, emit the compaction events in the same places, write the same
 * entries and report the same context usage. Skipped when test/upstream is not installed.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { MockReply, RecordedRequest } from "../support/mock-model-server.js";
import { useOracleFixture } from "../support/oracle-fixture.js";
import type { RpcWorker } from "../support/rpc-worker.js";
import { entryShape, isSummaryRequest, requestShape } from "../support/session-shape.js";
import { mockModelsJson, startOracle, UPSTREAM, type Implementation } from "../support/upstream-oracle.js";

type Line = Record<string, any>;

const { server, dirs, dir } = useOracleFixture();
const IMPLS: Implementation[] = ["upstream", "ours"];
const LONG = "words ".repeat(20);
/** A reply that reports 910 tokens of context: past 1,000 - 200. */
const FULL = { input: 900, output: 10 };

/** A `contextWindow`-token window (1,000 unless said), a `reserveTokens` reserve (200) and a 10-token kept part. */
function prepare(home: string, contextWindow = 1000, reserveTokens = 200): void {
  const models = mockModelsJson(server) as Line;
  models.providers.mock.models[0].contextWindow = contextWindow;
  writeFileSync(join(home, "models.json"), JSON.stringify(models));
  writeFileSync(join(home, "settings.json"), JSON.stringify({ compaction: { reserveTokens, keepRecentTokens: 10 } }));
}

/**
 * Queue `replies` for the conversation's requests and `summaries` answers for summary
 * requests, each taken by what is asked (a split turn's two summary requests run at once).
 */
function script(replies: MockReply[], summaries: number): void {
  const pick = (req: RecordedRequest): MockReply =>
    isSummaryRequest(req.body as Line) ? { text: "## Summary\nearlier work" } : replies.shift()!;
  server.enqueue(...Array.from({ length: replies.length + summaries }, () => pick));
}

/** The run's events that place a compaction: its start and end (with what it reports) among the run's own. */
function placed(lines: Line[]): string[] {
  const kept = [
    "agent_start",
    "turn_start",
    "turn_end",
    "agent_end",
    "compaction_start",
    "compaction_end",
    "agent_settled",
  ];
  return lines
    .filter((l) => kept.includes(l.type))
    .map((l) =>
      l.type === "compaction_end"
        ? `compaction_end(${l.reason},${l.result?.tokensBefore},${l.willRetry},${l.aborted})`
        : l.type === "compaction_start"
          ? `compaction_start(${l.reason})`
          : l.type,
    );
}

async function run(w: RpcWorker, message: string): Promise<string[]> {
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message }, 30_000)).toMatchObject({ success: true });
  await w.event("agent_settled", 30_000, from);
  return placed(w.received.slice(from) as Line[]);
}

/** The prompt's own response placed among the run's events too (the request's id is known by its command). */
async function runWithResponse(w: RpcWorker, message: string): Promise<string[]> {
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message }, 30_000)).toMatchObject({ success: true });
  await w.event("agent_settled", 30_000, from);
  const lines = w.received.slice(from) as Line[];
  const at = lines.findIndex((l) => l.type === "response" && l.command === "prompt");
  const events = placed(lines.slice(0, at));
  return [...events, "response(prompt)", ...placed(lines.slice(at + 1))];
}

interface Side {
  runs: string[][];
  usage: unknown[];
  entries: Line[];
  summaryRequests: boolean[];
  requests: Line[];
}

/** The same script on pi 1.6.0, then on ours (one at a time: they share the mock's queue). */
async function bothSides<T>(make: (impl: Implementation) => Promise<T>): Promise<Record<Implementation, T>> {
  const sides = {} as Record<Implementation, T>;
  for (const impl of IMPLS) sides[impl] = await make(impl);
  return sides;
}

/** The same entries, the same summary requests at the same places and the same requests. */
function expectSameSession(ours: Side, upstream: Side): void {
  expect(ours.entries).toEqual(upstream.entries);
  expect(ours.summaryRequests).toEqual(upstream.summaryRequests);
  expect(ours.requests).toEqual(upstream.requests);
}

/** One side's record once its script ran: its entries, and the requests since `at`, split. */
async function ended(w: RpcWorker, at: number, runs: string[][], usage: unknown[]): Promise<Side> {
  const { entries } = (await w.request({ type: "get_entries" })).data as Line;
  w.kill();
  const bodies = server.requests.slice(at).map((r) => r.body as Line);
  return {
    runs,
    usage,
    entries: entryShape(entries, false),
    summaryRequests: bodies.map(isSummaryRequest),
    requests: bodies.filter((b) => !isSummaryRequest(b)).map(requestShape),
  };
}

async function side(impl: Implementation): Promise<Side> {
  const { w } = startOracle(impl, server, dirs, {
    pi: "1.6.0",
    prepare,
    prepareProject: (project) => writeFileSync(join(project, "notes.txt"), `notes ${LONG}\n`),
  });
  const at = server.requests.length;
  const runs: string[][] = [];
  const usage: unknown[] = [];
  const contextUsage = async () => ((await w.request({ type: "get_session_stats" })).data as Line).contextUsage;
  // One exchange at 910 tokens: nothing before it to summarize.
  script([{ text: "one", usage: FULL }], 0);
  runs.push(await run(w, `question 1 ${LONG}`));
  usage.push(await contextUsage());
  // A tool call at 910 tokens: compacted before the next request of the run, not after its last.
  script(
    [
      { toolCalls: [{ id: "call_0", name: "read", arguments: { path: "notes.txt" } }], usage: FULL },
      { text: "read it", usage: { input: 40, output: 5 } },
    ],
    2,
  );
  runs.push(await run(w, `question 2 ${LONG}`));
  usage.push(await contextUsage());
  // The run's last reply at 910 tokens: compacted after agent_end.
  script([{ text: "three", usage: FULL }], 1);
  runs.push(await run(w, `question 3 ${LONG}`));
  usage.push(await contextUsage());
  return ended(w, at, runs, usage);
}

/** Past the threshold with automatic compaction off, then on: the next prompt compacts first. */
async function prePromptSide(impl: Implementation): Promise<Side> {
  const { w } = startOracle(impl, server, dirs, { pi: "1.6.0", prepare });
  const at = server.requests.length;
  expect(await w.request({ type: "set_auto_compaction", enabled: false })).toMatchObject({ success: true });
  const runs: string[][] = [];
  script([{ text: "one", usage: { input: 40, output: 5 } }], 0);
  runs.push(await run(w, `question 1 ${LONG}`));
  script([{ text: "two", usage: FULL }], 0);
  runs.push(await run(w, `question 2 ${LONG}`));
  expect(await w.request({ type: "set_auto_compaction", enabled: true })).toMatchObject({ success: true });
  script([{ text: "three", usage: { input: 60, output: 5 } }], 1);
  runs.push(await runWithResponse(w, `question 3 ${LONG}`));
  const usage = [((await w.request({ type: "get_session_stats" })).data as Line).contextUsage];
  return ended(w, at, runs, usage);
}

/** On the third completed turn without tools, leave the first prompt out of the context. */
const OMIT_FIRST_PROMPT = `export default function (pi) {
  let turns = 0;
  pi.on("turn_end", async (event, ctx) => {
    if (event.outcome !== "completed" || event.toolResults.length > 0 || ++turns !== 3) return;
    const first = ctx.sessionManager.getBranch().find((e) => e.type === "message" && e.message.role === "user");
    return { entries: [...event.entries, { type: "context_edit", targetId: first.id, replacement: null }] };
  });
}
`;

/**
 * A reply's usage past the threshold, then an extension's context edit after it: the
 * projection is estimated instead (the system prompt and three short messages, far below).
 */
async function editedSide(impl: Implementation): Promise<Side> {
  const extension = join(dir("pi-omit-first-"), "omit-first.ts");
  writeFileSync(extension, OMIT_FIRST_PROMPT);
  const { w } = startOracle(impl, server, dirs, {
    pi: "1.6.0",
    args: ["-e", extension],
    prepare: (home) => prepare(home, 100_000, 20_000),
  });
  const at = server.requests.length;
  const runs: string[][] = [];
  script([{ text: "one", usage: { input: 40, output: 5 } }], 0);
  runs.push(await run(w, `question 1 ${LONG}`));
  script([{ text: "one more", usage: { input: 50, output: 5 } }], 0);
  runs.push(await run(w, `question 1b ${LONG}`));
  // 90,000 of 100,000 (20,000 reserve): past the threshold by the reply's own count.
  script([{ text: "two", usage: { input: 90_000, output: 10 } }], 0);
  runs.push(await run(w, `question 2 ${LONG}`));
  const usage = [((await w.request({ type: "get_session_stats" })).data as Line).contextUsage];
  script([{ text: "three", usage: { input: 60, output: 5 } }], 0);
  runs.push(await run(w, `question 3 ${LONG}`));
  return ended(w, at, runs, usage);
}

/** A steer sent once a between-turn compaction started: the request after it, per side. */
async function steeredSide(impl: Implementation): Promise<Line[]> {
  const { w } = startOracle(impl, server, dirs, {
    pi: "1.6.0",
    prepare,
    prepareProject: (project) => writeFileSync(join(project, "notes.txt"), `notes ${LONG}\n`),
  });
  const at = server.requests.length;
  script([{ text: "one", usage: { input: 40, output: 5 } }], 0);
  await run(w, `question 1 ${LONG}`);
  const from = w.received.length;
  const replies: MockReply[] = [
    { toolCalls: [{ id: "call_0", name: "read", arguments: { path: "notes.txt" } }], usage: FULL },
    { text: "read it", usage: { input: 40, output: 5 } },
  ];
  // The summaries stream slowly, so the steer surely comes while the compaction runs.
  server.enqueue(
    ...Array.from(
      { length: 4 },
      () =>
        (req: RecordedRequest): MockReply =>
          isSummaryRequest(req.body as Line)
            ? { text: ["## Summary", "\nearlier", " work"], chunkDelayMs: 150 }
            : replies.shift()!,
    ),
  );
  expect(await w.request({ type: "prompt", message: `question 2 ${LONG}` }, 30_000)).toMatchObject({ success: true });
  await w.event("compaction_start", 30_000, from);
  expect(await w.request({ type: "steer", message: "steer now" })).toMatchObject({ success: true });
  await w.event("agent_settled", 30_000, from);
  w.kill();
  return server.requests
    .slice(at)
    .map((r) => r.body as Line)
    .filter((b) => !isSummaryRequest(b))
    .map(requestShape);
}

describe.skipIf(!UPSTREAM["1.6.0"].installed)("threshold compaction at pi 1.6.0's points of a run", () => {
  it("takes a steer sent during a between-turn compaction into the next turn", async () => {
    const sides = await bothSides(steeredSide);
    expect(sides.upstream).toHaveLength(3);
    expect(JSON.stringify(sides.upstream[2])).toContain("steer now");
    expect(sides.ours).toEqual(sides.upstream);
  }, 120_000);

  it("does not trust a reply's usage once a context edit came after it", async () => {
    const { ours, upstream } = await bothSides(editedSide);
    const plain = ["agent_start", "turn_start", "turn_end", "agent_end", "agent_settled"];
    expect(upstream.runs).toEqual([plain, plain, plain, plain]);
    expect(upstream.summaryRequests).toEqual([false, false, false, false]);
    expect(ours.runs).toEqual(upstream.runs);
    // get_session_stats estimates the projection too (its system message and three short
    // messages), not the 90,010 the reply reported. The figures differ by the recorded
    // system message: its sections are in our own words (the tools' texts are pi's).
    const tokens = (side: Side) => (side.usage[0] as Line).tokens as number;
    expect(tokens(upstream)).toBeLessThan(5_000);
    expect(tokens(ours)).toBeLessThan(5_000);
    expectSameSession(ours, upstream);
  }, 120_000);

  it("before a prompt's run, once automatic compaction is on again past the threshold", async () => {
    const { ours, upstream } = await bothSides(prePromptSide);
    expect(upstream.runs[2]).toEqual([
      "compaction_start(threshold)",
      "compaction_end(threshold,910,false,false)",
      "response(prompt)",
      "agent_start",
      "turn_start",
      "turn_end",
      "agent_end",
      "agent_settled",
    ]);
    expect(upstream.summaryRequests).toEqual([false, false, true, false]);
    expect(ours.runs).toEqual(upstream.runs);
    expect(ours.usage).toEqual(upstream.usage);
    expectSameSession(ours, upstream);
  }, 120_000);

  it("between turns when one follows, after agent_end at the run's end, never with nothing to summarize", async () => {
    const { ours, upstream } = await bothSides(side);

    expect(upstream.runs).toEqual([
      ["agent_start", "turn_start", "turn_end", "agent_end", "agent_settled"],
      [
        "agent_start",
        "turn_start",
        "turn_end",
        "compaction_start(threshold)",
        // 910 and the tool result's estimate.
        "compaction_end(threshold,942,false,false)",
        "turn_start",
        "turn_end",
        "agent_end",
        "agent_settled",
      ],
      [
        "agent_start",
        "turn_start",
        "turn_end",
        "agent_end",
        "compaction_start(threshold)",
        "compaction_end(threshold,910,false,false)",
        "agent_settled",
      ],
    ]);
    // The size is known again only from a reply after the compaction.
    expect(upstream.usage.map((u) => (u as Line).tokens)).toEqual([910, 45, null]);
    expect(ours.runs).toEqual(upstream.runs);
    expect(ours.usage).toEqual(upstream.usage);
    expectSameSession(ours, upstream);
  }, 120_000);
});
