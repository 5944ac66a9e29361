/**
 * What a new user tripped over, end to end with the built CLI: `--version`, help
 * pointing at the subcommand, `steer`/`abort` on an idle agent, a `diff --json` patch
 * that `git apply` takes. A real `serve` and real faux workers per test; afterEach
 * kills every process and removes every folder the test made.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { isAlive } from "../support/rpc-worker.js";
import { BIN, PI, World, type Json } from "../support/orch-cli.js";

const ROOT = join(import.meta.dirname, "../..");
const VERSION = (
  JSON.parse(readFileSync(join(import.meta.dirname, "../../package.json"), "utf8")) as { version: string }
).version;
const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.com",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.com",
};

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
    const stdout = execFileSync(process.execPath, [bin, ...args], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
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
    // The model the worker runs, as the TUI shows it, not only the provider asked for.
    expect(await world.ok(["list"])).toMatch(/alpha\s+idle\s+idle\s+\d+\s+0\s+faux\/faux-1\s/);
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

  it("stop says which agents it stopped and which were already down; a prompt to a busy agent reads as one sentence", async () => {
    world = new World();
    await world.serve();
    await world.ok(["spawn", "--name", "one", "--provider", "faux"]);
    await world.ok(["spawn", "--name", "two", "--provider", "faux", "--prompt", "run `sleep 30`"]);
    await world.waitForStatus("two", (a) => a.status === "busy");
    const busy = await world.cli(["prompt", "two", "hi"]);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain("; it is busy: use pi-orch steer two TEXT or pi-orch follow-up two TEXT");
    expect(busy.stderr).not.toContain(".;");
    expect(await world.ok(["stop", "one"])).toBe("stopped one\n");
    expect(await world.ok(["stop", "one"])).toBe("one was already stopped\n");
    expect(await world.ok(["stop", "--all"])).toBe("stopped 1 agent: two (already down: one)\n");
    expect(await world.ok(["stop", "--all"])).toBe("no running agents to stop (already down: one, two)\n");
    expect((await world.json<Json[]>(["stop", "--all", "--json"])).map((a) => [a.name, a.status])).toEqual([
      ["one", "stopped"],
      ["two", "stopped"],
    ]);
    await world.ok(["restart", "two"]);
    expect(await world.ok(["shutdown"])).toBe("supervisor stopped; stopped 1 agent: two\n");
  }, 60_000);

  it("status and list name the model the same way (provider/id), in text and JSON, running or stopped", async () => {
    world = new World();
    await world.serve();
    await world.ok(["spawn", "--name", "named", "--provider", "faux"]);
    const check = async (status: string) => {
      expect(await world!.ok(["list"])).toMatch(new RegExp(`named\\s+${status}\\s.*\\sfaux/faux-1\\s`));
      expect(await world!.ok(["status", "named"])).toMatch(/^model\s+faux\/faux-1$/m);
      const [listed] = await world!.json<Json[]>(["list"]);
      expect(listed).toMatchObject({ provider: "faux", model: "faux-1" });
      expect(await world!.json<Json>(["status", "named"])).toMatchObject({ provider: "faux", model: "faux-1" });
    };
    await check("idle");
    // A stopped agent has no worker to ask: its session file says which model it ran.
    await world.ok(["stop", "named"]);
    await check("stopped");
  }, 60_000);

  it("prompt --json without --wait prints which agents took the prompt as JSON, and exits 1 when one refused", async () => {
    world = new World();
    await world.serve();
    await world.ok(["spawn", "--name", "free", "--provider", "faux"]);
    await world.ok(["spawn", "--name", "taken", "--provider", "faux", "--prompt", "run `sleep 30`"]);
    await world.waitForStatus("taken", (a) => a.status === "busy");
    const r = await world.cli(["prompt", "--all", "--json", "list the files"]);
    expect(r.code).toBe(1);
    const sent = JSON.parse(r.stdout) as Json[];
    expect(sent.map((s) => [s.agent, s.sent]).sort()).toEqual([
      ["free", true],
      ["taken", false],
    ]);
    expect(sent.find((s) => s.agent === "taken")!.error).toContain('agent "taken" refused the prompt');
    expect(r.stderr).toContain('agent "taken" refused the prompt');
    // free may still be busy with that prompt: a third agent takes the next one.
    await world.ok(["spawn", "--name", "third", "--provider", "faux"]);
    const ok = await world.cli(["prompt", "third", "--json", "list the files"]);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual([{ agent: "third", sent: true }]);
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

  it("an extension command in print mode runs and exits 0", () => {
    const r = spawnSync(
      process.execPath,
      [PI, "-p", "--provider", "faux", "--no-session", "-e", join(ROOT, "examples/extensions/guard.ts"), "/hello Ada"],
      { encoding: "utf8" },
    );
    expect(r.stderr).toContain("Hello, Ada!");
    expect(r.status).toBe(0);
  });

  it("attach --since past the last event is a usage error naming the last event", async () => {
    world = new World();
    await world.serve();
    await world.ok(["spawn", "--name", "quiet", "--provider", "faux"]);
    const last = (await world.json<Json>(["status", "quiet"])).lastSeq as number;
    const r = await world.cli(["attach", "quiet", "--since", "99999"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--since 99999 is past the last event of quiet (${last})`);
  }, 60_000);

  it("a first prompt the worker refuses (no API key) leaves no agent behind and says how to give a key to a supervised agent", async () => {
    world = new World();
    await world.serve();
    const r = await world.cli(["spawn", "--name", "keyless", "--provider", "openai", "--prompt", "hi"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no API key for provider "openai"');
    expect(r.stderr).not.toContain("--api-key");
    expect(r.stderr).toContain("OPENAI_API_KEY in the supervisor's environment");
    expect(await world.json<Json[]>(["list"])).toEqual([]);
    // A prompt to an agent without a key gets the same advice.
    // Spawned without a first prompt: warned at once, not only at the first prompt.
    const keyless = await world.cli(["spawn", "--name", "keyless", "--provider", "openai"]);
    expect(keyless.code).toBe(0);
    expect(keyless.stderr).toContain(
      'pi-orch: warning: agent "keyless" will refuse prompts: no API key for provider "openai"',
    );
    expect(keyless.stderr).toContain("OPENAI_API_KEY in the supervisor's environment");
    expect((await world.cli(["spawn", "--name", "offline", "--provider", "faux"])).stderr).toBe("");
    const prompt = await world.cli(["prompt", "keyless", "hi"]);
    expect(prompt.code).toBe(1);
    expect(prompt.stderr).toContain("OPENAI_API_KEY in the supervisor's environment");
    expect(prompt.stderr).not.toContain("--api-key");
  }, 60_000);

  it("a configuration error is failed at once, with the worker's own words in spawn, status and list", async () => {
    world = new World();
    await world.serve();
    const bad = await world.cli(["spawn", "--name", "bad", "--provider", "nosuch"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      'did not start (failed: the worker refused its configuration: pi: unknown provider "nosuch"',
    );
    // The hint repeats the --home the command was given (World passes one).
    expect(bad.stderr).toContain(`remove it with pi-orch --home ${world.home.path} rm bad`);
    const ghost = await world.cli([
      "spawn",
      "--name",
      "ghost",
      "--worker-command",
      "no-such-worker-program --mode rpc",
    ]);
    expect(ghost.code).toBe(1);
    expect(ghost.stderr).toContain('could not start the worker "no-such-worker-program"');
    // No stderr log was written, so none is pointed at.
    expect(ghost.stderr).not.toContain("logs ghost --stderr");
    const status = await world.json<Json>(["status", "bad"]);
    expect(status).toMatchObject({ status: "failed", restarts: 0 });
    expect(status.statusReason).toContain('unknown provider "nosuch"');
    const list = await world.ok(["list"]);
    expect(list).toContain('bad: the worker refused its configuration: pi: unknown provider "nosuch"');
  }, 60_000);

  it("after a supervisor died mid-run, the next one logs run_interrupted, which logs shows", async () => {
    world = new World();
    const serve = await world.serve();
    await world.ok(["spawn", "--name", "sleeper", "--provider", "faux", "--prompt", "run `sleep 30`"]);
    await world.waitForStatus("sleeper", (a) => a.status === "busy");
    await world.until(
      "the registry to say busy",
      () => readFileSync(join(world!.home.path, "agents.json"), "utf8"),
      (t) => t.includes('"busy"'),
    );
    const worker = (await world.json<Json>(["status", "sleeper"])).pid as number;
    const gone = new Promise((r) => serve.once("exit", r));
    serve.kill("SIGKILL");
    await gone;
    await world.until(
      "the worker to exit by itself",
      () => String(isAlive(worker)),
      (alive) => alive === "false",
    );
    await world.serve();
    await world.until(
      "run_interrupted in the log",
      () => JSON.stringify(world!.events("sleeper")),
      (t) => t.includes("run_interrupted"),
    );
    const last = world.events("sleeper").at(-1)!;
    expect(last.event).toEqual({ type: "run_interrupted", reason: "the supervisor exited during the run" });
    expect(await world.ok(["logs", "sleeper"])).toMatch(/interrupted.*the supervisor exited during the run/);
    // list says how to bring it back, and restart does.
    expect(await world.ok(["list"])).toContain(
      "sleeper was stopped when the supervisor exited; pi-orch restart sleeper brings it back with its session",
    );
    await world.ok(["restart", "sleeper"]);
    expect(await world.ok(["list"])).not.toContain("supervisor exited");
  }, 60_000);

  it("logs --stderr --json prints one {line} per stderr line", async () => {
    world = new World();
    await world.serve();
    await world.ok(["spawn", "--name", "noisy", "--provider", "faux"]);
    mkdirSync(join(world.home.path, "logs"), { recursive: true });
    writeFileSync(join(world.home.path, "logs", "noisy.stderr.log"), "first\nsecond {x}\nno newline");
    const r = await world.cli(["logs", "noisy", "--stderr", "--json"]);
    expect(r.code).toBe(0);
    expect(
      r.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l)),
    ).toEqual([{ line: "first" }, { line: "second {x}" }, { line: "no newline" }]);
  }, 60_000);

  it("a home other users can open: the error says to run chmod 700", () => {
    const home = mkdtempSync(join(tmpdir(), "pi-orch-open-home-"));
    try {
      chmodSync(home, 0o755);
      const r = spawnSync(process.execPath, [BIN, "--home", home, "list"], {
        encoding: "utf8",
        env: { ...process.env, NO_COLOR: "1" },
      });
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(
        `could not start a supervisor for ${home}: refusing to use ${home}: it is open to other users (mode 755); run chmod 700 ${home}`,
      );
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("demo --keep keeps its folder and never says it removes it", () => {
    // As the README's quickstart runs it (npx sets npm_command=exec): the next commands it suggests say npx too.
    const r = spawnSync(process.execPath, [BIN, "demo", "--no-tui", "--keep"], {
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1", PI_ORCH_HOME: "/nonexistent", npm_command: "exec" },
      timeout: 60_000,
    });
    const kept = /pi-orch demo: kept (\S+)/.exec(r.stderr)?.[1];
    try {
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).not.toContain("removing");
      expect(r.stdout).toContain(
        'Next: npx pi-orch demo (the TUI), or npx pi-orch spawn --provider faux --prompt "list the files"',
      );
      expect(kept && existsSync(join(kept, "repo"))).toBe(true);
    } finally {
      if (kept?.includes("pi-orch-demo-")) rmSync(kept, { recursive: true, force: true });
    }
  }, 60_000);
});
