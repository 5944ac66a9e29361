/**
 * The `read` tool's text against pi 1.6.0's, with the same files and the same calls from
 * the mock model: a file's text comes back as it is (its final newline included), the
 * totals count the empty line after a final newline as pi counts it, a limit that stops
 * early says how many lines remain, an offset or limit of 0, below 0 or with a fraction
 * reads what pi's reads, an offset past the end fails with pi's words, a line over the
 * 50KB limit is replaced by pi's hint, and an image is announced as pi announces it to a
 * model that takes no images; each with pi's `details`. Skipped when test/upstream is not
 * installed.
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
  "wide.txt": `${"x".repeat(60_000)}\nnext\n`,
  "wide-later.txt": `short\n${"é".repeat(40_000)}\nend`,
};
// The smallest valid PNG: 1x1 transparent pixel.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);

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
  { path: "ten.txt", offset: 12 },
  { path: "ten.txt", offset: 40, limit: 2 },
  { path: "wide.txt" },
  { path: "wide.txt", offset: 2 },
  { path: "wide-later.txt", offset: 2 },
  { path: "wide-later.txt", offset: 2, limit: 1 },
  { path: "dot.png" },
];

describe.skipIf(!UPSTREAM["1.6.0"].installed)("read, as pi 1.6.0 reads", () => {
  it("gives the same text for the same files and calls", async () => {
    const result: Partial<Record<Implementation, { text: string; details: unknown }[]>> = {};
    for (const impl of IMPLS) {
      const { w } = startOracle(impl, server, dirs, {
        pi: "1.6.0",
        prepareProject: (p) => {
          for (const [name, text] of Object.entries(FILES)) writeFileSync(join(p, name), text);
          writeFileSync(join(p, "dot.png"), PNG);
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
      result[impl] = calls.map((e: Line) => ({
        text: `${e.isError ? "error: " : ""}${e.result.content[0]?.text ?? ""}`,
        details: e.result.details,
      }));
      w.kill();
    }
    expect(result.upstream).toHaveLength(CALLS.length);
    expect(result.ours).toEqual(result.upstream);
    // pi's own words, so a change of either side is told apart from a difference.
    const at = (path: string, offset?: number) =>
      result.upstream![CALLS.findIndex((c) => c.path === path && c.offset === offset && c.limit === undefined)]!;
    expect(at("ten.txt", 12).text).toBe("error: Offset 12 is beyond end of file (11 lines total)");
    expect(at("wide.txt").text).toBe(
      "[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' wide.txt | head -c 51200]",
    );
    expect(at("wide.txt").details).toMatchObject({ truncation: { firstLineExceedsLimit: true, content: "" } });
    expect(at("dot.png")).toEqual({
      text: "Read image file [image/png]",
      details: { imageUnsupportedByModel: "mock-1" },
    });
  }, 90_000);
});
