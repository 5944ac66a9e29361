/**
 * pi packages, ours against pi 1.6.0 with the same commands, offline: `pi install`, `list`,
 * `remove` and `update` of a local folder, of a packed npm tarball (`npm:NAME@file:TGZ`,
 * installed by the real npm into `<agent dir>/npm`) and of a git repository (a real
 * `git clone` of a local bare repository, reached through git's `url.insteadOf`) print the
 * same and exit the same; at start both workers list the same commands, skills and prompt
 * templates from the package in `get_commands`, with pi's package `sourceInfo`. The sides
 * differ on purpose in one place: a package whose extension throws at load stops pi 1.6.0's
 * RPC mode (exit 1); ours reports it as an `extension_error` and keeps serving.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { PI_BIN, type RpcWorker } from "../support/rpc-worker.js";
import { type Implementation, startOracle, UPSTREAM } from "../support/upstream-oracle.js";

const PI16 = UPSTREAM["1.6.0"];
const IMPLS: Implementation[] = ["ours", "upstream"];

const fx = useOracleFixture();

/** A pi package folder: an extension registering `/NAME-hello`, a skill `NAME-greet`, a prompt `NAME-review`. */
function writePackage(dir: string, name: string, opts: { version?: string; throwOnLoad?: boolean } = {}): string {
  mkdirSync(join(dir, "extensions"), { recursive: true });
  mkdirSync(join(dir, "skills", `${name}-greet`), { recursive: true });
  mkdirSync(join(dir, "prompts"), { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name, version: opts.version ?? "1.0.0", keywords: ["pi-package"] }, null, 2),
  );
  writeFileSync(
    join(dir, "extensions", "hello.ts"),
    opts.throwOnLoad
      ? `export default function () { throw new Error("${name} refuses to load"); }\n`
      : `export default function (pi) {
  pi.registerCommand("${name}-hello", { description: "say hello", handler: async (_args, ctx) => ctx.ui.notify("hello", "info") });
}\n`,
  );
  writeFileSync(
    join(dir, "skills", `${name}-greet`, "SKILL.md"),
    `---\nname: ${name}-greet\ndescription: Greets the user politely.\n---\nSay hello.\n`,
  );
  writeFileSync(join(dir, "prompts", `${name}-review.md`), "---\ndescription: Review the code\n---\nReview $@\n");
  return dir;
}

