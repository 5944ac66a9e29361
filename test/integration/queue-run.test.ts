/**
 * `pi-orch run --queue` / `--worker` end to end: a real redis-server started by the
 * test (own port, own folder, AOF), worker processes standing in for machines (each
 * with its own home), faux tasks whose bash command appends the task's name to
 * runs.log when it completes, so "ran exactly once" is read from the file. Faults are
 * real: a SIGKILLed producer, a SIGKILLed Redis, a SIGKILLed machine (a worker and
 * every process it started), signals to workers. Everything is killed and removed after.
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it, type TestContext } from "vitest";
import type { RunReport } from "../../cli/run/types.js";
import { CliProcess, killProcessesWithEnv } from "../support/cli-process.js";
import { RedisServer, redisMissing } from "../support/redis-server.js";

const missing = redisMissing();
const TEST_TIMEOUT = 180_000;

interface World {
  dir: string;
  tag: string;
  redis: RedisServer;
  procs: CliProcess[];
}

/** Kill everything of a world and remove its folder. */
async function removeWorld(w: World): Promise<void> {
  for (const p of w.procs) p.signal("SIGKILL");
  await Promise.allSettled(w.procs.map((p) => p.exited));
  killProcessesWithEnv(`PI_ORCH_TEST_QUEUE=${w.tag}`);
  await w.redis.stop();
  rmSync(w.dir, { recursive: true, force: true });
}

