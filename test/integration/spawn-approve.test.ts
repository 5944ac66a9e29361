/**
 * `pi-orch spawn --approve`: the agent loads its project's `.pi/` extensions (pi's
 * `--approve` on every start of its worker, a restart too); without it they never load, and
 * nothing is recorded in trust.json either way.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { World } from "../support/orch-cli.js";

let world: World | undefined;
afterEach(async () => {
  await world?.cleanup();
  world = undefined;
});

describe("pi-orch spawn --approve", () => {
  it("loads the project's extensions in that agent only, across a restart, recording nothing", async () => {
    world = new World({ PI_ORCH_SANDBOX: "off" });
    const project = join(world.cwd.path, "project");
    mkdirSync(join(project, ".pi", "extensions"), { recursive: true });
    writeFileSync(
      join(project, ".pi", "extensions", "hello.ts"),
      `export default (pi: any) => pi.registerCommand("from-project", { description: "project command", handler: () => {} });`,
    );
    await world.serve();
    const commands = async (name: string) => {
      const answer = await world!.json(["rpc", name, '{"type":"get_commands"}']);
      return ((answer.data?.commands ?? []) as { name: string }[]).map((c) => c.name);
    };
    await world.ok(["spawn", "--name", "plain", "--provider", "faux", "--cwd", project]);
    await world.ok(["spawn", "--name", "approved", "--provider", "faux", "--cwd", project, "--approve"]);
    expect(await commands("plain")).not.toContain("from-project");
    expect(await commands("approved")).toContain("from-project");
    await world.ok(["restart", "approved"]);
    await world.waitForStatus("approved", (a) => a.status === "idle");
    expect(await commands("approved")).toContain("from-project");
    expect(existsSync(join(world.home.path, "trust.json"))).toBe(false);
  }, 60_000);
});