/** `npm pack` a package folder into `into`; the tarball's path. */
function pack(dir: string, into: string): string {
  const r = spawnSync("npm", ["pack", "--pack-destination", into], { cwd: dir, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`npm pack failed: ${r.stderr}`);
  return join(into, r.stdout.trim().split("\n").pop()!);
}

/** The command line of `impl`'s pi with `home` as its agent directory. */
function piCommand(impl: Implementation, home: string): { bin: string; pre: string[]; env: NodeJS.ProcessEnv } {
  return impl === "ours"
    ? { bin: process.execPath, pre: [PI_BIN], env: { PI_ORCH_HOME: home } }
    : { bin: PI16.node, pre: [PI16.cli], env: { PI_CODING_AGENT_DIR: home } };
}

/** Run `pi ARGS` of `impl`; output with the home, project and fixture folders named, npm's own lines left out. */
async function pi(
  impl: Implementation,
  home: string,
  cwd: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | undefined; stdout: string; stderr: string }> {
  const cmd = piCommand(impl, home);
  const r = await execa(cmd.bin, [...cmd.pre, ...args], { cwd, env: { ...cmd.env, ...env }, reject: false });
  const clean = (s: string) =>
    s
      .replaceAll(home, "<home>")
      .replaceAll(cwd, "<project>")
      .split("\n")
      // npm's and git's progress, which differ run to run ("added 1 package in 480ms").
      .filter((l) => !/^(added|removed|up to date|changed|npm notice|Cloning into|done\.)|^\s*$/.test(l.trim()))
      .join("\n");
  return { code: r.exitCode, stdout: clean(r.stdout), stderr: clean(r.stderr) };
}

/** The same, synchronously, for a start's `prepare`. */
function piSync(impl: Implementation, home: string, cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): void {
  const cmd = piCommand(impl, home);
  const r = spawnSync(cmd.bin, [...cmd.pre, ...args], { cwd, env: { ...process.env, ...cmd.env, ...env } });
  if (r.status !== 0) throw new Error(`pi ${args.join(" ")} failed (${impl}): ${r.stderr}`);
}

/** `get_commands`, sorted, with the agent directory named, so both sides compare. */
async function commands(w: RpcWorker, home: string) {
  const r = await w.request({ type: "get_commands" });
  expect(r.success).toBe(true);
  const named = (s: string | undefined) => s?.replaceAll(home, "<home>");
  return (
    r.data.commands as { name: string; description?: string; source: string; sourceInfo: Record<string, string> }[]
  )
    .map((c) => ({
      ...c,
      sourceInfo: {
        ...c.sourceInfo,
        path: named(c.sourceInfo.path),
        ...(c.sourceInfo.baseDir ? { baseDir: named(c.sourceInfo.baseDir) } : {}),
      },
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

describe.skipIf(!PI16.installed)("pi packages, ours and pi 1.6.0", () => {
  it("install, list and remove of a local folder print the same and exit the same", async () => {
    const shared = fx.dir("pkg-folder-");
    writePackage(join(shared, "demo-folder"), "demo-folder");
    const script = [
      ["install", "../demo-folder"],
      ["list"],
      ["install", "./demo-folder"],
      ["install", "./nope"],
      ["install"],
      ["list", "--bogus"],
      ["remove", "../demo-folder"],
      ["remove", "../demo-folder"],
      ["update", "nosuch", "--extensions"],
      ["list"],
    ];
    const seen: Record<string, unknown[]> = {};
    for (const impl of IMPLS) {
      const home = fx.dir(`pkg-folder-${impl}-home-`);
      const project = join(shared, `project-${impl}`);
      mkdirSync(project);
      seen[impl] = [];
      for (const [i, args] of script.entries()) {
        // `./demo-folder` is the same folder seen from the shared folder.
        const cwd = i === 2 ? shared : project;
        const r = await pi(impl, home, cwd, args);
        // Our usage lines name --json, which pi does not have.
        seen[impl].push({ args, ...r, stderr: r.stderr.replace(" [--json]", "") });
      }
      seen[impl].push(readFileSync(join(home, "settings.json"), "utf8"));
    }
    expect(seen.ours).toEqual(seen.upstream);
    expect(seen.ours![0]).toMatchObject({ code: 0, stdout: "Installing ../demo-folder...\nInstalled ../demo-folder" });
    expect(seen.ours![3]).toMatchObject({ code: 1 });
    expect(seen.ours![7]).toMatchObject({ code: 1, stderr: "No matching package found for ../demo-folder" });
    expect(JSON.parse(seen.ours!.at(-1) as string)).toEqual({ packages: [] });
  }, 60_000);

  it("a local folder and a packed npm tarball give the same commands, skills and prompts in get_commands", async () => {
    const shared = fx.dir("pkg-npm-");
    const folder = writePackage(join(shared, "demo-local"), "demo-local");
    const tarball = pack(writePackage(join(shared, "demo-npm"), "demo-npm"), shared);
    const found: Record<string, unknown> = {};
    for (const impl of IMPLS) {
      const { w, home, project } = startOracle(impl, fx.server, fx.dirs, {
        pi: "1.6.0",
        configuredExtensions: true,
        prepare: (home) => {
          piSync(impl, home, shared, ["install", folder]);
          piSync(impl, home, shared, ["install", `npm:demo-npm@file:${tarball}`]);
        },
      });
      expect(existsSync(join(home, "npm", "node_modules", "demo-npm", "package.json"))).toBe(true);
      found[impl] = await commands(w, home);
      w.closeStdin();
      await w.exited;
      const list = await pi(impl, home, project, ["list"]);
      expect(list.stdout).toContain(`  npm:demo-npm@file:${tarball}\n    <home>/npm/node_modules/demo-npm`);
      found[`${impl} list`] = list;
      const removed = await pi(impl, home, project, ["remove", "npm:demo-npm"]);
      expect(removed).toMatchObject({ code: 0, stdout: "Removing npm:demo-npm...\nRemoved npm:demo-npm" });
      expect(existsSync(join(home, "npm", "node_modules", "demo-npm"))).toBe(false);
    }
    expect(found.ours).toEqual(found.upstream);
    expect(found["ours list"]).toEqual(found["upstream list"]);
    expect((found.ours as { name: string }[]).map((c) => c.name)).toEqual([
      "demo-local-hello",
      "demo-local-review",
      "demo-npm-hello",
      "demo-npm-review",
      "skill:demo-local-greet",
      "skill:demo-npm-greet",
    ]);
    expect((found.ours as { sourceInfo: object }[])[2]!.sourceInfo).toEqual({
      path: "<home>/npm/node_modules/demo-npm/extensions/hello.ts",
      source: `npm:demo-npm@file:${tarball}`,
      scope: "user",
      origin: "package",
      baseDir: "<home>/npm/node_modules/demo-npm",
    });
  }, 90_000);

  it("installs from git with a real clone, updates to a new commit, and removes the clone", async () => {
    const shared = fx.dir("pkg-git-");
    const work = writePackage(join(shared, "work"), "demo-git");
    const bare = join(shared, "remote", "acme", "demo-git");
    const git = (cwd: string, ...args: string[]) => {
      const r = spawnSync("git", args, { cwd, encoding: "utf8" });
      if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
      return r.stdout.trim();
    };
    git(shared, "init", "-q", "--bare", bare);
    git(work, "init", "-q", "-b", "main");
    git(work, "add", ".");
    git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one");
    git(work, "push", "-q", bare, "main");
    git(bare, "symbolic-ref", "HEAD", "refs/heads/main");
    // git:example.test/acme/demo-git is https://example.test/acme/demo-git, which git fetches from the bare repository.
    const env = {
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: `url.file://${join(shared, "remote")}/.insteadOf`,
      GIT_CONFIG_VALUE_0: "https://example.test/",
    };
    const source = "git:example.test/acme/demo-git";
    const seen: Record<string, unknown[]> = {};
    for (const impl of IMPLS) {
      const { w, home, project } = startOracle(impl, fx.server, fx.dirs, {
        pi: "1.6.0",
        configuredExtensions: true,
        env,
        prepare: (home) => piSync(impl, home, shared, ["install", source], env),
      });
      const clone = join(home, "git", "example.test", "acme", "demo-git");
      expect(existsSync(join(clone, ".git"))).toBe(true);
      seen[impl] = [await commands(w, home)];
      w.closeStdin();
      await w.exited;
      seen[impl].push(await pi(impl, home, project, ["update", "--extensions"], env));
      seen[impl].push(await pi(impl, home, project, ["list"], env));
      seen[impl].push(await pi(impl, home, project, ["remove", source], env));
      expect(existsSync(clone)).toBe(false);
      expect(existsSync(join(home, "git", "example.test"))).toBe(false);
    }
    expect(seen.ours).toEqual(seen.upstream);
    expect((seen.ours![0] as { name: string }[]).map((c) => c.name)).toContain("demo-git-hello");
    expect(seen.ours![1]).toMatchObject({
      code: 0,
      stdout: expect.stringContaining("Packages are already up to date"),
    });

    // A new commit on the remote: update moves the clone to it, on both sides.
    writeFileSync(join(work, "prompts", "demo-git-later.md"), "---\ndescription: Later\n---\nLater\n");
    git(work, "add", ".");
    git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "two");
    git(work, "push", "-q", bare, "main");
    const updates: Record<string, unknown> = {};
    for (const impl of IMPLS) {
      const home = fx.dir(`pkg-git-${impl}-again-`);
      const project = fx.dir(`pkg-git-${impl}-project-`);
      piSync(impl, home, shared, ["install", `${source}`], env);
      const clone = join(home, "git", "example.test", "acme", "demo-git");
      git(clone, "reset", "-q", "--hard", "HEAD~1");
      const r = await pi(impl, home, project, ["update", source], env);
      updates[impl] = r;
      expect(existsSync(join(clone, "prompts", "demo-git-later.md"))).toBe(true);
    }
    expect(updates.ours).toEqual(updates.upstream);
    expect(updates.ours).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(
        /Updated 1 package:\n {2}git:example\.test\/acme\/demo-git [0-9a-f]{7} -> [0-9a-f]{7}/,
      ),
    });
  }, 120_000);

  it("-e npm:SOURCE loads a package for one run from <agent dir>/tmp/extensions, the same on both", async () => {
    const shared = fx.dir("pkg-temp-");
    const tarball = pack(writePackage(join(shared, "demo-temp"), "demo-temp"), shared);
    const found: Record<string, unknown> = {};
    for (const impl of IMPLS) {
      const { w, home } = startOracle(impl, fx.server, fx.dirs, {
        pi: "1.6.0",
        args: ["-e", `npm:demo-temp@file:${tarball}`],
        // pi installs a missing -e package only when online; the tarball needs no network.
        env: { PI_OFFLINE: "" },
      });
      found[impl] = await commands(w, home);
      expect(JSON.stringify(found[impl])).toContain("<home>/tmp/extensions/npm/");
      expect(existsSync(join(home, "settings.json"))).toBe(false);
    }
    expect(found.ours).toEqual(found.upstream);
    expect((found.ours as { name: string }[]).map((c) => c.name)).toEqual([
      "demo-temp-hello",
      "demo-temp-review",
      "skill:demo-temp-greet",
    ]);
  }, 60_000);

  it("a package that cannot install or throws at load is a clear error; our worker keeps serving", async () => {
    const shared = fx.dir("pkg-broken-");
    const broken = writePackage(join(shared, "demo-broken"), "demo-broken", { throwOnLoad: true });
    const missing = join(shared, "gone-1.0.0.tgz");
    const { w } = startOracle("ours", fx.server, fx.dirs, {
      pi: "1.6.0",
      configuredExtensions: true,
      prepare: (home) => {
        piSync("ours", home, shared, ["install", broken]);
        const settings = JSON.parse(readFileSync(join(home, "settings.json"), "utf8"));
        settings.packages.push(`npm:gone@file:${missing}`);
        writeFileSync(join(home, "settings.json"), JSON.stringify(settings));
      },
    });
    const listed = await w.request({ type: "get_commands" });
    const names = (listed.data.commands as { name: string }[]).map((c) => c.name).sort();
    // The throwing extension is left out; the package's skill and prompt still load.
    expect(names).toEqual(["demo-broken-review", "skill:demo-broken-greet"]);
    const stderr = w.stderr.join("");
    expect(stderr).toContain(`Extension package "npm:gone@file:${missing}": npm install`);
    expect(stderr).toMatch(
      /extension .*demo-broken\/extensions\/hello\.ts failed \(load\): demo-broken refuses to load/,
    );
    expect((await w.request({ type: "get_state" })).success).toBe(true);
  }, 60_000);
});
