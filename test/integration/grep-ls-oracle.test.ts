/**
 * What grep and ls answer at their limits, on our worker and on upstream pi 1.6.0 as the
 * oracle: the same tool calls on the same files through the same mock model script; each
 * call's `tool_execution_end` (text and `details`), its tool result message and what the
 * next request carries to the model must be equal. grep: the match limit, the byte limit,
 * lines cut at 500 characters; ls: the entry limit, the byte limit, the order, what `stat`
 * cannot reach. Skipped when test/upstream is not installed.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { transcriptsOf } from "../support/oracle-transcript.js";
import { UPSTREAM } from "../support/upstream-oracle.js";

const { servers, dirs } = useOracleFixture();

type Line = Record<string, any>;

interface Call {
  name: string;
  arguments: Record<string, unknown>;
}

/** The tool results of running `calls` one per model turn on both sides, after `prepare` made the project's files. */
async function resultsOf(prepare: (project: string) => void, calls: Call[]) {
  const t = await transcriptsOf(
    servers,
    dirs,
    { pi: "1.6.0", args: ["--tools", "grep,ls"], prepareProject: prepare },
    async (s) => {
      await s.run("go", ...calls.map((c, i) => ({ toolCalls: [{ id: `c${i}`, ...c }] })), { text: "done" });
    },
  );
  expect(t.ours.lines).toEqual(t.upstream.lines);
  expect(t.ours.requests.map((r) => r.messages)).toEqual(t.upstream.requests.map((r) => r.messages));
  return (t.upstream.lines as Line[])
    .filter((l) => l.type === "tool_execution_end")
    .map((l) => ({ text: l.result.content[0]?.text as string, details: l.result.details, isError: l.isError }));
}

const numbered = (n: number, word = "line") => Array.from({ length: n }, (_, i) => `${word} ${i + 1}`).join("\n");

describe.skipIf(!UPSTREAM["1.6.0"].installed)("grep and ls at their limits: ours and upstream pi 1.6.0", () => {
  it("grep: the match limit, the byte limit, lines cut at 500 characters, context at the limit", async () => {
    const results = await resultsOf(
      (p) => {
        writeFileSync(join(p, "hits.txt"), numbered(6, "needle"));
        writeFileSync(join(p, "long.txt"), `needle ${"y".repeat(600)}\nneedle short\n`);
        writeFileSync(join(p, "pair.txt"), `needle ${"w".repeat(492)}😀 tail\n`);
        writeFileSync(
          join(p, "big.txt"),
          Array.from({ length: 300 }, (_, i) => `needle ${i} ${"z".repeat(300)}`).join("\n"),
        );
        writeFileSync(
          join(p, "mixed.txt"),
          Array.from({ length: 200 }, (_, i) => `needle ${i} ${"q".repeat(i % 2 ? 700 : 400)}`).join("\n"),
        );
      },
      [
        { name: "grep", arguments: { pattern: "needle", path: "hits.txt", limit: 2 } },
        { name: "grep", arguments: { pattern: "needle", path: "hits.txt", limit: 6 } },
        { name: "grep", arguments: { pattern: "needle", path: "hits.txt", limit: 2, context: 1 } },
        { name: "grep", arguments: { pattern: "needle", path: "long.txt" } },
        { name: "grep", arguments: { pattern: "needle", path: "pair.txt" } },
        { name: "grep", arguments: { pattern: "needle", path: "big.txt" } },
        { name: "grep", arguments: { pattern: "needle", path: "big.txt", limit: 300 } },
        { name: "grep", arguments: { pattern: "needle", path: "mixed.txt", limit: 150 } },
        { name: "grep", arguments: { pattern: "absent", path: "hits.txt" } },
      ],
    );
    expect(results[0]!.text).toBe(
      "hits.txt:1: needle 1\nhits.txt:2: needle 2\n\n[2 matches limit reached. Use limit=4 for more, or refine pattern]",
    );
    expect(results[0]!.details).toEqual({ matchLimitReached: 2 });
    expect(results[1]!.details).toBeUndefined();
    expect(results[6]!.text).toMatch(/\n\n\[50\.0KB limit reached\]$/);
    expect(results[7]!.text).toMatch(
      /\[150 matches limit reached\. Use limit=300 for more, or refine pattern\. 50\.0KB limit reached\. Some lines truncated to 500 chars\. Use read tool to see full lines\]$/,
    );
  }, 60_000);

  it("ls: the entry limit, the byte limit, the order, folders through links, dangling links", async () => {
    const results = await resultsOf(
      (p) => {
        const names = join(p, "names");
        mkdirSync(join(names, "sub"), { recursive: true });
        for (const n of ["_a", "1b", ".c", "B", "a-b", "a.b", "Zed", "a b", "é"]) writeFileSync(join(names, n), "");
        symlinkSync(join(names, "sub"), join(names, "to-sub"));
        symlinkSync(join(names, "gone"), join(names, "dangling"));
        mkdirSync(join(p, "wide"));
        for (let i = 0; i < 250; i++)
          writeFileSync(join(p, "wide", `${String(i).padStart(3, "0")}${"n".repeat(230)}`), "");
        mkdirSync(join(p, "empty"));
      },
      [
        { name: "ls", arguments: { path: "names" } },
        { name: "ls", arguments: { path: "names", limit: 3 } },
        { name: "ls", arguments: { path: "wide" } },
        { name: "ls", arguments: { path: "wide", limit: 5 } },
        { name: "ls", arguments: { path: "empty" } },
      ],
    );
    expect(results[1]!.text).toMatch(/\n\n\[3 entries limit reached\. Use limit=6 for more\]$/);
    expect(results[1]!.details).toEqual({ entryLimitReached: 3 });
    expect(results[2]!.details.truncation).toMatchObject({ truncated: true, truncatedBy: "bytes" });
    expect(results[4]).toMatchObject({ text: "(empty directory)", details: undefined });
  }, 60_000);
});
