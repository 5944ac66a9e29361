/**
 * The GitHub Actions examples under examples/ci/ are run, not only read: the test
 * takes each workflow's own `run:` steps from the YAML, and runs them with bash in a
 * clone of this repository (with the built dist/), the way the jobs would: the four
 * shard jobs (each its own home, standing in for its machine) and the merge job of
 * shards.yml, and the queue job of queue.yml against a redis-server the test starts
 * in place of the service container. Folders and processes are removed after.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { RunReport } from "../../cli/run/types.js";
import { killProcessesWithEnv } from "../support/cli-process.js";
import { RedisServer, redisMissing } from "../support/redis-server.js";

const ROOT = resolve(import.meta.dirname, "../..");
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Step {
  name?: string;
  run?: string;
}

function steps(file: string, job: string): Step[] {
  const doc = parse(readFileSync(join(ROOT, "examples/ci", file), "utf8")) as {
    jobs: Record<string, { steps: Step[] }>;
  };
  return doc.jobs[job].steps;
}

/** The `run:` of the step whose name starts with `prefix`. */
function runOf(list: Step[], prefix: string): string {
  const step = list.find((s) => s.run !== undefined && s.name?.startsWith(prefix));
  if (!step) throw new Error(`no step named "${prefix}…"`);
  return step.run!;
}

/** A clone of the repository at HEAD with the built dist/ beside it, as a job's checkout after npm ci. */
function checkout(): { dir: string; tag: string } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "pi-orch-test-ci-")));
  const tag = `ci-example-${process.pid}-${Date.now()}`;
  cleanups.push(() => {
    killProcessesWithEnv(`PI_ORCH_TEST_CI=${tag}`);
    rmSync(dir, { recursive: true, force: true });
  });
  execFileSync("git", ["clone", "-q", "--shared", ROOT, join(dir, "repo")]);
  symlinkSync(join(ROOT, "dist"), join(dir, "repo", "dist"));
  return { dir, tag };
}

/** Run a step's script with bash -e (as Actions does) in the checkout; resolves with its exit code and output. */
function bash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolvePromise) => {
    const p = spawn("bash", ["-e", "-c", script], {
      cwd,
      env: { ...process.env, NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    p.stdout.on("data", (c: Buffer) => (out += c.toString()));
    p.stderr.on("data", (c: Buffer) => (out += c.toString()));
    p.once("close", (code) => resolvePromise({ code, out }));
  });
}

const listed = (JSON.parse(readFileSync(join(ROOT, "examples/run/tasks.json"), "utf8")) as { name: string }[]).map(
  (t) => t.name,
);

describe("examples/ci", () => {
  it("shards.yml: four shard jobs and the merge job give one report of every task", async () => {
    const { dir, tag } = checkout();
    const repo = join(dir, "repo");
    const shardStep = runOf(steps("shards.yml", "shard"), "tasks of shard");
    const results = await Promise.all(
      [1, 2, 3, 4].map((n) =>
        bash(shardStep.replaceAll("${{ matrix.shard }}", String(n)), repo, {
          PI_ORCH_HOME: join(dir, `home-${n}`),
          PI_ORCH_TEST_CI: tag,
        }),
      ),
    );
    for (const r of results) expect(r.code, r.out).toBe(0);
    const merged = await bash(runOf(steps("shards.yml", "report"), "one report"), repo, {
      PI_ORCH_HOME: join(dir, "home-report"),
      PI_ORCH_TEST_CI: tag,
    });
    expect(merged.code, merged.out).toBe(0);
    const report = JSON.parse(readFileSync(join(repo, "reports/run.json"), "utf8")) as RunReport;
    expect(report.tasks.map((t) => t.name)).toEqual(listed);
    expect(report.counts.passed).toBe(listed.length);
    expect(readFileSync(join(repo, "reports/junit.xml"), "utf8")).toContain(`tests="${listed.length}"`);
  }, 180_000);

  const missing = redisMissing();
  it.skipIf(missing !== null)(
    `queue.yml: three workers and the producer against Redis${missing ? ` (skipped: ${missing})` : ""}`,
    async () => {
      const { dir, tag } = checkout();
      const repo = join(dir, "repo");
      const redis = await RedisServer.start();
      cleanups.push(() => redis.stop());
      const runnerTemp = join(dir, "runner-temp");
      mkdirSync(runnerTemp);
      const script = runOf(steps("queue.yml", "agents"), "queue the tasks").replaceAll("${{ github.run_id }}", "4242");
      const r = await bash(script, repo, {
        QUEUE: redis.url("agents"),
        RUNNER_TEMP: runnerTemp,
        PI_ORCH_HOME: join(dir, "home-producer"),
        PI_ORCH_TEST_CI: tag,
      });
      expect(r.code, r.out).toBe(0);
      const report = JSON.parse(readFileSync(join(repo, "reports/run.json"), "utf8")) as RunReport;
      expect(report.tasks.map((t) => t.name)).toEqual(listed);
      expect(report.counts.passed).toBe(listed.length);
      expect(new Set(report.tasks.map((t) => t.host)).size).toBeGreaterThanOrEqual(1);
    },
    180_000,
  );
});
