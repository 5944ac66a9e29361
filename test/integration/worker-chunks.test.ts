/**
 * The CommonJS worker bundle, split (scripts/worker-chunks.mjs): what a plain start does not
 * run (MCP, codemode, the Anthropic and OpenAI Responses adapters, the extension runner and
 * pi's modules for extensions, TypeBox, the `mcp` and `package` commands) is in files of
 * its own beside dist/cli/pi-worker.cjs, which no plain start requires, from the code cache
 * or from the startup snapshot, and which the first use loads; the startup snapshot for workers
 * started with extensions holds the extension chunks evaluated, so they load no file of them.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { buildSnapshot, checkSnapshot, snapshotPlace } from "../../shared/startup-snapshot.js";
import { killAllWorkers, RpcWorker, tempDir } from "../support/rpc-worker.js";

const ROOT = resolve(import.meta.dirname, "../..");
const DIST = join(ROOT, "dist/cli");
const LAUNCHER = join(DIST, "pi.cjs");
const BUNDLE = join(DIST, "pi-worker.cjs");
/** TypeBox, all of it, loaded on its first use by the bundle or a chunk. */
const TYPEBOX = join(DIST, "pi-worker-typebox.cjs");
const GUARD = resolve(import.meta.dirname, "../../examples/extensions/guard.ts");
/** The chunks a start with an extension loads: the runner and its API, and pi's modules for extensions. */
const EXTENSION_CHUNKS = [
  "pi-worker-worker-extensions-load-found.cjs",
  "pi-worker-worker-extensions-modules-index.cjs",
];
const cleanups: (() => void)[] = [];
afterEach(async () => {
  await killAllWorkers();
  for (const c of cleanups.splice(0).reverse()) c();
});

function dir(): string {
  const d = tempDir("pi-chunks-");
  cleanups.push(d.cleanup);
  return d.path;
}

/** The TypeScript (and package) files a built file was made from, from its source map. */
function sources(file: string): string[] {
  const map = JSON.parse(readFileSync(`${file}.map`, "utf8")) as { sources: string[] };
  return map.sources.map((s) => s.replace(/^(\.\.\/)+/, ""));
}

/** The chunk files beside the bundle. */
function chunks(): string[] {
  return readdirSync(DIST)
    .filter((f) => /^pi-worker-[\w-]+\.cjs$/.test(f))
    .map((f) => join(DIST, f));
}

/** Start the worker (from `blob` when given) with node's module log on, ask for its state, close stdin. */
async function start(blob: string | undefined, args: string[] = []) {
  const home = dir();
  const worker = new RpcWorker(["--mode", "rpc", "--provider", "faux", "--no-session", ...args], {
    cwd: home,
    env: { PI_ORCH_HOME: home, PI_ORCH_SANDBOX: "off", PI_ORCH_CODE_CACHE: "report", NODE_DEBUG: "module" },
    bin: [process.execPath, ...(blob ? ["--snapshot-blob", blob] : []), LAUNCHER],
  });
  const answer = await worker.request({ type: "get_commands" });
  worker.closeStdin();
  await worker.exited;
  const stderr = worker.stderr.join("");
  // The files node's loader loaded, by their names in its log.
  const loaded = new Set(chunks().filter((c) => stderr.includes(c)));
  return { answer, stderr, loaded };
}

