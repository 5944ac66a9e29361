/**
 * The built `pi` bin (`dist/cli/pi.cjs`): it starts the worker bundle with the V8 code
 * cache the build wrote, and without a usable cache it still works, silently.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { useMockWorkerEnv } from "../support/mock-worker-env.js";
import { killAllWorkers, RpcWorker } from "../support/rpc-worker.js";

const DIST = resolve(import.meta.dirname, "../../dist/cli");
const mock = useMockWorkerEnv();
const dirs: string[] = [];
afterEach(async () => {
  await killAllWorkers();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "pi-launcher-"));
  dirs.push(d);
  return d;
}

/** Start `launcher`, ask for the state, close stdin; what it answered and wrote to stderr. */
async function firstState(launcher: string, env: NodeJS.ProcessEnv = {}) {
  const home = tempDir();
  const worker = new RpcWorker(["--mode", "rpc", "--provider", "faux", "--no-session"], {
    cwd: home,
    env: { PI_ORCH_HOME: home, ...env },
    bin: [process.execPath, launcher],
  });
  const state = await worker.request({ type: "get_state" });
  worker.closeStdin();
  const exit = await worker.exited;
  return { state, exit, stderr: worker.stderr.join("") };
}

describe("pi.cjs and its code cache", () => {
  it("starts with the cache the build wrote, accepted by this node", async () => {
    const { state, exit, stderr } = await firstState(join(DIST, "pi.cjs"), { PI_ORCH_CODE_CACHE: "report" });
    expect(state.success).toBe(true);
    expect(state.data.model.provider).toBe("faux");
    expect(exit.code).toBe(0);
    expect(stderr).toContain("pi: code cache accepted");
  });

  it("says nothing about the cache unless asked", async () => {
    const { stderr } = await firstState(join(DIST, "pi.cjs"));
    expect(stderr).not.toContain("code cache");
  });

  it("answers the same with a cache that does not match (rejected) and with none (missing)", async () => {
    const copy = join(tempDir(), "cli");
    mkdirSync(copy);
    for (const f of ["pi.cjs", "pi-worker.cjs"]) copyFileSync(join(DIST, f), join(copy, f));
    const launcher = join(copy, "pi.cjs");

    const missing = await firstState(launcher, { PI_ORCH_CODE_CACHE: "report" });
    expect(missing.stderr).toContain("pi: code cache missing");
    expect(missing.state.success).toBe(true);

    writeFileSync(join(copy, "pi-worker.cjs.cache"), Buffer.from("not a V8 code cache, e.g. one from another node"));
    const rejected = await firstState(launcher, { PI_ORCH_CODE_CACHE: "report" });
    expect(rejected.stderr).toContain("pi: code cache rejected");
    expect(rejected.state.success).toBe(true);
    expect(rejected.exit.code).toBe(0);
    expect(rejected.state.data.model).toEqual(missing.state.data.model);
  });

  it.each(["openai-completions", "anthropic-messages"] as const)("runs a turn through the real %s SDK, loaded lazily from the cached bundle", async (api) => {
    mock.writeModels({ api });
    mock.server.enqueue({ text: ["hello ", "from the mock"] });
    const worker = new RpcWorker(["--mode", "rpc", "--provider", "mock", "--model", "mock-1", "--no-session"], {
      cwd: mock.project,
      env: { PI_ORCH_HOME: mock.home, PI_ORCH_CODE_CACHE: "report", ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" },
      bin: [process.execPath, join(DIST, "pi.cjs")],
    });
    await worker.request({ type: "prompt", message: "hi" });
    const end = await worker.event("agent_end");
    expect(end.messages.at(-1).content[0].text).toBe("hello from the mock");
    expect(worker.stderr.join("")).toContain("pi: code cache accepted");
  });
});