/** The world's own temp folder, given to its processes as TMPDIR (removed with the world). */
function tmpOf(w: World): string {
  const dir = join(w.dir, "tmp");
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * A world of its own (folder, Redis, tag), removed when the test ends, passed or not. The
 * tests run at once (each waits on its tasks' sleeps and its workers' timeouts, not on the
 * CPU), so each world is the test's own: its Redis, its processes, its folder.
 */
async function world(onTestFinished: TestContext["onTestFinished"]): Promise<World> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "pi-orch-test-queue-")));
  const redis = await RedisServer.start().catch((err) => {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  const w: World = { dir, tag: randomUUID(), redis, procs: [] };
  onTestFinished(() => removeWorld(w));
  return w;
}

/** A worker "machine": its own home, marked so the whole machine can be killed. */
async function startWorker(w: World, machine: string, extra: string[] = []): Promise<CliProcess> {
  const p = CliProcess.start(["--home", join(w.dir, machine), "run", "--worker", w.redis.url("q"), ...extra], w.dir, {
    PI_ORCH_TEST_QUEUE: w.tag,
    // A SIGKILLed machine cannot remove its run state folder: keep it inside the world's folder.
    TMPDIR: tmpOf(w),
    PI_ORCH_TEST_MACHINE: `${w.tag}-${machine}`,
  });
  w.procs.push(p);
  await p.waitFor(/takes tasks from/);
  return p;
}

function startProducer(w: World, file: string, extra: string[] = []): CliProcess {
  const p = CliProcess.start(
    [
      "--home",
      join(w.dir, "producer"),
      "run",
      file,
      "--queue",
      w.redis.url("q"),
      "--provider",
      "faux",
      "--report-json",
      "report.json",
      ...extra,
    ],
    w.dir,
    {
      PI_ORCH_TEST_QUEUE: w.tag,
      // A SIGKILLed machine cannot remove its run state folder: keep it inside the world's folder.
      TMPDIR: tmpOf(w),
    },
  );
  w.procs.push(p);
  return p;
}

/** A faux task that sleeps, then appends its name to runs.log: one line per completed run. */
function sleeper(name: string, seconds: number, extra: Record<string, unknown> = {}) {
  return { name, prompt: `run \`sleep ${seconds} && echo ${name} >> runs.log\``, ...extra };
}

function writeTasks(w: World, file: string, tasks: unknown[]): void {
  writeFileSync(join(w.dir, file), JSON.stringify(tasks));
}

function runsLog(w: World): string[] {
  const file = join(w.dir, "runs.log");
  return existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").sort() : [];
}

function report(w: World): RunReport {
  return JSON.parse(readFileSync(join(w.dir, "report.json"), "utf8")) as RunReport;
}

/** The tasks that did not pass, for assertion messages. */
function notPassed(w: World): string {
  if (!existsSync(join(w.dir, "report.json"))) return "(no report)";
  return JSON.stringify(
    report(w)
      .tasks.filter((t) => t.status !== "passed")
      .map((t) => ({ name: t.name, status: t.status, reason: t.reason, host: t.host })),
  );
}

function nth(re: RegExp, n: number): RegExp {
  return new RegExp(`(?:${re.source}[\\s\\S]*?){${n}}`);
}

describe.skipIf(missing !== null)(
  `pi-orch run --queue with a real redis-server${missing ? ` (skipped: ${missing})` : ""}`,
  () => {
    it.concurrent(
      "runs 30 uneven tasks over 3 workers, each exactly once, and a producer killed mid-run is replaced by one that collects every result",
      async ({ expect, onTestFinished }) => {
        const w = await world(onTestFinished);
        const names = Array.from({ length: 30 }, (_, i) => `t${String(i + 1).padStart(2, "0")}`);
        writeTasks(
          w,
          "tasks.json",
          names.map((n, i) => sleeper(n, [0.1, 1.2, 0.4, 2, 0.2][i % 5])),
        );
        const workers = await Promise.all(["m1", "m2", "m3"].map((m) => startWorker(w, m, ["--concurrency", "2"])));

        const first = startProducer(w, "tasks.json");
        await first.waitFor(nth(/passed after/, 5));
        first.signal("SIGKILL");
        await first.exited;
        const second = startProducer(w, "tasks.json");
        const exit = await second.exited;
        expect(exit.code, second.stderr + notPassed(w)).toBe(0);
        expect(second.stderr).toMatch(/were already queued \(resuming\)/);

        const r = report(w);
        expect(r.counts).toMatchObject({ total: 30, passed: 30 });
        expect(r.tasks.map((t) => t.name)).toEqual(names);
        expect(r.tasks.every((t) => t.attempts === 1)).toBe(true);
        expect(new Set(r.tasks.map((t) => t.host)).size).toBeGreaterThan(1);
        expect(runsLog(w)).toEqual(names);
        expect(second.stdout).toMatch(/^30 tasks: 30 passed in /m);

        for (const p of workers) p.signal("SIGTERM");
        expect((await Promise.all(workers.map((p) => p.exited))).map((e) => e.code)).toEqual([143, 143, 143]);
      },
      TEST_TIMEOUT,
    );

    it.concurrent(
      "sends a worktree task's diff and transcript path back to the producer, whose machine never sees the worktree",
      async ({ expect, onTestFinished }) => {
        const w = await world(onTestFinished);
        const repo = join(w.dir, "repo");
        mkdirSync(repo);
        const git = (...args: string[]) =>
          execFileSync("git", args, {
            cwd: repo,
            env: {
              ...process.env,
              GIT_AUTHOR_NAME: "t",
              GIT_AUTHOR_EMAIL: "t@example.com",
              GIT_COMMITTER_NAME: "t",
              GIT_COMMITTER_EMAIL: "t@example.com",
            },
          });
        git("init", "-q", "-b", "main");
        writeFileSync(join(repo, "file.txt"), "hello a\n");
        git("add", "file.txt");
        git("commit", "-q", "-m", "first");
        writeTasks(w, "tasks.json", [
          { name: "edit", prompt: 'replace "a" with "b" in file.txt', cwd: "repo", worktree: true },
        ]);
        await startWorker(w, "m1", ["--concurrency", "1", "--discard-changes"]);
        const producer = startProducer(w, "tasks.json");
        expect((await producer.exited).code, producer.stderr + notPassed(w)).toBe(0);
        const [task] = report(w).tasks;
        expect(task.changedFiles).toEqual(["file.txt"]);
        expect(task.diff).toMatch(/^-hello a$/m);
        expect(task.diff).toMatch(/^\+hello b$/m);
        expect(task.sessionFile).toContain(join(w.dir, "m1", "sessions"));
        // --discard-changes on the worker: its worktree is gone, the diff is what is left of the work.
        expect(task.worktree?.kept).toBe(false);
        expect(existsSync(task.worktree!.path)).toBe(false);
      },
      TEST_TIMEOUT,
    );

    it.concurrent(
      "loses nothing when Redis is killed and restarted mid-run: workers and producer reconnect",
      async ({ expect, onTestFinished }) => {
        const w = await world(onTestFinished);
        const names = Array.from({ length: 12 }, (_, i) => `r${i + 1}`);
        writeTasks(
          w,
          "tasks.json",
          names.map((n, i) => sleeper(n, [0.3, 1.5, 0.8][i % 3])),
        );
        const workers = await Promise.all(
          ["m1", "m2", "m3"].map((m) => startWorker(w, m, ["--concurrency", "1", "--stall-timeout", "15"])),
        );
        const producer = startProducer(w, "tasks.json");
        await producer.waitFor(nth(/passed after/, 3));
        await w.redis.kill();
        await w.redis.restart();
        const exit = await producer.exited;
        expect(exit.code, producer.stderr + notPassed(w)).toBe(0);
        expect(report(w).counts).toMatchObject({ total: 12, passed: 12 });
        expect(runsLog(w)).toEqual([...names].sort());
        for (const p of workers) p.signal("SIGINT");
        expect((await Promise.all(workers.map((p) => p.exited))).map((e) => e.code)).toEqual([130, 130, 130]);
      },
      TEST_TIMEOUT,
    );

    it.concurrent(
      "gives the task of a SIGKILLed machine to another worker after the stall timeout and says it was retried; a failed check is not retried unless --retries",
      async ({ expect, onTestFinished }) => {
        const w = await world(onTestFinished);
        writeTasks(w, "tasks.json", [
          sleeper("slow", 8),
          { name: "bad", prompt: "list the files", check: "echo bad >> runs.log; exit 1" },
          sleeper("quick", 0.1),
        ]);
        const machines = ["m1", "m2", "m3"];
        const workers = await Promise.all(
          // Not shorter: BullMQ renews a lock at about a third of the stall timeout, and a CI machine
          // busy with other tests can starve a worker's timers for a second or two, which made
          // "bad" look stalled (attempt 2) with 2 s.
          machines.map((m) => startWorker(w, m, ["--concurrency", "1", "--stall-timeout", "6"])),
        );
        const producer = startProducer(w, "tasks.json");
        const [, pid] = await producer.waitFor(/slow running on \S+:(\d+)/);
        const victim = workers.findIndex((p) => p.pid === Number(pid));
        expect(victim).toBeGreaterThanOrEqual(0);
        // The machine dies: the worker and every process it started.
        killProcessesWithEnv(`PI_ORCH_TEST_MACHINE=${w.tag}-${machines[victim]}`);
        expect((await workers[victim].exited).signal).toBe("SIGKILL");

        const exit = await producer.exited;
        expect(exit.code, producer.stderr).toBe(1);
        expect(producer.stderr).toMatch(/slow: its worker \S+ stopped answering; the task is back on the queue/);
        const r = report(w);
        const byName = Object.fromEntries(r.tasks.map((t) => [t.name, t]));
        expect(byName.slow).toMatchObject({ status: "passed", attempts: 2 });
        expect(byName.slow.host).not.toBe(`${byName.slow.host!.split(":")[0]}:${pid}`);
        expect(byName.bad, producer.stderr).toMatchObject({ status: "failed", attempts: 1 });
        expect(byName.bad.reason).toMatch(/check failed/);
        expect(byName.quick).toMatchObject({ status: "passed", attempts: 1 });
        expect(runsLog(w)).toEqual(["bad", "quick", "slow"]);
        expect(producer.stdout).toMatch(/worker\s+\S+ \(retried: attempt 2\)/);

        // --retries 1: a task that fails its check the first time runs again and passes.
        writeTasks(w, "flaky.json", [
          {
            name: "flaky",
            prompt: "list the files",
            check: "echo flaky >> runs.log; test -f flaky.ok || { touch flaky.ok; exit 1; }",
          },
        ]);
        const retrying = startProducer(w, "flaky.json", ["--retries", "1"]);
        expect((await retrying.exited).code, retrying.stderr).toBe(0);
        expect(report(w).tasks[0]).toMatchObject({ name: "flaky", status: "passed", attempts: 2 });
        expect(runsLog(w).filter((n) => n === "flaky")).toHaveLength(2);
      },
      TEST_TIMEOUT,
    );

    it.concurrent(
      "a worker told to stop lets its running task finish and exits 143; told twice, it hands the task back to another worker",
      async ({ expect, onTestFinished }) => {
        const w = await world(onTestFinished);
        const a = await startWorker(w, "m1", ["--concurrency", "1", "--stall-timeout", "15"]);
        writeTasks(w, "one.json", [sleeper("finish-me", 3)]);
        const first = startProducer(w, "one.json");
        await first.waitFor(/finish-me running on/);
        a.signal("SIGTERM");
        await a.waitFor(/letting the 1 running finish/);
        expect((await first.exited).code, first.stderr).toBe(0);
        expect(report(w).tasks[0]).toMatchObject({
          status: "passed",
          attempts: 1,
          host: expect.stringContaining(`:${a.pid}`),
        });
        expect((await a.exited).code).toBe(143);

        const b = await startWorker(w, "m2", ["--concurrency", "1", "--stall-timeout", "15"]);
        writeTasks(w, "two.json", [sleeper("hand-back", 4)]);
        const second = startProducer(w, "two.json");
        await second.waitFor(/hand-back running on/);
        b.signal("SIGTERM");
        await b.waitFor(/letting the 1 running finish/);
        b.signal("SIGTERM");
        await b.waitFor(/hand-back: handed back to the queue/);
        expect((await b.exited).code).toBe(143);
        const c = await startWorker(w, "m3", ["--concurrency", "1"]);
        expect((await second.exited).code, second.stderr).toBe(0);
        expect(report(w).tasks[0]).toMatchObject({
          name: "hand-back",
          status: "passed",
          attempts: 2,
          host: expect.stringContaining(`:${c.pid}`),
        });
        expect(runsLog(w)).toEqual(["finish-me", "hand-back"]);
      },
      TEST_TIMEOUT,
    );
  },
);

describe("pi-orch run --queue / --worker usage", () => {
  const dir = (onTestFinished: TestContext["onTestFinished"]) => {
    const d = realpathSync(mkdtempSync(join(tmpdir(), "pi-orch-test-queue-usage-")));
    onTestFinished(() => rmSync(d, { recursive: true, force: true }));
    writeFileSync(join(d, "tasks.json"), JSON.stringify([{ name: "a", prompt: "list the files" }]));
    return d;
  };

  it.concurrent.for<[string[], RegExp]>([
    [
      ["tasks.json", "--queue", "redis://127.0.0.1:1/q", "--concurrency", "4"],
      /--concurrency belongs to the workers, not to the producer: start each worker with pi-orch run --worker redis:\/\/127\.0\.0\.1:1\/q --concurrency 4/,
    ],
    [["tasks.json", "--queue", "redis://127.0.0.1:1/q", "--keep-worktrees"], /--keep-worktrees belongs to the workers/],
    [["tasks.json", "--queue", "redis://127.0.0.1:1/q", "--shard", "1/2"], /drop --shard/],
    [
      ["tasks.json", "--worker", "redis://127.0.0.1:1/q"],
      /a worker takes its tasks from the queue; give tasks\.json to the producer/,
    ],
    [
      ["--worker", "redis://127.0.0.1:1/q", "--timeout", "5", "--report-json", "x"],
      /--timeout, --report-json belong to the producer/,
    ],
    [["tasks.json", "--retries", "1"], /--retries goes with --queue/],
    [["--worker", "http://x/q"], /expected redis:\/\/HOST:PORT\/QUEUE/],
    [["--worker", "redis://127.0.0.1:6379"], /no queue name/],
    [["tasks.json", "--queue", "redis://u:secret@127.0.0.1:1/q", "--worker", "redis://127.0.0.1:1/q"], /two commands/],
  ])("%j is a usage error", async ([args, message], { expect, onTestFinished }) => {
    const d = dir(onTestFinished);
    const p = CliProcess.start(["--home", join(d, "home"), "run", ...args], d, {});
    const exit = await p.exited;
    expect(exit.code).toBe(2);
    expect(p.stderr).toMatch(message);
    expect(p.stderr).not.toContain("secret");
  });
});
