/**
 * `ctx.reload()` with skills and prompt templates at paths an extension returns from
 * `resources_discover`: each file is read once at start-up and once at the reload (the
 * worker's reads counted by a preloaded fs wrapper), also when the reloaded extension
 * returns other paths (the last ones are not read again first). The commands afterwards
 * are the same on our worker and on upstream pi 0.73.1 (the new paths' skill and
 * template, not the old ones'). The upstream half is skipped without test/upstream.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import type { RpcWorker } from "../support/rpc-worker.js";
import { startOracle, upstreamInstalled, type Implementation } from "../support/upstream-oracle.js";
import { useOracleFixture } from "../support/oracle-fixture.js";

const COUNTER = resolve(import.meta.dirname, "../support/read-counter.cjs");

/** Returns the paths in $PATHS_FILE, read at each discovery; `/reload-now` reloads. */
const EXTENSION = `import { readFileSync } from "node:fs";
export default function (pi) {
  pi.on("resources_discover", () => JSON.parse(readFileSync(process.env.PATHS_FILE, "utf8")));
  pi.registerCommand("reload-now", { description: "reload the runtime", handler: async (_args, ctx) => { await ctx.reload(); } });
}
`;

const { server, dirs, dir } = useOracleFixture();

/** A folder with an extension, two skills (`a`, `b`) and two templates (`ta`, `tb`), and the file naming the paths it returns. */
function resourcesFolder(impl: Implementation) {
  const root = dir(`pi-discover-${impl}-`);
  for (const name of ["a", "b"]) {
    mkdirSync(join(root, `skills-${name}`, name), { recursive: true });
    writeFileSync(
      join(root, `skills-${name}`, name, "SKILL.md"),
      `---\nname: ${name}\ndescription: skill ${name}\n---\nDo ${name}.\n`,
    );
    writeFileSync(join(root, `t${name}.md`), `---\ndescription: template ${name}\n---\nSay ${name}.\n`);
  }
  const extension = join(root, "discover.ts");
  writeFileSync(extension, EXTENSION);
  const pathsFile = join(root, "paths.json");
  const returns = (name: string) =>
    writeFileSync(
      pathsFile,
      JSON.stringify({ skillPaths: [join(root, `skills-${name}`)], promptPaths: [join(root, `t${name}.md`)] }),
    );
  return {
    root,
    extension,
    pathsFile,
    returns,
    skill: (name: string) => join(root, `skills-${name}`, name, "SKILL.md"),
    template: (name: string) => join(root, `t${name}.md`),
  };
}

/** The skill and template commands the worker lists. */
async function resourceCommands(w: RpcWorker): Promise<string[]> {
  const r = await w.request({ type: "get_commands" }, 30_000);
  return (r.data.commands as { name: string; source: string }[])
    .filter((c) => c.source === "skill" || c.source === "prompt")
    .map((c) => c.name)
    .sort();
}

async function reload(w: RpcWorker): Promise<void> {
  expect(await w.request({ type: "prompt", message: "/reload-now" }, 30_000)).toMatchObject({ success: true });
}

describe("reload with resources_discover paths reads each resource once", () => {
  it("the same paths: every file once at start-up and once at the reload; other paths: the old ones are not read at the reload", async () => {
    const f = resourcesFolder("ours");
    const reads = join(f.root, "reads.log");
    writeFileSync(reads, "");
    f.returns("a");
    const { w, home } = startOracle("ours", server, dirs, {
      args: ["-e", f.extension],
      env: {
        PATHS_FILE: f.pathsFile,
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --require ${COUNTER}`.trim(),
        READ_COUNTER_UNDER: tmpdir(),
        READ_COUNTER_OUT: reads,
      },
      prepare: (h) => {
        mkdirSync(join(h, "skills", "home-skill"), { recursive: true });
        writeFileSync(
          join(h, "skills", "home-skill", "SKILL.md"),
          "---\nname: home-skill\ndescription: the home's skill\n---\nx\n",
        );
      },
    });
    // Counted: every file under the temp folder (the test's folder and the home).
    const count = (path: string) =>
      readFileSync(reads, "utf8")
        .split("\n")
        .filter((l) => l === path).length;
    const homeSkill = join(home, "skills", "home-skill", "SKILL.md");
    expect(await resourceCommands(w)).toEqual(["skill:a", "skill:home-skill", "ta"]);
    expect([count(homeSkill), count(f.skill("a")), count(f.template("a"))]).toEqual([1, 1, 1]);

    await reload(w);
    expect(await resourceCommands(w)).toEqual(["skill:a", "skill:home-skill", "ta"]);
    expect([count(homeSkill), count(f.skill("a")), count(f.template("a"))]).toEqual([2, 2, 2]);

    f.returns("b");
    await reload(w);
    expect(await resourceCommands(w)).toEqual(["skill:b", "skill:home-skill", "tb"]);
    expect([
      count(homeSkill),
      count(f.skill("a")),
      count(f.template("a")),
      count(f.skill("b")),
      count(f.template("b")),
    ]).toEqual([3, 2, 2, 1, 1]);
  }, 90_000);

  it.skipIf(!upstreamInstalled)(
    "the commands after reloads with the same and with other paths are upstream pi's",
    async () => {
      const run = async (impl: Implementation) => {
        const f = resourcesFolder(impl);
        f.returns("a");
        const { w } = startOracle(impl, server, dirs, { args: ["-e", f.extension], env: { PATHS_FILE: f.pathsFile } });
        const seen = [await resourceCommands(w)];
        await reload(w);
        seen.push(await resourceCommands(w));
        f.returns("b");
        await reload(w);
        seen.push(await resourceCommands(w));
        return seen;
      };
      const upstream = await run("upstream");
      expect(upstream).toEqual([
        ["skill:a", "ta"],
        ["skill:a", "ta"],
        ["skill:b", "tb"],
      ]);
      expect(await run("ours")).toEqual(upstream);
    },
    120_000,
  );
});
