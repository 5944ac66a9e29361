import { describe, expect, it } from "vitest";
import { colors } from "../../cli/context.js";
import { progressLine, progressTable } from "../../cli/run/progress.js";
import { summaryText } from "../../cli/run/summary.js";
import { oncePerOutage } from "../../cli/run/queue-connection.js";
import { describeQueue, parseQueueUrl } from "../../cli/run/queue-address.js";
import {
  checkJobData,
  checkJobProgress,
  jobIdOf,
  queueFailureResult,
  runIdOf,
  sameTask,
  withDefaults,
} from "../../cli/run/queue-jobs.js";
import type { RunTask, TaskProgress } from "../../cli/run/types.js";

describe("parseQueueUrl", () => {
  it.each([
    ["redis://127.0.0.1:6379/agents", { host: "127.0.0.1", port: 6379, tls: false, queue: "agents" }],
    ["redis://redis/agents", { host: "redis", port: 6379, tls: false, queue: "agents" }],
    [
      "rediss://cache.example.com:6380/ci-run.1",
      { host: "cache.example.com", port: 6380, tls: true, queue: "ci-run.1" },
    ],
    ["redis://:s%40cret@h:1/q", { host: "h", port: 1, password: "s@cret", tls: false, queue: "q" }],
    ["redis://me:pw@h:1/q", { host: "h", port: 1, username: "me", password: "pw", tls: false, queue: "q" }],
    ["redis://[::1]:7000/q", { host: "::1", port: 7000, tls: false, queue: "q" }],
  ])("reads %s", (text, address) => expect(parseQueueUrl(text)).toEqual(address));

  it.each([
    ["127.0.0.1:6379/q", /expected redis:\/\/HOST:PORT\/QUEUE/],
    ["http://h:1/q", /expected redis:\/\//],
    ["redis://h:1", /no queue name/],
    ["redis://h:1/", /no queue name/],
    ["redis://h:1/a/b", /queue name "a\/b"/],
    ["redis://h:1/a:b", /queue name "a:b"/],
    ["redis://h:1/q?db=2", /no \?query/],
  ])("refuses %s", (text, message) => expect(() => parseQueueUrl(text)).toThrow(message));

  it("describes an address without its password", () => {
    expect(describeQueue(parseQueueUrl("redis://me:pw@h:1/q"))).toBe("redis://me@h:1/q");
    expect(describeQueue(parseQueueUrl("rediss://[::1]/q"))).toBe("rediss://[::1]:6379/q");
  });
});

describe("run and job ids", () => {
  const tasks: RunTask[] = [
    { name: "a", prompt: "x" },
    { name: "b", prompt: "y", timeout: 5 },
  ];

  it("hashes the tasks, so the same command finds the same run again", () => {
    expect(runIdOf(tasks)).toBe(runIdOf(structuredClone(tasks)));
    expect(runIdOf(tasks)).toMatch(/^[0-9a-f]{16}$/);
    expect(runIdOf([{ ...tasks[0], prompt: "changed" }, tasks[1]])).not.toBe(runIdOf(tasks));
    expect(runIdOf(tasks, "gh-1234")).toBe("gh-1234");
  });

  it("builds job ids without the ':' BullMQ refuses", () => expect(jobIdOf("r1", "fix-login")).toBe("r1.fix-login"));

  it.each([
    [
      { name: "a", prompt: "p" },
      { provider: "faux", timeout: 9 },
      { name: "a", prompt: "p", provider: "faux", timeout: 9 },
    ],
    [
      { name: "a", prompt: "p", provider: "openai", worktree: false },
      { provider: "faux", worktree: true },
      { name: "a", prompt: "p", provider: "openai", worktree: false },
    ],
    [{ name: "a", prompt: "p" }, {}, { name: "a", prompt: "p" }],
  ])("withDefaults(%j, %j)", (task, defaults, expected) => expect(withDefaults(task, defaults)).toEqual(expected));

  it.each([
    [{ name: "a", prompt: "p" }, { name: "a", prompt: "p" }, true],
    [{ name: "a", prompt: "p" }, { name: "a", prompt: "q" }, false],
    [{ name: "a", prompt: "p" }, { name: "a", prompt: "p", check: "true" }, false],
  ])("sameTask(%j, %j) = %s", (a, b, same) => expect(sameTask(a, b)).toBe(same));
});

describe("what comes out of Redis is checked", () => {
  it.each([
    [{ runId: "r", task: { name: "a", prompt: "p" } }, true],
    [{ runId: "r", task: { name: "a" } }, false],
    [{ runId: "r", task: { name: "a", prompt: "p", extra: 1 } }, false],
    [{ task: { name: "a", prompt: "p" } }, false],
  ])("job data %j ok: %s", (data, ok) => expect(checkJobData(data).ok).toBe(ok));

  it.each([
    [{ status: "running", turns: 1, tool: "bash", host: "m1:1", startedAt: 5 }, true],
    [{ status: "passed", turns: 1, tool: null, host: "m1:1", startedAt: 5 }, false],
    [{ status: "running", turns: 1, host: "m1:1", startedAt: 5 }, false],
  ])("progress %j ok: %s", (data, ok) => expect(checkJobProgress(data).ok).toBe(ok));

  it("records a job the queue gave up on as failed, with the attempts", () => {
    expect(queueFailureResult({ name: "a", prompt: "p" }, "job stalled more than allowable limit", 3)).toMatchObject({
      status: "failed",
      reason: "the queue gave up on it after 3 attempts: job stalled more than allowable limit",
      attempts: 3,
    });
  });
});

describe("queue progress shows the worker", () => {
  const plain = colors(false);
  const p = (over: Partial<TaskProgress>): TaskProgress => ({
    name: "t",
    status: "running",
    turns: 1,
    tool: null,
    startedAt: 0,
    endedAt: null,
    ...over,
  });

  it.each([
    [p({ host: "m1:42" }), "t running on m1:42"],
    [p({ status: "passed", endedAt: 2000, host: "m1:42" }), "t passed after 2.0s on m1:42"],
    [p({ status: "pending", host: "m1:42" }), "t pending"],
  ])("line %j", (progress, line) => expect(progressLine(progress, 5000, plain)).toBe(line));

  it("adds a WORKER column only when a task has a host", () => {
    expect(progressTable([p({})], 1000, plain)).not.toContain("WORKER");
    expect(
      progressTable([p({ host: "m1:42" }), p({ name: "u", status: "pending", startedAt: null })], 1000, plain).split(
        "\n",
      ),
    ).toEqual([
      "TASK  STATUS   TURNS  TOOL  ELAPSED  WORKER",
      "t     running  1      -     1.0s     m1:42",
      "u     pending  1      -     -        -",
    ]);
  });
});

describe("the summary of a queue run", () => {
  const base = {
    ...queueFailureResult({ name: "a", prompt: "p" }, "x", 1),
    status: "passed" as const,
    reason: undefined,
    attempts: 1,
  };

  it.each([
    [{ host: "m1:42" }, "  worker   m1:42"],
    [{ host: "m2:7", attempts: 2 }, "  worker   m2:7 (retried: attempt 2)"],
    [{ attempts: 3 }, "  worker   retried: attempt 3"],
  ])("%j → %j", (over, line) =>
    expect(summaryText([{ ...base, ...over }], 1000, false, colors(false)).split("\n")).toContain(line),
  );

  it("has no worker line for a local task", () => {
    const { attempts: _, ...local } = base;
    expect(summaryText([local], 1000, false, colors(false))).not.toContain("worker");
  });
});

describe("oncePerOutage", () => {
  it("passes the first error of a kind and drops repeats", () => {
    const seen: string[] = [];
    const report = oncePerOutage((m) => seen.push(m));
    for (const m of ["ECONNREFUSED", "ECONNREFUSED", "other", "ECONNREFUSED"]) report(new Error(m));
    expect(seen).toEqual(["ECONNREFUSED", "other"]);
  });
});
