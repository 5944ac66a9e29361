/**
 * `pi-orch shutdown --json` names the agents it stopped as the text does, not every agent
 * the supervisor had: those already down are apart. A real `serve` and faux workers;
 * afterEach kills every process and removes every folder the test made.
 */
import { existsSync } from "node:fs";
import { afterEach, beforeAll, expect, it } from "vitest";
import { BIN, World, type Json } from "../support/orch-cli.js";

let world: World | undefined;

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error("dist/ is missing: run npm run build first");
});

afterEach(async () => {
  await world?.cleanup();
  world = undefined;
});

it("shutdown --json lists only the agents that were running as stopped, the others as already down", async () => {
  world = new World();
  const serve = await world.serve();
  await world.ok(["spawn", "--name", "down", "--provider", "faux"]);
  await world.ok(["spawn", "--name", "up", "--provider", "faux"]);
  await world.ok(["stop", "down"]);
  expect(await world.json<Json>(["shutdown"])).toEqual({ stopped: ["up"], alreadyDown: ["down"], running: false });
  await new Promise((resolve) =>
    serve.exitCode !== null || serve.signalCode !== null ? resolve(null) : serve.once("exit", resolve),
  );
  // With none running, it says so in the same shape.
  expect(await world.json<Json>(["shutdown"])).toEqual({ stopped: [], alreadyDown: [], running: false });
}, 60_000);
