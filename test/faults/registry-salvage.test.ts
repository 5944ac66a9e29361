/**
 * Fault: `agents.json` cut short while the supervisor was stopped (a full disk, a copy
 * interrupted). The next supervisor keeps every complete record instead of forgetting
 * all agents, and both `serve` and `list` say what happened and where the rest is.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { type Json, World } from "../support/orch-cli.js";
import { figures } from "./support.js";

let world: World | undefined;
afterEach(async () => {
  await world?.cleanup();
  world = undefined;
});

it("a registry cut inside its 5th of 6 records: 4 agents kept, serve and list warn and name the damaged file", async () => {
  world = new World();
  await world.serve();
  const names = ["r1", "r2", "r3", "r4", "r5", "r6"];
  for (const name of names) await world.ok(["spawn", "--name", name, "--provider", "faux"]);
  await world.ok(["shutdown"]);

  const registry = join(world.home.path, "agents.json");
  const text = readFileSync(registry, "utf8");
  writeFileSync(registry, text.slice(0, text.search(/"name": ?"r5"/) + 8));

  const serve = await world.serve();
  const agents = await world.json<Json[]>(["list"]);
  expect(agents.map((a) => a.name)).toEqual(names.slice(0, 4));
  expect(agents.every((a) => a.status === "stopped" && typeof a.sessionFile === "string")).toBe(true);

  const listed = await world.cli(["list"]);
  expect(listed.code).toBe(0);
  expect(listed.stdout).toContain("r4");
  expect(listed.stderr).toMatch(
    /warning: agents\.json was damaged; the agents listed are the complete records it held, the rest is only in .*agents\.json\.corrupt-\d+/,
  );
  // The supervisor said it when it started (serve prints it; a background one logs it).
  const log = await world.until(
    "the serve warning",
    () => world!.serveOutput.get(serve) ?? "",
    (s) => s.includes("kept the 4 complete agent record(s)"),
    5_000,
  );
  expect(log).toMatch(/moved it to .*agents\.json\.corrupt-\d+/);
  // The agents kept come back with their sessions.
  await world.ok(["restart", "r2"]);
  expect((await world.json<Json>(["status", "r2"])).status).toBe("idle");
  figures("registry-salvage", { agents: names.length, cut_inside: 5, kept: agents.length, forgotten_whole: 0 });
}, 60_000);
