/**
 * Worktrees and `pi-orch run` end to end: the built CLI against temp git repositories,
 * with faux agents whose prompts are faux rules ('replace "a" with "b" in file.txt',
 * "run `sleep 30`"). Every test removes its processes, worktrees and folders.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { execa, execaSync, type ResultPromise } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import type { RunReport } from "../../cli/run/types.js";
import { OrchError } from "../../supervisor/errors.js";
import { Supervisor } from "../../supervisor/supervisor.js";
import { createWorktree, diffWorktree, removeWorktree } from "../../supervisor/worktrees.js";
import type { WorktreeInfo } from "../../shared/schema/agent.js";
import { findAll, parseXml } from "../support/xml.js";

const ROOT = resolve(import.meta.dirname, "../..");
const CLI = join(ROOT, "dist/cli/pi-orch.js");
const GIT_ENV = {
  GIT_AUTHOR_NAME: "test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "test",
  GIT_COMMITTER_EMAIL: "test@example.com",
};

const dirs: string[] = [];
const worktrees: WorktreeInfo[] = [];
const children: ResultPromise[] = [];
const supervisors: Supervisor[] = [];

function tempDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  dirs.push(dir);
  return dir;
}

function git(cwd: string, ...args: string[]): string {
  return execaSync("git", args, { cwd, env: GIT_ENV }).stdout;
}

/** A repository `<parent>/<name>` with one commit of `file.txt` = "hello a". */
function makeRepo(parent: string, name = "repo"): string {
  const repo = join(parent, name);
  mkdirSync(repo, { recursive: true });
  git(repo, "init", "-q", "-b", "main");
  writeFileSync(join(repo, "file.txt"), "hello a\n");
  git(repo, "add", "file.txt");
  git(repo, "commit", "-q", "-m", "first");
  return repo;
}

function cli(args: string[], cwd: string, env: Record<string, string> = {}) {
  const proc = execa(process.execPath, [CLI, ...args], {
    cwd,
    reject: false,
    env: { NO_COLOR: "1", ...env },
    extendEnv: true,
  });
  children.push(proc);
  return proc;
}

/** Processes (not zombies) whose environment names this pi-orch home: workers and their tool children. */
function processesOf(home: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (/^[ZX]$/.test(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0])) continue;
      if (readFileSync(`/proc/${entry}/environ`, "utf8").split("\0").includes(`PI_ORCH_HOME=${home}`))
        found.push(Number(entry));
    } catch {
      // gone, or not ours
    }
  }
  return found;
}

function worktreeList(repo: string): string[] {
  return git(repo, "worktree", "list", "--porcelain")
    .split("\n")
    .filter((l) => l.startsWith("worktree "))
    .map((l) => l.slice("worktree ".length));
}

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.pid !== undefined) child.kill("SIGKILL");
    await child.catch(() => {});
  }
  // Each step must run even when an earlier one fails, or the folders and processes leak.
  await Promise.allSettled(supervisors.splice(0).map((sup) => sup.shutdown()));
  for (const wt of worktrees.splice(0)) await removeWorktree(wt, { force: true, deleteBranch: true }).catch(() => {});
  for (const dir of dirs.splice(0)) {
    for (const pid of processesOf(join(dir, "home"))) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // exited since the scan
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
});

