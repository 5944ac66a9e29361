/**
 * `pi-orch spawn --api-key`: the key an agent is started with reaches its provider, is kept
 * in keys.json (0600) and in neither agents.json nor the worker's command line.
 */
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockModelServer, type MockModelServer } from "../support/mock-model-server.js";
import { World } from "../support/orch-cli.js";

let world: World | undefined;
let mock: MockModelServer | undefined;
afterEach(async () => {
  await world?.cleanup();
  world = undefined;
  await mock?.close();
  mock = undefined;
});

describe("pi-orch spawn --api-key", () => {
  it("gives the agent its key on the private pipe and keeps it out of agents.json and argv", async () => {
    mock = await startMockModelServer();
    world = new World({ PI_ORCH_SANDBOX: "off" });
    const home = world.home.path;
    const key = `sk-spawn-${process.pid}-key`;
    // A provider with no key of its own: without --api-key the agent would refuse prompts.
    writeFileSync(
      join(home, "models.json"),
      JSON.stringify({
        providers: { keyless: { baseUrl: `${mock.url}/v1`, api: "openai-completions", models: [{ id: "m" }] } },
      }),
    );
    await world.serve();
    await world.ok(["spawn", "--name", "k", "--provider", "keyless", "--model", "m", "--api-key", key]);
    mock.enqueue({ text: "hello" });
    await world.ok(["prompt", "k", "hi", "--wait"]);
    expect(mock.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${key}`]);
    expect(readFileSync(join(home, "agents.json"), "utf8")).not.toContain(key);
    expect(readFileSync(join(home, "keys.json"), "utf8")).toContain(key);
    expect(statSync(join(home, "keys.json")).mode & 0o777).toBe(0o600);
    const pid = (await world.json(["status", "k"])).pid as number;
    expect(readFileSync(`/proc/${pid}/cmdline`, "utf8")).not.toContain(key);
  }, 60_000);
});
