/**
 * `get_session_stats` on our worker and on upstream pi 1.6.0 as the oracle, value for
 * value: counts, tokens, cost and the context estimate (`contextUsage`) of a fresh session
 * (0 tokens, not unknown), after a tool call and a reply, after a manual compaction
 * and after a reply after it; and a session holding a usage entry (what pi 1.6 writes for
 * a request outside a reply, a cache warm-up). Skipped when test/upstream is not installed.
 */
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { transcriptsOf, type OracleSide } from "../support/oracle-transcript.js";
import { startOracle, UPSTREAM, type Implementation } from "../support/upstream-oracle.js";

const { server, servers, dirs } = useOracleFixture();

type Line = Record<string, any>;

/** The kept stats answers, without the session's own file and id. */
const stats = (lines: unknown[]) =>
  (lines as Line[])
    .filter((l) => l.type === "response" && l.command === "get_session_stats")
    .map((l) => {
      const { sessionFile: _f, sessionId: _i, ...rest } = l.data;
      return rest;
    });

const ask = (s: OracleSide) => s.send({ type: "get_session_stats" }, true);

describe.skipIf(!UPSTREAM["1.6.0"].installed)("get_session_stats: ours and upstream pi 1.6.0", () => {
  it("counts and estimates the same from a fresh session through a compaction", async () => {
    const t = await transcriptsOf(
      servers,
      dirs,
      { pi: "1.6.0", sessions: true, prepareProject: (p) => writeFileSync(join(p, "a.txt"), "hello\n".repeat(50)) },
      async (s) => {
        await ask(s);
        await s.run(
          "read a",
          { toolCalls: [{ id: "r1", name: "read", arguments: { path: "a.txt" } }], usage: { input: 100, output: 20 } },
          { text: "done reading", usage: { input: 400, output: 30, cacheRead: 10 } },
        );
        await ask(s);
        s.server.enqueue({ text: "## Goal\nsummary", usage: { input: 50, output: 10 } });
        await s.send({ type: "compact" });
        await ask(s);
        await s.run("after", { text: "fine", usage: { input: 90, output: 3 } });
        await ask(s);
      },
    );
    expect(stats(t.ours.lines)).toEqual(stats(t.upstream.lines));
    // pi's own figures, so a change of either side is told apart from a difference.
    const upstream = stats(t.upstream.lines);
    expect(upstream[0]!.contextUsage).toEqual({ tokens: 0, contextWindow: 128_000, percent: 0 });
  }, 90_000);

  it("adds a usage entry's tokens and cost, as pi 1.6 does", async () => {
    const seen: Partial<Record<Implementation, Line>> = {};
    for (const impl of ["ours", "upstream"] as const) {
      const { w } = startOracle(impl, server, dirs, { pi: "1.6.0", sessions: true });
      server.enqueue({ text: "hello", usage: { input: 10, output: 2 } });
      const from = w.received.length;
      await w.request({ type: "prompt", message: "hi" }, 30_000);
      await w.event("agent_settled", 30_000, from);
      const file = (await w.request({ type: "get_state" })).data.sessionFile as string;
      w.kill();
      await w.exited;
      const last = JSON.parse(readFileSync(file, "utf8").trimEnd().split("\n").at(-1)!) as Line;
      const usage = {
        input: 300,
        output: 0,
        cacheRead: 0,
        cacheWrite: 700,
        totalTokens: 1000,
        cost: { input: 0.001, output: 0, cacheRead: 0, cacheWrite: 0.002, total: 0.003 },
      };
      const entry = { type: "usage", id: "u1sage01", parentId: last.id, timestamp: last.timestamp, kind: "cache_warm" };
      appendFileSync(file, `${JSON.stringify({ ...entry, provider: "mock", model: "mock-1", usage })}\n`);
      const { w: again } = startOracle(impl, server, dirs, { pi: "1.6.0", args: ["--session", file] });
      const { sessionFile: _f, sessionId: _i, ...rest } = (await again.request({ type: "get_session_stats" })).data;
      seen[impl] = rest;
      again.kill();
    }
    expect(seen.ours).toEqual(seen.upstream);
    expect(seen.upstream!.tokens).toMatchObject({ input: 310, cacheWrite: 700 });
  }, 90_000);
});
