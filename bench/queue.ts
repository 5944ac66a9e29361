/**
 * Work stealing against static shards: 60 faux tasks of uneven length (`sleep` of a
 * seeded long-tailed spread) through `pi-orch run --queue` with 3 `--worker`
 * processes (a real redis-server on a free port), against the same list split by
 * `--shard I/3` over 3 processes, and against one local `pi-orch run --concurrency 3`
 * (the same dynamic scheduling without Redis). Every slot runs one task at a time.
 * The queue's cost per task is its wall time over the local run's, per task.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RedisServer } from "../test/support/redis-server.js";
import { fmtOther, medianOther, startLoadMeter, type LoadReading } from "./load.js";
import { fmt, median, table } from "./stats.js";
import { PI_ORCH } from "./support.js";

const TASKS = 60;
const SLOTS = 3;
const RUNS = 3;

/** A measured run: wall time, and the time its slots spent inside tasks (the tasks' own durations). */
interface Timed {
  wallMs: number;
  taskMs: number;
}

/** Sum of the task durations in the JSON reports written to `files`. */
function taskMsOf(files: string[]): number {
  let sum = 0;
  for (const file of files)
    for (const t of (JSON.parse(readFileSync(file, "utf8")) as { tasks: { durationMs: number }[] }).tasks)
      sum += t.durationMs;
  return sum;
}

/** Seconds of each task: 80 % short (0.1-0.5 s), 15 % medium (1-2 s), 5 % long (3-5 s), from a fixed seed. */
function durations(): number[] {
  let seed = 0x2f6b1d;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: TASKS }, () => {
    const kind = next();
    const r = next();
    const s = kind < 0.8 ? 0.1 + 0.4 * r : kind < 0.95 ? 1 + r : 3 + 2 * r;
    return Math.round(s * 10) / 10;
  });
}

interface Proc {
  done: Promise<{ code: number | null; stderr: string }>;
  kill(signal: NodeJS.Signals): void;
  waitFor(text: string): Promise<void>;
}

function start(args: string[], cwd: string): Proc {
  const p = spawn(process.execPath, [PI_ORCH, ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: "1" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  const waiters: (() => void)[] = [];
  p.stderr.on("data", (c: Buffer) => {
    stderr += c.toString();
    for (const w of waiters.splice(0)) w();
  });
  const done = new Promise<{ code: number | null; stderr: string }>((r) =>
    p.once("close", (code) => r({ code, stderr })),
  );
  return {
    done,
    kill: (signal) => void (p.exitCode === null && p.kill(signal)),
    waitFor: (text) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (stderr.includes(text)) resolve();
          else if (p.exitCode !== null) reject(new Error(`pi-orch exited before "${text}": ${stderr.slice(-2000)}`));
          else waiters.push(check);
        };
        void done.then(check);
        check();
      }),
  };
}

async function must(p: Proc, what: string): Promise<void> {
  const r = await p.done;
  if (r.code !== 0) throw new Error(`${what} failed (${r.code}): ${r.stderr.slice(-2000)}`);
}

/** The producer with 3 workers already waiting. */
async function queued(dir: string, redis: RedisServer, run: number): Promise<Timed> {
  const workers = Array.from({ length: SLOTS }, (_, i) =>
    start(["--home", join(dir, `worker-${i + 1}`), "run", "--worker", redis.url("bench"), "--concurrency", "1"], dir),
  );
  try {
    await Promise.all(workers.map((w) => w.waitFor("takes tasks from")));
    const t0 = performance.now();
    const report = join(dir, "queue.json");
    await must(
      start(
        [
          "--home",
          join(dir, "producer"),
          "run",
          "tasks.json",
          "--queue",
          redis.url("bench"),
          "--provider",
          "faux",
          "--run-id",
          `bench-${run}`,
          "--report-json",
          report,
        ],
        dir,
      ),
      "the producer",
    );
    return { wallMs: performance.now() - t0, taskMs: taskMsOf([report]) };
  } finally {
    for (const w of workers) w.kill("SIGTERM");
    await Promise.all(workers.map((w) => w.done));
  }
}

/** 3 shard processes started together. */
async function sharded(dir: string): Promise<Timed> {
  const t0 = performance.now();
  const reports = Array.from({ length: SLOTS }, (_, i) => join(dir, `shard-${i + 1}.json`));
  await Promise.all(
    reports.map((report, i) =>
      must(
        start(
          [
            "--home",
            join(dir, `shard-${i + 1}`),
            "run",
            "tasks.json",
            "--provider",
            "faux",
            "--shard",
            `${i + 1}/${SLOTS}`,
            "--concurrency",
            "1",
            "--report-json",
            report,
          ],
          dir,
        ),
        `shard ${i + 1}`,
      ),
    ),
  );
  return { wallMs: performance.now() - t0, taskMs: taskMsOf(reports) };
}

