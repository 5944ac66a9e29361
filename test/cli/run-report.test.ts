import { describe, expect, it } from "vitest";
import { colors } from "../../cli/context.js";
import { progressLine, progressTable } from "../../cli/run/progress.js";
import { buildReport, exitCodeOf } from "../../cli/run/report.js";
import { escapeXml, junitXml } from "../../cli/run/junit.js";
import { formatDuration, oneLine, summaryText, totalsLine } from "../../cli/run/summary.js";
import { RunTracker } from "../../cli/run/tracker.js";
import type { TaskProgress, TaskResult } from "../../cli/run/types.js";
import { findAll, parseXml } from "../support/xml.js";

const plain = colors(false);

function result(over: Partial<TaskResult>): TaskResult {
  return {
    name: "t",
    prompt: "p",
    status: "passed",
    finalText: "",
    turns: 1,
    toolCalls: 0,
    tokens: { input: 1, output: 2, total: 3 },
    startedAt: 0,
    durationMs: 1500,
    cwd: "/x",
    changedFiles: null,
    check: null,
    sessionFile: null,
    worktree: null,
    ...over,
  };
}

describe("exitCodeOf", () => {
  it.each([
    [["passed", "passed"], false, 0],
    [[], false, 0],
    [["passed", "failed"], false, 1],
    [["timed_out"], false, 1],
    [["passed", "skipped"], false, 1],
    [["passed", "cancelled"], true, 130],
  ] as const)("%j (interrupted %s) → %i", (statuses, interrupted, code) => {
    expect(
      exitCodeOf(
        statuses.map((status) => result({ status })),
        interrupted,
      ),
    ).toBe(code);
  });
});

describe("escapeXml", () => {
  it.each([
    ["a & b", "a &amp; b"],
    ['<x y="1">', "&lt;x y=&quot;1&quot;&gt;"],
    ["it's", "it&apos;s"],
    ["bell\u0007 and nul\u0000", "bell\uFFFD and nul\uFFFD"],
    ["tab\tnl\ncr\r", "tab\tnl\ncr\r"],
    ["lone \uD800 surrogate", "lone \uFFFD surrogate"],
    ["emoji 😀 stays", "emoji 😀 stays"],
    ["]]> in text", "]]&gt; in text"],
  ])("%j", (input, expected) => expect(escapeXml(input)).toBe(expected));
});