describe("the worker bundle and its chunks", () => {
  it("keeps what a plain start does not run out of the bundle, each in one chunk", () => {
    const lazy = [
      "worker/mcp/connection.ts",
      "worker/codemode/run.ts",
      "worker/providers/anthropic.ts",
      "worker/providers/openai-responses.ts",
      "worker/extensions/modules/coding-agent.ts",
      "worker/extensions/runner.ts",
      "cli/mcp-command.ts",
      "cli/package-command.ts",
      // TypeBox's `Type` namespace and its value diffing: in TypeBox's own file.
      "node_modules/typebox/build/typebox.mjs",
      "node_modules/typebox/build/value/delta/diff.mjs",
    ];
    const main = sources(BUNDLE);
    for (const file of lazy) {
      expect(main, file).not.toContain(file);
      expect(chunks().filter((c) => sources(c).includes(file)).length, file).toBe(1);
    }
    // What every start runs stays in it.
    for (const file of ["worker/modes/rpc.ts", "worker/providers/faux.ts", "shared/validate.ts"])
      expect(main).toContain(file);
  });

  it("has TypeBox in one file of its own, whose one copy of its state the bundle and its chunks share", () => {
    const holders = new Map<string, string[]>();
    for (const file of [BUNDLE, ...chunks()])
      for (const source of sources(file))
        if (source.startsWith("node_modules/typebox/")) holders.set(source, [...(holders.get(source) ?? []), file]);
    expect(holders.size).toBeGreaterThan(100);
    // The format registry, the settings and the locale that a worker's checks and an extension's use alike among them.
    for (const module of ["format/_registry.mjs", "system/settings/settings.mjs", "system/locale/_config.mjs"])
      expect(holders.get(`node_modules/typebox/build/${module}`), module).toEqual([TYPEBOX]);
    for (const [source, where] of holders) expect(where, source).toEqual([TYPEBOX]);
  });

  it("requires no chunk at a plain start, and the extension modules' one at the first extension", async () => {
    const plain = await start(undefined);
    expect(plain.stderr).toContain("pi: code cache accepted");
    expect(plain.answer.success).toBe(true);
    expect([...plain.loaded]).toEqual([]);
    // Nor TypeBox: its checks are our own.
    expect(plain.stderr).not.toContain("pi-worker-typebox");
    const withExtension = await start(undefined, ["-e", GUARD]);
    expect(withExtension.answer.success).toBe(true);
    // Compiled with the code caches the build made for them; TypeBox's file with the extension modules.
    for (const chunk of [...EXTENSION_CHUNKS, "pi-worker-typebox.cjs"])
      expect(withExtension.stderr).toContain(`pi: ${chunk.replace(/\.cjs$/, "")} code cache accepted`);
    expect([...withExtension.loaded].map((c) => c.slice(DIST.length + 1)).sort()).toEqual(EXTENSION_CHUNKS);
  });

  it("does the same from the startup snapshot, whose build loads no chunk", async () => {
    const cache = dir();
    const place = snapshotPlace(BUNDLE, process.env, cache);
    expect(await buildSnapshot(place, join(DIST, "pi-snapshot.cjs"), LAUNCHER, process.env)).toBeUndefined();
    expect(checkSnapshot(place)).toBe("ok");
    const plain = await start(place.blob);
    expect(plain.stderr).toContain("pi: started from a startup snapshot");
    expect([...plain.loaded]).toEqual([]);
    expect(plain.stderr).not.toContain("pi-worker-typebox");
    const withExtension = await start(place.blob, ["-e", GUARD]);
    expect(withExtension.stderr).toContain("pi: started from a startup snapshot");
    expect(withExtension.answer.data.commands.length).toBeGreaterThan(0);
    expect([...withExtension.loaded].map((c) => c.slice(DIST.length + 1)).sort()).toEqual(EXTENSION_CHUNKS);
  });

  it("requires no chunk from the extensions blob, whose build evaluated the extension ones", async () => {
    const cache = dir();
    const place = snapshotPlace(BUNDLE, process.env, cache, "extensions");
    expect(await buildSnapshot(place, join(DIST, "pi-snapshot.cjs"), LAUNCHER, process.env)).toBeUndefined();
    const withExtension = await start(place.blob, ["-e", GUARD]);
    expect(withExtension.stderr).toContain("pi: started from a startup snapshot");
    expect(withExtension.answer.data.commands.map((c: { name: string }) => c.name)).toContain("hello");
    expect([...withExtension.loaded]).toEqual([]);
    // Nor does it compile them: no code cache of theirs is looked at.
    for (const chunk of EXTENSION_CHUNKS) expect(withExtension.stderr).not.toContain(chunk.replace(/\.cjs$/, ""));
    const plain = await start(place.blob);
    expect(plain.answer.success).toBe(true);
    expect([...plain.loaded]).toEqual([]);
  });
});
