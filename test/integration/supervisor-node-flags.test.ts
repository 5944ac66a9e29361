/**
 * The supervisor a command starts in the background runs with the node flags of
 * cli/serve/node-flags.ts, or those of PI_ORCH_SUPERVISOR_NODE_FLAGS, read back from
 * the running process's own command line; a flag node refuses is reported by the
 * command that tried to start it.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, World } from "../support/orch-cli.js";
import { isAlive, tempDir, waitForExit } from "../support/rpc-worker.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function cli(home: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, "--home", home, ...args], { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("exit", (code) => resolve({ code, stderr }));
  });
}

/** `pi-orch list` on a fresh home, which starts a supervisor; its pid and its command line. */
async function autostarted(
  flags: string | undefined,
): Promise<{ code: number | null; stderr: string; argv: string[] }> {
  const home = tempDir("pi-orch-flags-");
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" };
  delete env.PI_ORCH_SUPERVISOR_NODE_FLAGS;
  if (flags !== undefined) env.PI_ORCH_SUPERVISOR_NODE_FLAGS = flags;
  let pid: number | null = null;
  cleanups.push(async () => {
    if (pid !== null && isAlive(pid)) {
      await cli(home.path, ["shutdown"], env);
      if (!(await waitForExit(pid, 10_000))) process.kill(pid, "SIGKILL");
    }
    home.cleanup();
  });
  const { code, stderr } = await cli(home.path, ["list", "--json"], env);
  if (code !== 0) return { code, stderr, argv: [] };
  const log = readFileSync(join(home.path, "logs", "supervisor.log"), "utf8");
  pid = Number(/listening on .* \(pid (\d+)\)/.exec(log)?.[1]);
  const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  return { code, stderr, argv };
}

describe.skipIf(process.platform !== "linux")("the supervisor a command starts in the background", () => {
  it.each([
    { flags: undefined, want: ["--max-semi-space-size=2", "--no-parallel-scavenge"] },
    { flags: "", want: [] },
    {
      flags: "--max-semi-space-size=4 --single-threaded-gc",
      want: ["--max-semi-space-size=4", "--single-threaded-gc"],
    },
  ])("runs node with $want given PI_ORCH_SUPERVISOR_NODE_FLAGS=$flags", async ({ flags, want }) => {
    const { code, stderr, argv } = await autostarted(flags);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    // node, its flags, then the pi-orch script and `--home HOME serve`.
    expect(argv.slice(1, argv.indexOf(BIN))).toEqual(want);
    expect(argv.slice(-1)).toEqual(["serve"]);
  });

  it("reports a flag node refuses, from the supervisor's log, and names the variable", async () => {
    const { code, stderr } = await autostarted("--no-such-node-flag");
    expect(code).toBe(1);
    expect(stderr).toMatch(/could not start a supervisor .*bad option: --no-such-node-flag/);
    expect(stderr).toContain(
      'started with node flags from PI_ORCH_SUPERVISOR_NODE_FLAGS="--no-such-node-flag": fix or unset it',
    );
  });

  it.each(["2", "--max-semi-space-size 2"])(
    "refuses PI_ORCH_SUPERVISOR_NODE_FLAGS=%j before starting anything",
    async (flags) => {
      const { code, stderr } = await autostarted(flags);
      expect(code).toBe(1);
      expect(stderr).toBe(
        `pi-orch: PI_ORCH_SUPERVISOR_NODE_FLAGS=${JSON.stringify(flags)} has "2", which is not a node flag: ` +
          `write each flag with its leading "-" and its value after "=" (--max-semi-space-size=2), or unset the variable for the default\n`,
      );
    },
  );
});

/**
 * The README's advice for `pi-orch serve` in a terminal: node's flags on node's command
 * line, not in NODE_OPTIONS, which every worker inherits (V8 then refuses the code cache
 * the worker was built with, and each worker gets the small young generation too).
 */
describe("a worker of a supervisor given a V8 flag", () => {
  async function codeCacheOfWorker(world: World, nodeFlags: string[]): Promise<string> {
    cleanups.push(() => world.cleanup());
    await world.serve([], nodeFlags);
    await world.ok(["spawn", "--name", "w", "--provider", "faux"]);
    const stderrLog = join(world.home.path, "logs", "w.stderr.log");
    const said = await world.until(
      "the worker's code cache report",
      () => (existsSync(stderrLog) ? readFileSync(stderrLog, "utf8") : ""),
      (t) => /pi: code cache \w+/.test(t),
    );
    return /pi: code cache (\w+)/.exec(said)![1]!;
  }

  it("on node's command line (the README's way): the worker accepts its code cache", async () => {
    const world = new World({ PI_ORCH_CODE_CACHE: "report", NODE_OPTIONS: "", PI_ORCH_SNAPSHOT: "off" });
    expect(await codeCacheOfWorker(world, ["--max-semi-space-size=2"])).toBe("accepted");
  });

  it("in NODE_OPTIONS: the worker inherits it, V8 rejects the build's cache, and the next worker takes the one the first wrote", async () => {
    const cache = tempDir("pi-orch-flags-cache-");
    cleanups.push(async () => cache.cleanup());
    const world = new World({
      PI_ORCH_CODE_CACHE: "report",
      NODE_OPTIONS: "--max-semi-space-size=2",
      PI_ORCH_CACHE_DIR: cache.path,
      // The code cache is what this is about; the startup snapshot (test/integration/worker-snapshot.test.ts)
      // would start the second worker once the supervisor has built it.
      PI_ORCH_SNAPSHOT: "off",
    });
    expect(await codeCacheOfWorker(world, [])).toBe("rejected");
    const stderrLog = join(world.home.path, "logs", "w.stderr.log");
    await world.until(
      "the first worker's cache written",
      () => (existsSync(stderrLog) ? readFileSync(stderrLog, "utf8") : ""),
      (t) => t.includes("pi: code cache written to"),
    );
    await world.ok(["spawn", "--name", "w2", "--provider", "faux"]);
    const log2 = join(world.home.path, "logs", "w2.stderr.log");
    const said = await world.until(
      "the second worker's code cache report",
      () => (existsSync(log2) ? readFileSync(log2, "utf8") : ""),
      (t) => /pi: code cache \w+/.test(t),
    );
    expect(said).toContain(`pi: code cache accepted (${cache.path}/pi-worker-`);
  });
});

/** `pi-orch demo` whose supervisor cannot start: the message carries the log's words, read before its folder went. */
describe("the demo's supervisor failing to start", () => {
  it("says what node said and names the variable, and leaves no folder", () => {
    const tmp = tempDir("pi-orch-demo-tmp-");
    try {
      const env = {
        ...process.env,
        NO_COLOR: "1",
        TMPDIR: tmp.path,
        PI_ORCH_SUPERVISOR_NODE_FLAGS: "--no-such-node-flag",
      };
      const r = spawnSync(process.execPath, [BIN, "demo", "--no-tui"], { encoding: "utf8", env, timeout: 60_000 });
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toContain("pi-orch: the demo's supervisor did not start: ");
      expect(r.stderr).toContain(
        "bad option: --no-such-node-flag (its log goes with the demo's folder; --keep keeps it)",
      );
      expect(r.stderr).toContain(
        'started with node flags from PI_ORCH_SUPERVISOR_NODE_FLAGS="--no-such-node-flag": fix or unset it',
      );
      expect(readdirSync(tmp.path).filter((f) => f.startsWith("pi-orch-demo-"))).toEqual([]);
    } finally {
      tmp.cleanup();
    }
  }, 60_000);
});