describe("junitXml", () => {
  it("writes one test case per task; failures carry the reason and the last assistant text", () => {
    const report = buildReport({
      results: [
        result({ name: "ok", finalText: "done <fine>" }),
        result({
          name: "bad & ugly",
          status: "failed",
          reason: 'check failed: `npm test` exited with code 1 "x"',
          finalText: "I changed <a> & \u0001",
          check: { command: "npm test", exitCode: 1, signal: null, passed: false, durationMs: 5, output: "1 failing" },
        }),
        result({ name: "slow", status: "timed_out", reason: "timed out after 2s while running bash" }),
        result({ name: "later", status: "skipped", reason: "not started: interrupted" }),
      ],
      startedAt: 0,
      durationMs: 4200,
      interrupted: false,
      shard: { index: 1, total: 2 },
    });
    const root = parseXml(junitXml(report));
    expect(root.name).toBe("testsuites");
    expect(root.attrs).toMatchObject({ tests: "4", failures: "2", errors: "1", skipped: "0", time: "4.200" });
    const cases = findAll(root, "testcase");
    expect(cases.map((c) => c.attrs.name)).toEqual(["ok", "bad & ugly", "slow", "later"]);
    const failure = findAll(cases[1], "failure")[0];
    expect(failure.attrs.message).toBe('check failed: `npm test` exited with code 1 "x"');
    expect(failure.attrs.type).toBe("check");
    expect(failure.text).toContain("I changed <a> & \uFFFD");
    expect(failure.text).toContain("1 failing");
    expect(findAll(cases[2], "failure")[0].attrs.type).toBe("timeout");
    // A task that never ran is an error, so a CI system reading only the XML marks the job red.
    expect(findAll(cases[3], "skipped")).toHaveLength(0);
    expect(findAll(cases[3], "error")[0].attrs).toMatchObject({ message: "not started: interrupted", type: "not_run" });
    expect(findAll(cases[0], "failure")).toHaveLength(0);
  });

  it("carries each task's tokens and cost as testcase properties, and the sums as the suite's", () => {
    const report = buildReport({
      results: [
        result({ name: "a", tokens: { input: 100, output: 20, total: 120, cost: 0.25 } }),
        result({ name: "b", status: "failed", reason: "x", tokens: { input: 10, output: 5, total: 15 } }),
      ],
      startedAt: 0,
      durationMs: 10,
      interrupted: false,
      shard: null,
    });
    const root = parseXml(junitXml(report));
    const props = (node: ReturnType<typeof parseXml>) =>
      Object.fromEntries(
        findAll(findAll(node, "properties")[0]!, "property").map((p) => [p.attrs.name, Number(p.attrs.value)]),
      );
    const [suite] = findAll(root, "testsuite");
    const cases = findAll(root, "testcase");
    expect(props(cases[0]!)).toEqual({ "tokens.input": 100, "tokens.output": 20, "tokens.total": 120, cost: 0.25 });
    expect(props(cases[1]!)).toEqual({ "tokens.input": 10, "tokens.output": 5, "tokens.total": 15, cost: 0 });
    expect(props(suite!)).toEqual({ "tokens.input": 110, "tokens.output": 25, "tokens.total": 135, cost: 0.25 });
  });
});

describe("summary", () => {
  it.each([
    [450, "450ms"],
    [1500, "1.5s"],
    [125_000, "2m05s"],
  ])("formatDuration(%i) = %s", (ms, text) => expect(formatDuration(ms)).toBe(text));

  it("folds text to one line and cuts it", () => expect(oneLine("a\n b   c", 4)).toBe("a b…"));

  it("counts by status", () => {
    const results = [
      result({}),
      result({ status: "failed" }),
      result({ status: "failed" }),
      result({ status: "timed_out" }),
    ];
    expect(totalsLine(results, 3000, false)).toBe("4 tasks: 1 passed, 2 failed, 1 timed out in 3.0s; 12 tokens, $0.00");
    expect(totalsLine([result({ tokens: { input: 1200, output: 300, total: 1500, cost: 0.0042 } })], 10, true)).toBe(
      "1 task: 1 passed in 10ms (interrupted); 1.5k tokens, $0.0042",
    );
  });

  it("shows per task the final text, the reason, changed files and the session file", () => {
    const text = summaryText(
      [
        result({
          name: "a",
          finalText: "all\ngood",
          changedFiles: ["x.ts"],
          sessionFile: "/s/a.jsonl",
          check: { command: "true", exitCode: 0, signal: null, passed: true, durationMs: 1, output: "" },
        }),
        result({ name: "b", status: "failed", reason: "boom", toolCalls: 4 }),
      ],
      2000,
      false,
      plain,
    );
    expect(text).toMatch(/^TASK\s+STATUS\s+TURNS\s+TOOLS\s+TOKENS\s+COST\s+TIME\s+CHANGED\s+CHECK/);
    expect(text).toMatch(/^a\s+passed\s+1\s+0\s+3\s+\$0\.00\s+1\.5s\s+1\s+ok$/m);
    expect(text).toMatch(/^b\s+failed\s+1\s+4\s+3\s+\$0\.00\s+1\.5s\s+-\s+-$/m);
    expect(text).toContain("a  all good");
    expect(text).toContain("session  /s/a.jsonl");
    expect(text).toContain("reason   boom");
  });
});

