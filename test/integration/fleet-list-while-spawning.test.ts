/**
 * A supervisor starting a fleet still answers: 64 agents requested at once through a
 * real `pi-orch serve`, and a `list` on a new connection (what `pi-orch list` makes) is
 * answered while they start, not after. Before the start gate every worker started at
 * once, each in an autogroup of its own at full weight, and the supervisor got a 65th
 * of the machine: the `list` waited until the whole fleet was up, past the client's
 * 5 s deadline. The client's own deadline is the only clock here.
 */
import { existsSync } from "node:fs";
import { afterEach, beforeAll, expect, it } from "vitest";
import { IpcClient } from "../../ipc/client.js";
import type { AgentInfo } from "../../shared/schema/agent.js";
import { BIN, PI, World } from "../support/orch-cli.js";
import { waitForExit } from "../support/rpc-worker.js";

const FLEET = 64;

let world: World | undefined;

beforeAll(() => {
  if (!existsSync(BIN) || !existsSync(PI))
    throw new Error("dist/cli/pi-orch.js or dist/cli/pi.js is missing: run npm run build first");
});

afterEach(async () => {
  await world?.cleanup();
  world = undefined;
});

it("answers list on a new connection while 64 agents start, and stops them all", async () => {
  world = new World();
  const serve = await world.serve();
  const home = world.home.path;
  const client = await IpcClient.connect({ home });
  const watcher = await IpcClient.connect({ home });
  try {
    let started = 0;
    let firstStarted!: () => void;
    const someStarted = new Promise<void>((r) => (firstStarted = r));
    await watcher.subscribe({}, (m) => {
      if (m.type === "event" && m.event.type === "worker_started" && ++started === 1) firstStarted();
    });
    const spawns = Promise.all(
      Array.from({ length: FLEET }, (_, i) =>
        client.spawn({ name: `fleet-${i}`, provider: "faux", cwd: world!.cwd.path }),
      ),
    );
    spawns.catch(() => undefined);
    await someStarted;

    // As `pi-orch list` asks: a new connection (the socket checks who is behind it), the
    // client's default 5 s answer deadline.
    const lister = await IpcClient.connect({ home });
    let listed: AgentInfo[];
    try {
      listed = await lister.list();
    } finally {
      await lister.close();
    }
    expect(listed).toHaveLength(FLEET);
    // Answered in the middle of the start, not once it was over.
    expect(listed.filter((a) => a.status === "starting").length).toBeGreaterThan(0);

    const agents = await spawns;
    expect(agents.map((a) => a.status).filter((s) => s !== "idle" && s !== "busy")).toEqual([]);
    const pids = (await client.list()).map((a) => a.pid!);
    expect(new Set(pids).size).toBe(FLEET);

    await client.shutdown();
    await new Promise<void>((r) => (serve.exitCode !== null ? r() : serve.once("exit", () => r())));
    expect(await Promise.all(pids.map((pid) => waitForExit(pid, 10_000)))).toEqual(pids.map(() => true));
    expect(world.taggedPids()).toEqual([]);
  } finally {
    await client.close();
    await watcher.close();
  }
}, 180_000);
