/**
 * `pi-orch run` fan-out: 32 faux tasks, each editing a file in its own git worktree,
 * at concurrency 8, against the same tasks one by one: by hand (git worktree add,
 * `pi -p`, git worktree remove, in a loop) and through `pi-orch run --concurrency 1`.
 * The difference between the last two is what the orchestration costs per task.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fmt, median, table } from "./stats.js";
import { PI, PI_ORCH } from "./support.js";
const TASKS = 32;
const CONCURRENCY = 8;
const RUNS = 3;
const GIT_ENV = {
  GIT_AUTHOR_NAME: "bench",
  GIT_AUTHOR_EMAIL: "bench@example.com",
  GIT_COMMITTER_NAME: "bench",
  GIT_COMMITTER_EMAIL: "bench@example.com",
};

function exec(
  cmd: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((res, rej) => {
    const p = spawn(cmd, args, { cwd, env: { ...process.env, ...GIT_ENV, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    p.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    p.on("error", rej);
    p.on("close", (code) => res({ code, stdout, stderr }));
  });
}

async function must(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
  const r = await exec(cmd, args, cwd, env);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

async function makeRepo(dir: string): Promise<string> {
  const repo = join(dir, "repo");
  mkdirSync(repo);
  await must("git", ["init", "-q"], repo);
  for (let i = 0; i < 20; i++) writeFileSync(join(repo, `module-${i}.ts`), `export const value${i} = ${i};\n`);
  writeFileSync(join(repo, "file.txt"), "hello a\n");
  await must("git", ["add", "."], repo);
  await must("git", ["commit", "-q", "-m", "first"], repo);
  return repo;
}

function tasks(): { name: string; prompt: string }[] {
  return Array.from({ length: TASKS }, (_, i) => ({
    name: `t${i + 1}`,
    prompt: `replace "a" with "v${i + 1}" in file.txt`,
  }));
}

/** `pi-orch run` over the task file; wall time in ms. */
async function orchestrated(repo: string, home: string, file: string, concurrency: number): Promise<number> {
  const t0 = performance.now();
  const r = await exec(
    process.execPath,
    [
      PI_ORCH,
      "--home",
      home,
      "run",
      file,
      "--provider",
      "faux",
      "--worktree",
      "--discard-changes",
      "--concurrency",
      String(concurrency),
      "--json",
    ],
    repo,
    {
      NO_COLOR: "1",
    },
  );
  const ms = performance.now() - t0;
  if (r.code !== 0) throw new Error(`pi-orch run failed (${r.code}): ${r.stderr.slice(-2000)}`);
  const report = JSON.parse(r.stdout) as { counts: { passed: number } };
  if (report.counts.passed !== TASKS)
    throw new Error(`pi-orch run: only ${report.counts.passed} of ${TASKS} tasks passed`);
  return ms;
}

/** The same work by hand, one task after the other; wall time in ms. */
async function byHand(repo: string, home: string, dir: string): Promise<number> {
  const t0 = performance.now();
  for (const task of tasks()) {
    const path = join(dir, "manual", task.name);
    const branch = `manual/${task.name}`;
    await must("git", ["worktree", "add", "--quiet", "-b", branch, path, "HEAD"], repo);
    await must(process.execPath, [PI, "-p", "--provider", "faux", task.prompt], path, { PI_ORCH_HOME: home });
    await must("git", ["worktree", "remove", "--force", path], repo);
    await must("git", ["branch", "-D", branch], repo);
  }
  return performance.now() - t0;
}

/** Run the section. */
export async function run(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "pi-bench-fanout-"));
  const wall8: number[] = [];
  const wall1: number[] = [];
  const manual: number[] = [];
  try {
    const repo = await makeRepo(dir);
    const home = join(dir, "home");
    const file = join(dir, "tasks.json");
    writeFileSync(file, JSON.stringify(tasks()));
    // Interleaved so machine noise hits all three alike.
    for (let i = 0; i < RUNS; i++) {
      wall8.push(await orchestrated(repo, home, file, CONCURRENCY));
      wall1.push(await orchestrated(repo, home, file, 1));
      manual.push(await byHand(repo, home, dir));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const w8 = median(wall8);
  const w1 = median(wall1);
  const m = median(manual);
  const rows: (string | number)[][] = [
    [
      `\`pi-orch run --concurrency ${CONCURRENCY} --worktree\``,
      fmt(w8 / 1000, 2),
      fmt(w8 / TASKS, 0),
      `${fmt(m / w8)}×`,
    ],
    ["`pi-orch run --concurrency 1 --worktree`", fmt(w1 / 1000, 2), fmt(w1 / TASKS, 0), `${fmt(m / w1)}×`],
    [
      "by hand, one by one (`git worktree add`, `pi -p`, `git worktree remove`)",
      fmt(m / 1000, 2),
      fmt(m / TASKS, 0),
      "1.0×",
    ],
  ];
  return [
    "## Fan-out with `pi-orch run`",
    "",
    `${TASKS} faux tasks, each editing a file in its own git worktree of a small repository; median of ${RUNS} interleaved runs. ` +
      "`pi-orch run` includes its own start, the worker starts, the worktree creation and removal, and the summary.",
    "",
    table(["how", "wall time (s)", "per task (ms)", "speed-up vs by hand"], rows),
    "",
    `Overhead of the orchestration per task (concurrency 1 against by hand): ${fmt((w1 - m) / TASKS, 0)} ms. ` +
      `At concurrency ${CONCURRENCY} the ${TASKS} tasks take ${fmt(w8 / 1000, 2)} s, ${fmt(m / w8)}× faster than one by one.`,
  ].join("\n");
}