/** One local run with 3 slots. */
async function local(dir: string): Promise<Timed> {
  const t0 = performance.now();
  const report = join(dir, "local.json");
  await must(
    start(
      [
        "--home",
        join(dir, "local"),
        "run",
        "tasks.json",
        "--provider",
        "faux",
        "--concurrency",
        String(SLOTS),
        "--report-json",
        report,
      ],
      dir,
    ),
    "the local run",
  );
  return { wallMs: performance.now() - t0, taskMs: taskMsOf([report]) };
}

/** Slot time not spent inside a task, per task: scheduling, start-up and (for shards) waiting on the longest shard. */
function idlePerTask(t: Timed): number {
  return (SLOTS * t.wallMs - t.taskMs) / TASKS;
}

/** Run the section. */
export async function run(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "pi-bench-queue-"));
  const seconds = durations();
  writeFileSync(
    join(dir, "tasks.json"),
    JSON.stringify(seconds.map((s, i) => ({ name: `t${i + 1}`, prompt: `run \`sleep ${s}\`` }))),
  );
  const shardSums = Array.from({ length: SLOTS }, (_, k) =>
    seconds.filter((_, i) => i % SLOTS === k).reduce((a, b) => a + b, 0),
  );
  const total = seconds.reduce((a, b) => a + b, 0);
  const q: Timed[] = [];
  const s: Timed[] = [];
  const l: Timed[] = [];
  const loads: (LoadReading | null)[] = [];
  const redis = await RedisServer.start();
  try {
    // Interleaved so machine noise hits all three alike.
    for (let i = 0; i < RUNS; i++) {
      const end = startLoadMeter();
      q.push(await queued(dir, redis, i));
      s.push(await sharded(dir));
      l.push(await local(dir));
      loads.push(end());
    }
  } finally {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const wall = (xs: Timed[]) => median(xs.map((x) => x.wallMs));
  const idle = (xs: Timed[]) => median(xs.map(idlePerTask));
  const task = (xs: Timed[]) => median(xs.map((x) => x.taskMs / TASKS));
  const [mq, ms, ml] = [wall(q), wall(s), wall(l)];
  const row = (how: string, xs: Timed[], w: number) => [
    how,
    fmt(w / 1000, 2),
    `${fmt(ms / w, 2)}×`,
    fmt(task(xs), 0),
    fmt(idle(xs), 0),
  ];
  const rows: (string | number)[][] = [
    row(`\`--queue\`, ${SLOTS} \`--worker\` processes (Redis)`, q, mq),
    row(`\`--shard I/${SLOTS}\`, ${SLOTS} processes`, s, ms),
    row(`one local run, \`--concurrency ${SLOTS}\` (no Redis)`, l, ml),
  ];
  return [
    "## Work queue against static shards",
    "",
    `${TASKS} faux tasks of uneven length (\`sleep\` of 0.1-5 s, ${fmt(total, 1)} s in all, seeded), ${SLOTS} slots of one task each; ` +
      `median of ${RUNS} interleaved runs; other CPU use on the machine meanwhile: ${fmtOther(medianOther(loads))} cores. ` +
      `The shards hold ${shardSums.map((x) => `${fmt(x, 1)} s`).join(", ")} of sleep: the longest is ${fmt((Math.max(...shardSums) / (total / SLOTS) - 1) * 100, 0)} % above an even split, ` +
      "which is what work stealing wins back. The producer's wall time is measured with the workers already waiting (they are long-lived on their machines).",
    "",
    table(["how", "wall time (s)", "speed-up vs shards", "mean task (ms)", "slot idle per task (ms)"], rows),
    "",
    '"mean task" is a task\'s own duration (agent start to result); "slot idle per task" is the slots\' time outside any task, ' +
      "(slots × wall − Σ task durations) / tasks: for the queue that is its overhead per task (producer start, Redis round trips, " +
      `handing out and collecting), ${fmt(idle(q), 0)} ms against ${fmt(idle(l), 0)} ms for the local pool; for the shards it is mostly waiting for the longest shard. ` +
      "On a loaded machine the task durations themselves grow, which the idle column does not count.",
  ].join("\n");
}