describe("pi-orch run", () => {
  it("runs 4 worktree tasks two at a time; each changes only its own worktree and the main checkout is untouched", async () => {
    const dir = tempDir("pi-orch-test-run-");
    const repo = makeRepo(dir);
    const home = join(dir, "home");
    const tasks = ["b", "c", "d", "e"].map((letter) => ({
      name: `to-${letter}`,
      prompt: `replace "a" with "${letter}" in file.txt`,
    }));
    writeFileSync(join(dir, "tasks.json"), JSON.stringify(tasks));
    const r = await cli(
      [
        "--home",
        home,
        "run",
        join(dir, "tasks.json"),
        "--provider",
        "faux",
        "--worktree",
        "--keep-worktrees",
        "--concurrency",
        "2",
        "--json",
      ],
      repo,
    );
    const report = JSON.parse(r.stdout) as RunReport;
    for (const t of report.tasks) if (t.worktree) worktrees.push(t.worktree);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(report.counts).toMatchObject({ total: 4, passed: 4 });

    // Never more than two tasks between "starting" and their final line.
    let running = 0;
    let peak = 0;
    for (const line of r.stderr.split("\n")) {
      if (/ starting$/.test(line)) peak = Math.max(peak, ++running);
      if (/ (passed|failed|timed out|cancelled) after /.test(line)) running--;
    }
    expect(peak).toBe(2);

    const paths = new Set<string>();
    for (const [i, t] of report.tasks.entries()) {
      const letter = "bcde"[i];
      const wt = t.worktree!;
      expect(wt.path.startsWith(`${join(home, "worktrees")}/`)).toBe(true);
      expect(wt.branch).toBe(`pi-orch/to-${letter}`);
      expect(readFileSync(join(wt.path, "file.txt"), "utf8")).toBe(`hello ${letter}\n`);
      expect(t.changedFiles).toEqual(["file.txt"]);
      const diff = await diffWorktree(wt);
      expect(diff.split("\n").filter((l) => /^[-+][^-+]/.test(l))).toEqual(["-hello a", `+hello ${letter}`]);
      paths.add(wt.path);
    }
    expect(paths.size).toBe(4);
    expect(readFileSync(join(repo, "file.txt"), "utf8")).toBe("hello a\n");
    expect(git(repo, "status", "--porcelain")).toBe("");
    expect(processesOf(home)).toEqual([]);
  });

  it("keeps a worktree with changes by default and removes it with --discard-changes", async () => {
    const dir = tempDir("pi-orch-test-run-");
    const repo = makeRepo(dir);
    const home = join(dir, "home");
    const edit = [
      "--home",
      home,
      "run",
      "--prompt",
      'replace "a" with "z" in file.txt',
      "--provider",
      "faux",
      "--worktree",
    ];
    const kept = await cli(edit, repo);
    expect(kept.exitCode, kept.stderr).toBe(0);
    expect(worktreeList(repo)).toHaveLength(2);
    git(repo, "worktree", "remove", "--force", worktreeList(repo)[1]);
    git(repo, "branch", "-D", "pi-orch/task-1");
    const discarded = await cli([...edit, "--discard-changes"], repo);
    expect(discarded.exitCode, discarded.stderr).toBe(0);
    expect(worktreeList(repo)).toEqual([repo]);
  });

  it("fails with exit code 1 when a check fails, and the JUnit file lists the failure with its reason and the last assistant text", async () => {
    const dir = tempDir("pi-orch-test-run-");
    const repo = makeRepo(dir);
    const home = join(dir, "home");
    const tasks = [
      { name: "good", prompt: 'replace "a" with "b" in file.txt', worktree: true, check: "grep -q 'hello b' file.txt" },
      { name: "bad", prompt: 'replace "a" with "c" in file.txt', worktree: true, check: "grep -q 'hello b' file.txt" },
    ];
    writeFileSync(join(dir, "tasks.jsonl"), tasks.map((t) => JSON.stringify(t)).join("\n"));
    const junit = join(dir, "out/junit.xml");
    const r = await cli(
      ["--home", home, "run", join(dir, "tasks.jsonl"), "--provider", "faux", "--report-junit", junit],
      repo,
    );
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^good\s+passed\b.*\bok$/m);
    expect(r.stdout).toMatch(/^bad\s+failed\b.*\bexit 1$/m);

    const root = parseXml(readFileSync(junit, "utf8"));
    expect(root.attrs).toMatchObject({ tests: "2", failures: "1" });
    const [good, bad] = findAll(root, "testcase");
    expect(good.attrs.name).toBe("good");
    expect(findAll(good, "failure")).toEqual([]);
    expect(bad.attrs.name).toBe("bad");
    const failure = findAll(bad, "failure")[0];
    expect(failure.attrs.message).toBe("check failed: `grep -q 'hello b' file.txt` exited with code 1");
    expect(failure.text).toContain("last assistant text:");
    expect(failure.text).toContain("Edited file.txt");
    // The agents' uncommitted edits are work: both worktrees stay, named in the summary.
    expect(worktreeList(repo)).toHaveLength(3);
    expect(r.stdout).toMatch(/worktree .*good/);
    expect(r.stdout).toMatch(/worktree .*bad/);
  });

  it("aborts a task at its timeout, reports it as timed out, and leaves no process", async () => {
    const dir = tempDir("pi-orch-test-run-");
    const repo = makeRepo(dir);
    const home = join(dir, "home");
    const report = join(dir, "report.json");
    const r = await cli(
      [
        "--home",
        home,
        "run",
        "--provider",
        "faux",
        "--prompt",
        "run `sleep 30`",
        // The timeout counts from the task's start, the worker's own start-up included: 1 s
        // was spent starting on a loaded machine, so the reason said "while starting".
        "--timeout",
        "5",
        "--report-json",
        report,
      ],
      repo,
    );
    expect(r.exitCode, r.stderr).toBe(1);
    const parsed = JSON.parse(readFileSync(report, "utf8")) as RunReport;
    expect(parsed.tasks[0]).toMatchObject({
      name: "task-1",
      status: "timed_out",
      reason: "timed out after 5s while running bash",
    });
    // Well before the 30 s the command would take.
    expect(parsed.tasks[0].durationMs).toBeLessThan(20_000);
    expect(r.stderr).toMatch(/task-1 timed out after/);
    expect(processesOf(home)).toEqual([]);
  });

  it("--shard 1/2 and 2/2 together run every task exactly once", async () => {
    const dir = tempDir("pi-orch-test-run-");
    const home = join(dir, "home");
    const names = ["t1", "t2", "t3", "t4", "t5"];
    writeFileSync(join(dir, "tasks.json"), JSON.stringify(names.map((name) => ({ name, prompt: "list the files" }))));
    const shards = await Promise.all(
      ["1/2", "2/2"].map((shard) =>
        cli(["--home", home, "run", "tasks.json", "--provider", "faux", "--shard", shard, "--json"], dir),
      ),
    );
    const ran = shards.map((r) => {
      expect(r.exitCode, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout) as RunReport;
      expect(report.tasks.every((t) => t.status === "passed")).toBe(true);
      return report.tasks.map((t) => t.name);
    });
    expect(ran[0].filter((n) => ran[1].includes(n))).toEqual([]);
    expect([...ran[0], ...ran[1]].sort()).toEqual(names);
  });

  it("on SIGINT stops the running tasks, writes partial reports, exits 130 and leaves no process or worktree", async () => {
    const dir = tempDir("pi-orch-test-run-");
    const repo = makeRepo(dir);
    const home = join(dir, "home");
    const tasks = [
      { name: "quick", prompt: "list the files" },
      { name: "slow-1", prompt: "run `sleep 30`" },
      { name: "slow-2", prompt: "run `sleep 30`" },
      { name: "never", prompt: "list the files" },
    ];
    writeFileSync(join(dir, "tasks.json"), JSON.stringify(tasks));
    const json = join(dir, "report.json");
    const junit = join(dir, "junit.xml");
    // A temp folder of this run's own: other test files run `pi-orch run` at the same time.
    const runTmp = join(dir, "tmp");
    mkdirSync(runTmp);
    const stateDirs = () => readdirSync(runTmp).filter((n) => n.startsWith("pi-orch-run-"));
    const child = cli(
      [
        "--home",
        home,
        "run",
        join(dir, "tasks.json"),
        "--provider",
        "faux",
        "--worktree",
        "--concurrency",
        "2",
        "--report-json",
        json,
        "--report-junit",
        junit,
      ],
      repo,
      { TMPDIR: runTmp },
    );
    // Interrupt once both slow tasks run (quick has passed by then: it ran before slow-2 could start).
    let stderr = "";
    await new Promise<void>((res, rej) => {
      child.stderr!.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        if (/slow-1 running/.test(stderr) && /slow-2 running/.test(stderr)) res();
      });
      void child.then(() => rej(new Error(`pi-orch run exited before the slow tasks ran:\n${stderr}`)));
    });
    child.kill("SIGINT");
    const r = await child;
    expect(r.exitCode, r.stderr).toBe(130);

    const report = JSON.parse(readFileSync(json, "utf8")) as RunReport;
    expect(report.interrupted).toBe(true);
    expect(report.exitCode).toBe(130);
    expect(report.tasks.map((t) => [t.name, t.status])).toEqual([
      ["quick", "passed"],
      ["slow-1", "cancelled"],
      ["slow-2", "cancelled"],
      ["never", "skipped"],
    ]);
    const xml = parseXml(readFileSync(junit, "utf8"));
    expect(xml.attrs).toMatchObject({ tests: "4", failures: "0", errors: "3", skipped: "0" });
    const cases = findAll(xml, "testcase");
    expect(
      cases.map((c) => [
        c.attrs.name,
        findAll(c, "error")
          .map((e) => e.attrs.type)
          .join(),
      ]),
    ).toEqual([
      ["quick", ""],
      ["slow-1", "cancelled"],
      ["slow-2", "cancelled"],
      ["never", "not_run"],
    ]);
    expect(processesOf(home)).toEqual([]);
    expect(worktreeList(repo)).toEqual([repo]);
    expect(stateDirs()).toEqual([]);
  });

  it("refuses a bad task file with exit code 2, naming the task and the field", async () => {
    const dir = tempDir("pi-orch-test-run-");
    writeFileSync(
      join(dir, "tasks.json"),
      JSON.stringify([
        { name: "ok", prompt: "p" },
        { name: "late", prompt: "p", timeout: "soon" },
      ]),
    );
    const r = await cli(["--home", join(dir, "home"), "run", "tasks.json"], dir);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('tasks.json: task 2 ("late"): field "timeout": must be number');
  });
});