describe("progress", () => {
  const p = (over: Partial<TaskProgress>): TaskProgress => ({
    name: "t",
    status: "running",
    turns: 2,
    tool: "bash",
    startedAt: 1000,
    endedAt: null,
    ...over,
  });

  it.each([
    [p({ status: "starting" }), "t starting"],
    [p({ status: "passed", endedAt: 3500 }), "t passed after 2.5s"],
    [p({ status: "timed_out", endedAt: 2000 }), "t timed out after 1.0s"],
    [p({ status: "skipped", startedAt: null }), "t skipped"],
  ])("line for %j", (progress, line) => expect(progressLine(progress, 5000, plain)).toBe(line));

  it("draws the live table, running tasks first when it must cut", () => {
    const tasks = [
      p({ name: "a", status: "pending", startedAt: null }),
      p({ name: "b" }),
      p({ name: "c", status: "passed", endedAt: 2000 }),
    ];
    expect(progressTable(tasks, 4000, plain)).toBe(
      [
        "TASK  STATUS   TURNS  TOOL  ELAPSED",
        "a     pending  2      bash  -",
        "b     running  2      bash  3.0s",
        "c     passed   2      bash  1.0s",
      ].join("\n"),
    );
    const cut = progressTable(tasks, 4000, plain, 2).split("\n");
    expect(cut[1]).toMatch(/^b\s+running/);
    expect(cut[2]).toBe("… 2 more (1 done, 1 waiting in all)");
  });
});

describe("RunTracker", () => {
  it("counts turns, tool calls, tokens, the current tool, edited paths and the final text", () => {
    const t = new RunTracker();
    const events: Record<string, unknown>[] = [
      { type: "agent_start" },
      { type: "turn_start" },
      { type: "tool_execution_start", toolCallId: "1", toolName: "edit", args: { path: "a.txt" } },
      { type: "tool_execution_start", toolCallId: "2", toolName: "bash", args: { command: "ls" } },
      { type: "tool_execution_end", toolCallId: "2" },
      {
        type: "message_end",
        message: {
          role: "assistant",
          content: [{ type: "text", text: "first" }],
          usage: { input: 10, output: 5, totalTokens: 15 },
          stopReason: "toolUse",
        },
      },
      { type: "tool_execution_end", toolCallId: "1" },
      { type: "turn_start" },
      { type: "message_end", message: { role: "user", content: "x" } },
      {
        type: "message_end",
        message: {
          role: "assistant",
          content: [{ type: "text", text: " done " }],
          usage: { input: 20, output: 2, totalTokens: 22 },
          stopReason: "stop",
        },
      },
    ];
    const ends = events.map((e) => t.apply(e));
    expect(ends.every((e) => e === null)).toBe(true);
    expect(t).toMatchObject({
      turns: 2,
      toolCalls: 2,
      tool: null,
      finalText: "done",
      stopReason: "stop",
      tokens: { input: 30, output: 7, total: 37 },
    });
    expect([...t.touched]).toEqual(["a.txt"]);
    expect(t.apply({ type: "agent_end", messages: [] })).toEqual({ kind: "ended" });
  });

  it("shows the tool that still runs, and ends on a worker exit", () => {
    const t = new RunTracker();
    t.apply({ type: "agent_start" });
    t.apply({ type: "tool_execution_start", toolCallId: "1", toolName: "read", args: {} });
    t.apply({ type: "tool_execution_start", toolCallId: "2", toolName: "bash", args: {} });
    t.apply({ type: "tool_execution_end", toolCallId: "2" });
    expect(t.tool).toBe("read");
    expect(t.apply({ type: "worker_exited", code: null, signal: "SIGKILL", reason: "exit" })).toEqual({
      kind: "exited",
      reason: "the worker exited (signal SIGKILL)",
    });
  });

  it("ignores an agent_end that arrives before its run started", () => {
    expect(new RunTracker().apply({ type: "agent_end", messages: [] })).toBeNull();
  });
});
