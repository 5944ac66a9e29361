/**
 * `pi-orch spawn --package SOURCE`: a fleet shares one set of pi packages. The npm one (a
 * packed tarball, offline) is installed once by the CLI where the workers look for `-e`
 * packages, each worker gets `-e SOURCE` (a folder as its absolute path), a sandboxed
 * worker sees the install read-only, and a restarted worker loads the same set.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { World, type Json } from "../support/orch-cli.js";

let world: World | undefined;
afterEach(async () => {
  await world?.cleanup();
  world = undefined;
});

/** A package folder whose extension registers `/NAME-hello` and whose prompt is `NAME-review`. */
function writePackage(dir: string, name: string): string {
  mkdirSync(join(dir, "extensions"), { recursive: true });
  mkdirSync(join(dir, "prompts"), { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name, version: "1.0.0" }));
  writeFileSync(
    join(dir, "extensions", "hello.ts"),
    `export default function (pi) { pi.registerCommand("${name}-hello", { description: "hi", handler: async () => {} }); }\n`,
  );
  writeFileSync(join(dir, "prompts", `${name}-review.md`), "---\ndescription: Review\n---\nReview $@\n");
  return dir;
}

async function commandNames(w: World, agent: string): Promise<string[]> {
  const r = JSON.parse(await w.ok(["rpc", agent, '{"type":"get_commands"}'])) as Json;
  return (r.data.commands as { name: string }[]).map((c) => c.name).sort();
}

const bwrap = spawnSync("bwrap", ["--ro-bind", "/", "/", "true"]).status === 0;

describe("pi-orch spawn --package", () => {
  it("installs an npm package once for the fleet; every worker, sandboxed or not, and a restarted one load it", async () => {
    world = new World();
    const w = world;
    const folder = writePackage(join(w.cwd.path, "local-pkg"), "fleet-local");
    const src = writePackage(join(w.cwd.path, "npm-src"), "fleet-npm");
    const packed = spawnSync("npm", ["pack", "--pack-destination", w.cwd.path], { cwd: src, encoding: "utf8" });
    expect(packed.status).toBe(0);
    const tarball = join(w.cwd.path, packed.stdout.trim().split("\n").pop()!);
    const npmSource = `npm:fleet-npm@file:${tarball}`;
    await w.serve();
    const expected = ["fleet-local-hello", "fleet-local-review", "fleet-npm-hello", "fleet-npm-review"];

    const first = await w.cli([
      "spawn",
      "--name",
      "one",
      "--provider",
      "faux",
      "--package",
      npmSource,
      "--package",
      "./local-pkg",
    ]);
    expect(first.code).toBe(0);
    expect(first.stderr).toContain(`installing ${npmSource} for the agents`);
    const second = await w.cli([
      "spawn",
      "--name",
      "two",
      "--provider",
      "faux",
      "--package",
      npmSource,
      "--package",
      folder,
      ...(bwrap ? ["--sandbox", "on"] : []),
    ]);
    expect(second.code).toBe(0);
    expect(second.stderr).not.toContain("installing");
    const installs = readdirSync(join(w.home.path, "tmp", "extensions", "npm"));
    expect(installs).toHaveLength(1);

    expect(await commandNames(w, "one")).toEqual(expected);
    expect(await commandNames(w, "two")).toEqual(expected);
    // The workers found the install: none installed again (a sandboxed one sees it read-only).
    if (bwrap) expect(second.stdout).toContain("sandbox on");
    for (const agent of ["one", "two"]) expect(await w.ok(["logs", agent, "--stderr"])).not.toContain("Installing");
    const agents = JSON.parse(readFileSync(join(w.home.path, "agents.json"), "utf8")) as Json;
    const one = (agents.agents as Json[]).find((a) => a.name === "one")!;
    expect(one.packages).toEqual([npmSource, folder]);

    await w.ok(["restart", "one"]);
    await w.waitForStatus("one", (a) => a.status === "idle");
    expect(await commandNames(w, "one")).toEqual(expected);
  }, 120_000);

  it("a source that cannot be installed stops the spawn with the reason; a missing folder is a usage error", async () => {
    world = new World();
    const w = world;
    await w.serve();
    const bad = await w.cli([
      "spawn",
      "--name",
      "bad",
      "--provider",
      "faux",
      "--package",
      "npm:nope@file:/no/such.tgz",
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("--package npm:nope@file:/no/such.tgz could not be installed: npm install");
    const gone = await w.cli(["spawn", "--name", "gone", "--provider", "faux", "--package", "./nowhere"]);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toContain(`--package ./nowhere: ${join(w.cwd.path, "nowhere")} does not exist`);
    expect(
      existsSync(join(w.home.path, "agents.json")) ? readFileSync(join(w.home.path, "agents.json"), "utf8") : "",
    ).not.toContain('"bad"');
  }, 60_000);
});
