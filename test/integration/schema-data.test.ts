/**
 * Our schemas are data in the worker bundle (scripts/schema-data.mjs): a start from the code
 * cache runs none of typebox's builders up to its first answer; and its checks are our own
 * (shared/schema-check.ts), so it loads no TypeBox at all (its file beside the bundle,
 * dist/cli/pi-worker-typebox.cjs, loaded on first use). Built at start, their ~2,300
 * calls got one of typebox's guards optimised by TurboFan before that answer (~3 MB more RSS).
 * Precise coverage of a real start (NODE_V8_COVERAGE) says which of the bundle's functions ran;
 * each is found in its source file through the bundle's source map.
 */
import { readdirSync, readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { killAllWorkers, RpcWorker, tempDir } from "../support/rpc-worker.js";

const DIST = resolve(import.meta.dirname, "../../dist/cli");
const BUNDLE = join(DIST, "pi-worker.cjs");
const cleanups: (() => void)[] = [];
afterEach(async () => {
  await killAllWorkers();
  for (const c of cleanups.splice(0).reverse()) c();
});

/**
 * The source files of the bundle's functions that ran in a start to its first `get_state` answer
 * (and its exit), and the files of every script the start compiled. `args` after the RPC mode's.
 */
async function ranAtStart(args = ["--no-session"]): Promise<{ ran: Set<string>; scripts: string[] }> {
  const home = tempDir("pi-schema-data-");
  cleanups.push(home.cleanup);
  const coverage = join(home.path, "coverage");
  const worker = new RpcWorker(["--mode", "rpc", "--provider", "faux", ...args], {
    cwd: home.path,
    env: { PI_ORCH_HOME: home.path, PI_ORCH_SANDBOX: "off", NODE_V8_COVERAGE: coverage },
  });
  const answer = await worker.request({ type: "get_state" });
  expect(answer.success).toBe(true);
  worker.closeStdin();
  await worker.exited;
  const scripts = readdirSync(coverage).flatMap(
    (f) =>
      (
        JSON.parse(readFileSync(join(coverage, f), "utf8")) as {
          result: { url: string; functions: { ranges: { startOffset: number; count: number }[] }[] }[];
        }
      ).result,
  );
  const script = scripts.find((s) => s.url.endsWith("/pi-worker.cjs"));
  if (script === undefined) throw new Error("no coverage of the worker bundle");
  const text = readFileSync(BUNDLE, "utf8");
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lineStarts.push(i + 1);
  const map = new SourceMap(JSON.parse(readFileSync(`${BUNDLE}.map`, "utf8")));
  const ran = new Set<string>();
  for (const fn of script.functions) {
    const range = fn.ranges[0];
    if (range === undefined || range.count === 0 || range.startOffset === 0) continue;
    let line = 0;
    while (line + 1 < lineStarts.length && lineStarts[line + 1]! <= range.startOffset) line++;
    const entry = map.findEntry(line, range.startOffset - lineStarts[line]!) as { originalSource?: string };
    if (entry.originalSource) ran.add(entry.originalSource.replace(/^.*?node_modules\//, "node_modules/"));
  }
  return { ran, scripts: scripts.map((s) => s.url) };
}

describe("schemas made at build", () => {
  it("leaves typebox's builders unrun by a start from the code cache", async () => {
    const ran = [...(await ranAtStart()).ran];
    // The start did run (our modules, our check of the command).
    expect(ran.some((f) => f.endsWith("worker/modes/rpc.ts"))).toBe(true);
    // Every builder makes its schema with these (Memory.Create, Update, Clone, Assign).
    expect(
      ran.filter((f) => /node_modules\/typebox\/build\/(system\/memory|type\/(types|action|engine))\//.test(f)),
    ).toEqual([]);
  });

  it("loads no TypeBox in a start from the code cache, with or without a session", async () => {
    for (const args of [["--no-session"], []]) {
      const { ran, scripts } = await ranAtStart(args);
      expect([...ran].some((f) => f.endsWith("worker/modes/rpc.ts"))).toBe(true);
      // Not a function of TypeBox's in the bundle ran, and its own file was never compiled.
      expect([...ran].filter((f) => f.includes("node_modules/typebox/"))).toEqual([]);
      expect(scripts.filter((url) => url.includes("pi-worker-typebox"))).toEqual([]);
    }
  });
});
