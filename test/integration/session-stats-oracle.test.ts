/**
 * `get_session_stats` on our worker and on upstream pi 1.6.0 as the oracle, value for
 * value: counts, tokens, cost and the context estimate (`contextUsage`) of a fresh session
 * (0 tokens, not unknown), after a tool call and a reply, after a manual compaction
 * and after a reply after it. Skipped when test/upstream is not installed.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { transcriptsOf, type OracleSide } from "../support/oracle-transcript.js";
import { UPSTREAM } from "../support/upstream-oracle.js";

const { servers, dirs } = useOracleFixture();

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
});
