/**
 * What a new user tripped over, end to end with the built CLI: `--version`, help
 * pointing at the subcommand, `steer`/`abort` on an idle agent, a `diff --json` patch
 * that `git apply` takes. A real `serve` and real faux workers per test; afterEach
 * kills every process and removes every folder the test made.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { BIN, PI, World, type Json } from "../support/orch-cli.js";

const VERSION = (JSON.parse(readFileSync(join(import.meta.dirname, "../../package.json"), "utf8")) as { version: string }).version;
const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.com", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.com" };

let world: World | undefined;

beforeAll(() => {
  if (!existsSync(BIN) || !existsSync(PI)) throw new Error("dist/ is missing: run npm run build first");
});

afterEach(async () => {
  await world?.cleanup();
  world = undefined;
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8" });
}

function run(bin: string, args: string[]): { code: number; stdout: string; stderr: string } {
  try {
    const stdout = execFileSync(process.execPath, [bin, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    return { code: 0, stdout, stderr: "" };
  } catch (err) {
    const e = err as { status: number; stdout: string; stderr: string };
    return { code: e.status, stdout: e.stdout, stderr: e.stderr };
  }
}

describe("the CLI as a new user meets it", () => {
  it("both programs print their version and exit 0", () => {
    for (const bin of [BIN, PI]) {
      const r = run(bin, ["--version"]);
      expect(r).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: "" });
    }
  });

  it("a mistake in a subcommand's flags points at that subcommand's help", () => {
    const r = run(BIN, ["spawn", "--no-such-flag"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("(run pi-orch spawn --help for usage)");
  });

  it("refuses a steer or follow-up to an idle agent, so the next prompt is answered alone; abort says there is nothing to abort", async () => {
    world = new World();
    await world.serve();
    await world.ok(["spawn", "--name", "alpha", "--provider", "faux"]);
    const steer = await world.cli(["steer", "alpha", "read README.md"]);
    expect(steer.code).toBe(1);
    expect(steer.stderr).toContain('agent "alpha" is idle');
    expect(steer.stderr).toContain('pi-orch prompt alpha "read README.md"');
    expect((await world.cli(["follow-up", "alpha", "read README.md"])).code).toBe(1);

    writeFileSync(join(world.cwd.path, "a.txt"), "x\n");
    const answer = await world.cli(["prompt", "alpha", "list the files", "--wait"]);
    expect(answer.code).toBe(0);
    expect(answer.stdout).toContain("a.txt");
    expect(answer.stdout).not.toContain("README.md");

    const abort = await world.cli(["abort", "alpha"]);
    expect(abort).toMatchObject({ code: 0, stdout: "alpha is idle: no run to abort\n" });
  }, 60_000);

  it("diff --json holds a patch that git apply accepts", async () => {
    world = new World();
    const repo = world.cwd.path;
    git(repo, "init", "-q", "-b", "main");
    writeFileSync(join(repo, "greeting.txt"), "hello world\n");
    git(repo, "add", ".");
    git(repo, "commit", "-q", "-m", "first");
    await world.serve();
    await world.ok(["spawn", "--name", "ed", "--provider", "faux", "--worktree"]);
    await world.ok(["prompt", "ed", 'replace "hello" with "hi" in greeting.txt', "--wait"]);
    const { diff } = await world.json<Json>(["diff", "ed"]);
    expect(diff.endsWith("\n")).toBe(true);
    const patch = join(repo, "..", `${world.tag}.patch`);
    writeFileSync(patch, diff);
    try {
      git(repo, "apply", "--check", patch);
      git(repo, "apply", patch);
    } finally {
      execFileSync("rm", ["-f", patch]);
    }
    expect(readFileSync(join(repo, "greeting.txt"), "utf8")).toBe("hi world\n");
    await world.ok(["rm", "ed", "--force", "--delete-branch"]);
  }, 60_000);
});
