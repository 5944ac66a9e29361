/**
 * Tool calls that end without running as asked, on our worker and on upstream pi 1.6.0 as
 * the oracle: the calls of a reply the output token limit cut off. The same mock model
 * script runs on both; the transcripts (events, messages, and what the next request
 * carries to the model) must be equal. Skipped when test/upstream is not installed.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { transcriptsOf } from "../support/oracle-transcript.js";
import { UPSTREAM } from "../support/upstream-oracle.js";

const { servers, dirs } = useOracleFixture();

type Line = Record<string, any>;

/** The tool results' texts of a transcript, in order. */
const resultTexts = (lines: unknown[]): string[] =>
  (lines as Line[])
    .filter((l) => l.type === "message_end" && l.message.role === "toolResult")
    .map((l) => l.message.content.map((c: Line) => c.text).join(""));

describe.skipIf(!UPSTREAM["1.6.0"].installed)("tool call outcomes: our worker and upstream pi 1.6.0", () => {
  it("runs none of the calls of a reply cut off by the output token limit", async () => {
    const t = await transcriptsOf(
      servers,
      dirs,
      { pi: "1.6.0", prepareProject: (p) => writeFileSync(join(p, "a.txt"), "one\n") },
      async (s) => {
        await s.run(
          "read and write",
          {
            stopReason: "length",
            toolCalls: [
              { id: "c1", name: "read", arguments: { path: "a.txt" } },
              { id: "c2", name: "nothere", arguments: {} },
              { id: "c3", name: "write", arguments: { path: "b.txt", content: "half" } },
            ],
          },
          { text: "done" },
        );
      },
    );
    expect(t.ours.lines).toEqual(t.upstream.lines);
    expect(t.ours.requests.map((r) => r.messages)).toEqual(t.upstream.requests.map((r) => r.messages));
    const cut = (name: string) =>
      `Tool call "${name}" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments.`;
    expect(resultTexts(t.upstream.lines)).toEqual([cut("read"), cut("nothere"), cut("write")]);
  }, 60_000);
});
