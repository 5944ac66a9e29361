/**
 * Benchmarks for the file tools: `edit` on a 10,000-line file, and `grep` over a
 * generated 50,000-file tree next to `grep -r` and `rg` run on the same tree.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { editTool } from "../worker/tools/edit.js";
import { findRg } from "../worker/tools/file-walk.js";
import { createGrepTool } from "../worker/tools/grep.js";
import type { ToolContext } from "../worker/types.js";
import { fmt, median, table } from "./stats.js";

const EDIT_LINES = 10_000;
const EDIT_RUNS = 15;
const TREE_DIRS = 500;
const FILES_PER_DIR = 100;
const GREP_RUNS = 5;
const NEEDLE = "pi_orch_bench_needle";

async function timed(fn: () => unknown): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

const ms = (value: number) => `${fmt(value)} ms`;

async function benchEdit(dir: string): Promise<string[][]> {
  const lines = Array.from(
    { length: EDIT_LINES },
    (_, i) => `  const value${i} = compute("item ${i}", ${i}); // line ${i}`,
  );
  writeFileSync(join(dir, "big.ts"), `${lines.join("\n")}\n`);
  const ctx: ToolContext = { cwd: dir, toolCallId: "bench", signal: new AbortController().signal };
  const exact: number[] = [];
  const normalized: number[] = [];
  for (let run = 0; run < EDIT_RUNS; run++) {
    // Alternate between two states so every run makes a real change.
    const [from, to] = run % 2 === 0 ? ["item 5000", "item five thousand"] : ["item five thousand", "item 5000"];
    exact.push(
      await timed(() =>
        editTool.execute({ path: "big.ts", edits: [{ oldText: `"${from}"`, newText: `"${to}"` }] }, ctx),
      ),
    );
  }
  for (let run = 0; run < EDIT_RUNS; run++) {
    // Smart quotes in oldText force the normalized match over the whole file.
    const [from, to] = run % 2 === 0 ? ["item 7000", "item seven thousand"] : ["item seven thousand", "item 7000"];
    normalized.push(
      await timed(() =>
        editTool.execute({ path: "big.ts", edits: [{ oldText: `\u201C${from}\u201D`, newText: `"${to}"` }] }, ctx),
      ),
    );
  }
  return [
    [
      `edit, exact match (${EDIT_LINES.toLocaleString("en")} lines: read, match, diff, write)`,
      ms(median(exact)),
      String(EDIT_RUNS),
    ],
    ["edit, normalized match (smart quotes in oldText)", ms(median(normalized)), String(EDIT_RUNS)],
  ];
}

function makeTree(root: string): number {
  let matches = 0;
  for (let d = 0; d < TREE_DIRS; d++) {
    const dir = join(root, `pkg${d % 20}`, `mod${d}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < FILES_PER_DIR; f++) {
      const body: string[] = [];
      for (let l = 0; l < 30; l++)
        body.push(`export function fn${d}_${f}_${l}(a: number): number { return a * ${l} + ${f}; }`);
      // One file in a thousand holds the needle, so every tool has to read the whole tree.
      if ((d * FILES_PER_DIR + f) % 1000 === 7) {
        body.push(`// ${NEEDLE} here`);
        matches++;
      }
      writeFileSync(join(dir, `file${f}.ts`), `${body.join("\n")}\n`);
    }
  }
  mkdirSync(join(root, ".git"));
  writeFileSync(join(root, ".gitignore"), "*.log\n");
  return matches;
}

function runExternal(command: string, args: string[]): number {
  const start = performance.now();
  const result = spawnSync(command, args, { maxBuffer: 64 * 1024 * 1024 });
  const elapsed = performance.now() - start;
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(" ")} exited with ${result.status}: ${result.stderr}`);
  return elapsed;
}

async function benchGrep(root: string): Promise<string[][]> {
  const expected = makeTree(root);
  const ctx: ToolContext = { cwd: root, toolCallId: "bench", signal: new AbortController().signal };
  const args = { pattern: NEEDLE, limit: 1000 };
  const contenders: { name: string; run: () => Promise<number> | number }[] = [
    { name: "`grep -rn`", run: () => runExternal("grep", ["-rn", NEEDLE, root]) },
  ];
  const rg = findRg();
  if (rg !== undefined) contenders.push({ name: "`rg -n`", run: () => runExternal(rg, ["-n", NEEDLE, root]) });
  for (const backend of rg !== undefined ? (["rg", "node"] as const) : (["node"] as const)) {
    const tool = createGrepTool({ backend });
    contenders.push({
      name: `our grep (${backend} backend)`,
      run: () =>
        timed(async () => {
          const result = await tool.execute(args, ctx);
          const found = (result.details as { matches: number }).matches;
          if (found !== expected) throw new Error(`our grep (${backend}) found ${found} matches, expected ${expected}`);
        }),
    });
  }
  // One warm-up pass each so all of them read from the page cache.
  for (const c of contenders) await c.run();
  const samples = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  for (let run = 0; run < GREP_RUNS; run++) {
    for (const c of contenders) samples.get(c.name)!.push(await c.run());
  }
  const baseline = median(samples.get("`grep -rn`")!);
  return contenders.map((c) => {
    const value = median(samples.get(c.name)!);
    return [
      `${c.name} over ${(TREE_DIRS * FILES_PER_DIR).toLocaleString("en")} files`,
      ms(value),
      String(GREP_RUNS),
      `${fmt(value / baseline, 2)}×`,
    ];
  });
}

/** Run both benchmarks and return a markdown section; temporary trees are removed even on failure. */
export async function run(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "pi-orch-bench-edit-grep-"));
  try {
    const editRows = await benchEdit(dir);
    const treeRoot = join(dir, "tree");
    mkdirSync(treeRoot);
    const grepRows = await benchGrep(treeRoot);
    return [
      "## edit and grep",
      "",
      table(["case", "median", "runs"], editRows),
      "",
      table(["search (one needle per 1,000 files, whole tree read)", "median", "runs", "vs `grep -rn`"], grepRows),
      "",
      "Target: our grep within 2× of `grep -r`.",
      "",
    ].join("\n");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
