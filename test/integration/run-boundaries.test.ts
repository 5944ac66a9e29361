/**
 * Where a run ends, end to end, with upstream pi 1.6.0 unchanged as the worker and with
 * ours: a real `serve`, the CLI as a child process, the mock model server. pi 1.6.0
 * answers a prompt with its `disposition` and ends a run with `agent_settled`: a
 * command it handled returns at once (it used to wait for an `agent_end` that never
 * came), and a follow-up queued at `agent_end` belongs to the same run, so `--wait`,
 * the agent's status and `pi-orch run` wait for it. afterEach kills every process.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { startMockModelServer, type MockModelServer } from "../support/mock-model-server.js";
import { BIN, PI, World, type Json } from "../support/orch-cli.js";
import { tempDir } from "../support/rpc-worker.js";
import { mockModelsJson } from "../support/upstream-oracle.js";
import { NODE22, PI16_CLI, pi16Installed } from "../support/upstream-pi16.js";

type Impl = "ours" | "pi 1.6.0";

// `/noop` starts no run; the first run's agent_end queues a follow-up, which pi 1.6 runs before agent_settled.
const EXTENSION = `
export default function (pi) {
  pi.registerCommand("noop", { description: "does nothing", handler: async () => {} });
  let ends = 0;
  pi.on("agent_end", () => {
    if (ends++ === 0) pi.sendUserMessage("and the follow-up", { deliverAs: "followUp" });
  });
}
`;

let world: World | undefined;
let server: MockModelServer | undefined;
let agentDir: { path: string; cleanup: () => void } | undefined;

beforeAll(() => {
  if (!existsSync(BIN) || !existsSync(PI))
    throw new Error("dist/cli/pi-orch.js or dist/cli/pi.js is missing: run npm run build first");
});

afterEach(async () => {
  try {
    await world?.cleanup();
  } finally {
    await server?.close();
    agentDir?.cleanup();
    world = server = agentDir = undefined;
  }
});

/** The worker command of `impl` loading EXTENSION, and a world whose workers read the mock model from their agent directory. */
async function setup(impl: Impl): Promise<{ w: World; command: string }> {
  server = await startMockModelServer();
  agentDir = tempDir("pi-boundaries-agent-");
  writeFileSync(join(agentDir.path, "models.json"), JSON.stringify(mockModelsJson(server)));
  const w = new World({ PI_CODING_AGENT_DIR: agentDir.path, PI_OFFLINE: "1" });
  world = w;
  // Ours reads models.json from the pi-orch home (pi-orch run: the user's home, this one too).
  writeFileSync(join(w.home.path, "models.json"), JSON.stringify(mockModelsJson(server)));
  const ext = join(w.cwd.path, "boundaries.ts");
  writeFileSync(ext, EXTENSION);
  const bin = impl === "pi 1.6.0" ? `${NODE22} ${PI16_CLI}` : `${process.execPath} ${PI}`;
  return { w, command: `${bin} --mode rpc --no-session -e ${ext}` };
}

const IMPLS: Impl[] = ["pi 1.6.0", "ours"];

describe.skipIf(!pi16Installed).each(IMPLS)("run boundaries with %s as the worker", (impl) => {
  it("a handled command returns at its answer; a run with a follow-up queued at agent_end is waited for to its end", async () => {
    const { w, command } = await setup(impl);
    await w.serve();
    await w.ok(["spawn", "--name", "a", "--worker-command", command, "--provider", "mock", "--model", "mock-1"]);

    const t0 = performance.now();
    const noop = await w.cli(["prompt", "a", "/noop", "--wait"]);
    const noopMs = performance.now() - t0;
    expect(noop).toMatchObject({ code: 0, stdout: "" });
    expect(noop.stderr).toContain("a took the prompt without starting a run");
    expect(noopMs).toBeLessThan(5_000);

    server!.enqueue({ text: "one" }, { text: "two" });
    const run = await w.cli(["prompt", "a", "hi", "--wait", "--json"]);
    expect(run.code).toBe(0);
    const [outcome] = JSON.parse(run.stdout) as Json[];
    expect(outcome).toMatchObject({ agent: "a", ok: true, stopReason: "stop" });
    if (impl === "pi 1.6.0") {
      // Both low-level runs, and the agent is idle only once the run settled.
      expect(outcome!.text).toBe("one\ntwo");
      expect((await w.json(["status", "a"])).status).toBe("idle");
    } else {
      // Our worker ends its runs at agent_end (no agent_settled yet): the follow-up's run comes after.
      expect(outcome!.text).toMatch(/^one/);
    }
    await w.waitForStatus("a", (s) => s.status === "idle");
    const statuses = w
      .events("a")
      .filter((e) => e.event?.type === "agent_status")
      .map((e) => e.event.status);
    if (impl === "pi 1.6.0") expect(statuses.slice(-2)).toEqual(["busy", "idle"]);
  }, 90_000);

  it("pi-orch run: a command task passes at its answer, a prompt task at the end of its settled run", async () => {
    const { w, command } = await setup(impl);
    const tasks = join(w.cwd.path, "tasks.json");
    writeFileSync(
      tasks,
      JSON.stringify([
        { name: "noop", prompt: "/noop" },
        { name: "hi", prompt: "hi" },
      ]),
    );
    server!.enqueue({ text: "one" }, { text: "two" });
    const r = await w.cli(
      [
        "run",
        tasks,
        "--concurrency",
        "1",
        "--worker-command",
        command,
        "--provider",
        "mock",
        "--model",
        "mock-1",
        "--json",
      ],
      60_000,
    );
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { tasks: Json[] };
    const byName = Object.fromEntries(report.tasks.map((t) => [t.name, t]));
    expect(byName.noop).toMatchObject({ status: "passed", turns: 0 });
    expect(byName.hi).toMatchObject({ status: "passed" });
    if (impl === "pi 1.6.0") expect(byName.hi).toMatchObject({ finalText: "two", turns: 2 });
  }, 90_000);
});
