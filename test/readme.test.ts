/**
 * The README, run: every ```bash runnable block is executed line by line in a fresh
 * clone of this repository with a temp pi-orch home, twice in a row (the second pass
 * meets what the first one left: kept worktrees, sessions, a home), and each line must
 * exit as its comment says, `(exit N)`, or 0. The built `dist/` and `node_modules` are
 * linked into the clone, and `pi`/`pi-orch` put on the PATH, as an install would; a
 * leading `npm ci && ` is skipped (the test runs on a built checkout). Every process
 * the README started and every folder go at the end, also on failure.
 */
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");

/** One command of a runnable block and the exit code its comment promises. */
interface ReadmeCommand {
  line: number;
  command: string;
  exitCode: number;
}

/** The commands of every ```bash runnable block, continuation lines joined. Pure. */
export function runnableCommands(markdown: string): ReadmeCommand[] {
  const commands: ReadmeCommand[] = [];
  const lines = markdown.split("\n");
  let inBlock = false;
  let pending: { line: number; text: string } | null = null;
  lines.forEach((text, i) => {
    if (!inBlock) {
      inBlock = /^```bash\s+runnable\b/.test(text);
      return;
    }
    if (text.startsWith("```")) {
      inBlock = false;
      return;
    }
    const joined = pending ? `${pending.text}\n${text}` : text;
    const start = pending?.line ?? i + 1;
    if (/\\$/.test(text)) {
      pending = { line: start, text: joined };
      return;
    }
    pending = null;
    if (joined.trim() === "" || joined.trim().startsWith("#")) return;
    const exit = /#.*\(exit (\d+)\)/.exec(joined);
    commands.push({ line: start, command: joined.replace(/^npm ci && /, ""), exitCode: exit ? Number(exit[1]) : 0 });
  });
  return commands;
}

const tag = `pi-orch-readme-${randomUUID()}`;
let root = "";

/** Processes carrying this test's tag in their environment: supervisors, workers, tools. */
function taggedPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, "utf8").includes(tag)) pids.push(Number(entry));
    } catch {
      // gone, or not ours
    }
  }
  return pids;
}

beforeAll(() => {
  if (!existsSync(join(ROOT, "dist/cli/pi-orch.js"))) throw new Error("dist/ is missing: run npm run build first");
  root = realpathSync(mkdtempSync(join(tmpdir(), "pi-orch-readme-")));
});

afterAll(() => {
  if (!root) return;
  spawnSync(
    process.execPath,
    [join(ROOT, "dist/cli/pi-orch.js"), "--home", join(root, "home"), "--no-autostart", "shutdown"],
    { stdio: "ignore", timeout: 30_000 },
  );
  for (const pid of taggedPids()) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // exited meanwhile
    }
  }
  rmSync(root, { recursive: true, force: true });
});

describe("the README", () => {
  it("finds the runnable blocks and their promised exit codes", () => {
    const commands = runnableCommands(
      "```bash runnable\nnpm ci && a\nb \\\n  c   # comment\nd   # refused (exit 1)\n```\n```bash\nnot me\n```\n",
    );
    expect(commands).toEqual([
      { line: 2, command: "a", exitCode: 0 },
      { line: 3, command: "b \\\n  c   # comment", exitCode: 0 },
      { line: 5, command: "d   # refused (exit 1)", exitCode: 1 },
    ]);
  });

  it("runs every runnable block twice in a row in a fresh clone and a temp home, each line exiting as documented", () => {
    const commands = runnableCommands(readFileSync(join(ROOT, "README.md"), "utf8"));
    expect(commands.length).toBeGreaterThan(10);
    const clone = join(root, "clone");
    const home = join(root, "home");
    const bin = join(root, "bin");
    const git = spawnSync("git", ["clone", "--quiet", ROOT, clone], { encoding: "utf8" });
    expect(git.status, git.stderr).toBe(0);
    symlinkSync(join(ROOT, "node_modules"), join(clone, "node_modules"));
    symlinkSync(join(ROOT, "dist"), join(clone, "dist"));
    mkdirSync(bin);
    symlinkSync(join(ROOT, "dist/cli/pi.js"), join(bin, "pi"));
    symlinkSync(join(ROOT, "dist/cli/pi-orch.js"), join(bin, "pi-orch"));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: `${bin}:${process.env.PATH}`,
      PI_ORCH_HOME: home,
      PI_ORCH_TEST_TAG: tag,
      NO_COLOR: "1",
      ANTHROPIC_API_KEY: "",
      OPENAI_API_KEY: "",
    };
    // The README's commands run as a user's do: with the default sandbox (on where bwrap works).
    delete env.PI_ORCH_SANDBOX;
    const failures: string[] = [];
    for (const pass of [1, 2]) {
      for (const c of commands) {
        const started = Date.now();
        const r = spawnSync("bash", ["-c", c.command], { cwd: clone, env, encoding: "utf8", timeout: 120_000 });
        if (process.env.PI_ORCH_README_TIMES) process.stderr.write(`${Date.now() - started} ms  README.md:${c.line}\n`);
        if (r.status !== c.exitCode) {
          failures.push(
            `pass ${pass}, README.md:${c.line}: ${c.command}\n  exit ${r.status ?? r.signal}, documented ${c.exitCode}\n  stdout: ${r.stdout.slice(-1500)}\n  stderr: ${r.stderr.slice(-1500)}`,
          );
        }
      }
    }
    expect(failures).toEqual([]);
  }, 300_000);
});
