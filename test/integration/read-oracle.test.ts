/**
 * The `read` tool's text against pi 1.6.0's, with the same files and the same calls from
 * the mock model: a file's text comes back as it is (its final newline included), the
 * totals count the empty line after a final newline as pi counts it, a limit that stops
 * early says how many lines remain, and an offset or limit of 0, below 0 or with a
 * fraction reads what pi's reads. Skipped when test/upstream is not installed.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { startOracle, UPSTREAM, type Implementation } from "../support/upstream-oracle.js";

type Line = Record<string, any>;

const { server, dirs } = useOracleFixture();
const IMPLS: Implementation[] = ["upstream", "ours"];

const numbered = (n: number) => `${Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n")}\n`;

const FILES: Record<string, string> = {
  "newline.txt": "hello\n",
  "blank-end.txt": "a\nb\n\n",
  "no-newline.txt": "one\ntwo",
  "empty.txt": "",
  "ten.txt": numbered(10),
  "long.txt": numbered(2500),
};

const CALLS: Record<string, unknown>[] = [
  { path: "newline.txt" },
  { path: "blank-end.txt" },
  { path: "no-newline.txt" },
  { path: "empty.txt" },
  { path: "ten.txt", offset: 3, limit: 2 },
  { path: "ten.txt", offset: 9 },
  { path: "ten.txt", limit: 20 },
  { path: "long.txt" },
  { path: "long.txt", offset: 2001 },
  // pi's schema takes any number: 0 and below start at the first line, a negative limit
  // counts from the end, a fraction runs through the notices' arithmetic.
  { path: "ten.txt", offset: 0, limit: 2 },
  { path: "ten.txt", offset: -3, limit: 2 },
  { path: "ten.txt", offset: 1.5, limit: 2 },
  { path: "ten.txt", offset: 3, limit: 0 },
  { path: "ten.txt", offset: 3, limit: 2.5 },
  { path: "ten.txt", offset: 2, limit: -3 },
  { path: "ten.txt", offset: 10.75 },
  { path: "ten.txt", offset: 11.5 },
  { path: "long.txt", offset: 1.5 },
];

describe.skipIf(!UPSTREAM["1.6.0"].installed)("read, as pi 1.6.0 reads", () => {
  it("gives the same text for the same files and calls", async () => {
    const result: Partial<Record<Implementation, string[]>> = {};
    for (const impl of IMPLS) {
      const { w } = startOracle(impl, server, dirs, {
        pi: "1.6.0",
        prepareProject: (p) => {
          for (const [name, text] of Object.entries(FILES)) writeFileSync(join(p, name), text);
        },
      });
      server.enqueue({ toolCalls: CALLS.map((args) => ({ name: "read", arguments: args })) }, { text: "read them" });
      const from = w.received.length;
      await w.request({ type: "prompt", message: "read the files" }, 30_000);
      await w.event("agent_settled", 30_000, from);
      const ends = w.received.slice(from).filter((l: Line) => l.type === "tool_execution_end");
      const byId = new Map(ends.map((e: Line) => [e.toolCallId, e]));
      const calls = w.received
        .slice(from)
        .filter((l: Line) => l.type === "tool_execution_start")
        .map((s: Line) => byId.get(s.toolCallId)!);
      result[impl] = calls.map((e: Line) => `${e.isError ? "error: " : ""}${e.result.content[0]?.text ?? ""}`);
      w.kill();
    }
    expect(result.upstream).toHaveLength(CALLS.length);
    expect(result.ours).toEqual(result.upstream);
  }, 90_000);
});