describe("worktrees", () => {
  function supervisor(home: string): Supervisor {
    const sup = Supervisor.open({ home });
    supervisors.push(sup);
    return sup;
  }

  it("rm refuses a dirty worktree, --force removes it and keeps the branch unless asked", async () => {
    const dir = tempDir("pi-orch-wt-");
    const repo = makeRepo(dir);
    const sup = supervisor(join(dir, "home"));
    const info = await sup.spawn({ name: "w", cwd: repo, provider: "faux", worktree: {} });
    worktrees.push(info.worktree!);
    expect(info.cwd).toBe(info.worktree!.path);
    await sup.stop("w");
    writeFileSync(join(info.cwd, "new.txt"), "untracked\n");

    const refused = await sup.remove("w").catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OrchError);
    expect((refused as OrchError).message).toMatch(/uncommitted changes in its worktree .*pi-orch diff w.*--force/);
    expect(sup.list().map((a) => a.name)).toEqual(["w"]);
    expect(worktreeList(repo)).toContain(info.worktree!.path);

    await sup.remove("w", { force: true });
    expect(sup.list()).toEqual([]);
    expect(worktreeList(repo)).toEqual([repo]);
    expect(git(repo, "branch", "--list", "pi-orch/w").trim()).toBe("pi-orch/w");
  });

  it("never gives two repositories with the same name the same worktree path", async () => {
    const dir = tempDir("pi-orch-wt-");
    const one = makeRepo(join(dir, "one"), "app");
    const two = makeRepo(join(dir, "two"), "app");
    const worktreesDir = join(dir, "home/worktrees");
    const a = await createWorktree({ worktreesDir, cwd: one, name: "same" });
    worktrees.push(a.worktree);
    const b = await createWorktree({ worktreesDir, cwd: two, name: "same" });
    worktrees.push(b.worktree);
    expect(a.worktree.path).not.toBe(b.worktree.path);
    for (const { worktree } of [a, b]) {
      expect(worktree.path.split("/").slice(-2)).toEqual([expect.stringMatching(/^app-[0-9a-f]{8}$/), "same"]);
      expect(worktree.branch).toBe("pi-orch/same");
    }
    expect(worktreeList(one)).toEqual([one, a.worktree.path]);
    expect(worktreeList(two)).toEqual([two, b.worktree.path]);
  });

  it("refuses a base that is not a commit, and a branch that exists, before creating anything", async () => {
    const dir = tempDir("pi-orch-wt-");
    const repo = makeRepo(dir);
    const worktreesDir = join(dir, "home/worktrees");
    await expect(createWorktree({ worktreesDir, cwd: repo, name: "x", base: "nope" })).rejects.toThrow(
      /--base "nope" is not a commit/,
    );
    git(repo, "branch", "taken");
    // The user's own branch (say main): never offered for deletion.
    const taken = createWorktree({ worktreesDir, cwd: repo, name: "x", branch: "taken" });
    await expect(taken).rejects.toThrow(
      'branch "taken" already exists and was not made by pi-orch; pick another --branch (or --name)',
    );
    await expect(taken).rejects.not.toThrow("branch -D");
    expect(worktreeList(repo)).toEqual([repo]);
    // A branch an earlier agent left (its worktree gone): deleting it is the way out.
    const left = await createWorktree({ worktreesDir, cwd: repo, name: "old" });
    git(repo, "worktree", "remove", "--force", left.worktree.path);
    await expect(createWorktree({ worktreesDir, cwd: repo, name: "old" })).rejects.toThrow(
      `branch "pi-orch/old" already exists; pick another --name (or --branch), or delete it with git -C ${repo} branch -D pi-orch/old`,
    );
  });

  it("waits for another git process's config lock; a lock that stays is a clear error and leaves nothing", async () => {
    const dir = tempDir("pi-orch-wt-");
    const repo = makeRepo(dir);
    const worktreesDir = join(dir, "home/worktrees");
    const lock = join(repo, ".git", "config.lock");
    // Held while the worktree is made, released once its branch exists (the config write is next).
    writeFileSync(lock, "");
    const made = createWorktree({ worktreesDir, cwd: repo, name: "busy" });
    // Until the branch exists, or the call ended without it (then its error is the failure).
    let ended = false;
    void made.then(
      () => (ended = true),
      () => (ended = true),
    );
    const branch = () =>
      execaSync("git", ["show-ref", "--quiet", "refs/heads/pi-orch/busy"], { cwd: repo, reject: false }).exitCode === 0;
    while (!ended && !branch()) await new Promise((r) => setTimeout(r, 5));
    rmSync(lock, { force: true });
    const { worktree } = await made;
    worktrees.push(worktree);
    expect(git(repo, "config", "--get", "branch.pi-orch/busy.piOrchOwner")).toBe("agent");
    expect(git(repo, "config", "--get", "branch.pi-orch/busy.piOrchBase")).toBe(worktree.base);

    writeFileSync(lock, "");
    try {
      await expect(createWorktree({ worktreesDir, cwd: repo, name: "stuck" })).rejects.toThrow(
        `another git process held ${lock} for 3 s: if none is running, delete that file and retry`,
      );
    } finally {
      rmSync(lock, { force: true });
    }
    expect(worktreeList(repo)).toEqual([repo, worktree.path]);
    expect(git(repo, "branch", "--list", "pi-orch/stuck")).toBe("");
  });

  it("spawning with a worktree outside a repository is a clear error", async () => {
    const dir = tempDir("pi-orch-wt-");
    const sup = supervisor(join(dir, "home"));
    await expect(sup.spawn({ name: "x", cwd: dir, worktree: {} })).rejects.toThrow(
      /--worktree needs a git repository, but .* is not inside one/,
    );
    expect(sup.list()).toEqual([]);
  });

  it("spawn --worktree, list, diff and rm through the CLI and the daemon", async () => {
    const dir = tempDir("pi-orch-wt-");
    const repo = makeRepo(dir);
    const home = join(dir, "home");
    try {
      const spawned = await cli(
        ["--home", home, "spawn", "--name", "fix", "--provider", "faux", "--worktree", "--json"],
        repo,
      );
      expect(spawned.exitCode, spawned.stderr).toBe(0);
      const wt = (JSON.parse(spawned.stdout) as { worktree: WorktreeInfo }).worktree;
      worktrees.push(wt);
      writeFileSync(join(wt.path, "file.txt"), "hello z\n");
      writeFileSync(join(wt.path, "added.txt"), "new\n");

      const list = await cli(["--home", home, "list"], repo);
      expect(list.stdout).toMatch(/^fix\s.*pi-orch\/fix \(2 changed\)/m);
      const diff = await cli(["--home", home, "diff", "fix"], repo);
      expect(diff.exitCode, diff.stderr).toBe(0);
      expect(diff.stdout).toContain("+hello z");
      expect(diff.stdout).toContain("+++ b/added.txt");
      const stat = await cli(["--home", home, "diff", "fix", "--stat"], repo);
      expect(stat.stdout).toMatch(/2 files changed/);

      const refused = await cli(["--home", home, "rm", "--force", "nobody"], repo);
      expect(refused.exitCode).toBe(1);
      await cli(["--home", home, "stop", "fix"], repo);
      const dirty = await cli(["--home", home, "rm", "fix"], repo);
      expect(dirty.exitCode).toBe(1);
      expect(dirty.stderr).toMatch(/uncommitted changes/);
      const forced = await cli(["--home", home, "rm", "fix", "--force", "--delete-branch"], repo);
      expect(forced.exitCode, forced.stderr).toBe(0);
      expect(worktreeList(repo)).toEqual([repo]);
      expect(git(repo, "branch", "--list", "pi-orch/fix")).toBe("");
      expect(readFileSync(join(repo, "file.txt"), "utf8")).toBe("hello a\n");
    } finally {
      await cli(["--home", home, "--no-autostart", "shutdown"], repo);
    }
  });

  it("a re-run continues in the worktree an earlier run kept; --clean replaces it; worktrees list/diff/rm see and remove it", async () => {
    const dir = tempDir("pi-orch-rerun-");
    const repo = makeRepo(dir);
    const home = join(dir, "home");
    const tasks = join(dir, "tasks.json");
    writeFileSync(
      tasks,
      JSON.stringify([
        {
          name: "edit",
          prompt: 'replace "a" with "b" in file.txt',
          worktree: true,
          check: "grep -q 'hello b' file.txt",
        },
      ]),
    );
    const run = (...extra: string[]) => cli(["--home", home, "run", tasks, "--provider", "faux", ...extra], repo);

    const first = await run();
    expect(first.exitCode, first.stderr).toBe(0);
    const second = await run();
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stderr).toMatch(
      /task "edit": continuing in the worktree an earlier run left at .*edit \(pass --clean to start afresh\)/,
    );
    expect(worktreeList(repo)).toHaveLength(2);

    const listed = JSON.parse((await cli(["--home", home, "worktrees", "list", "--json"], repo)).stdout) as Array<
      Record<string, unknown>
    >;
    expect(listed).toMatchObject([{ name: "edit", owner: "run", branch: "pi-orch/edit", changedFiles: 1 }]);
    const diff = await cli(["--home", home, "worktrees", "diff", "edit"], repo);
    expect(diff.stdout).toContain("+hello b");

    const clean = await run("--clean");
    expect(clean.exitCode, clean.stderr).toBe(0);
    expect(clean.stderr).not.toMatch(/continuing in the worktree/);
    expect(worktreeList(repo)).toHaveLength(2);

    const refused = await cli(["--home", home, "worktrees", "rm", "edit"], repo);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toMatch(/uncommitted changes.*--force/);
    const removed = await cli(["--home", home, "worktrees", "rm", "edit", "--force"], repo);
    expect(removed.exitCode, removed.stderr).toBe(0);
    expect(worktreeList(repo)).toEqual([repo]);
    expect(git(repo, "branch", "--list", "pi-orch/edit")).toBe("");
    expect((await cli(["--home", home, "worktrees", "list"], repo)).stdout).toMatch(/^no worktrees/);
    expect(readFileSync(join(repo, "file.txt"), "utf8")).toBe("hello a\n");
  });
});
