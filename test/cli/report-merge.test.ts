import { describe, expect, it } from "vitest";
import { buildReport } from "../../cli/run/report.js";
import { mergeReports, MergeError, parseReport, shardSize, type SourcedReport } from "../../cli/run/report-merge.js";
import { selectShard } from "../../cli/run/shard.js";
import type { RunReport, TaskResult } from "../../cli/run/types.js";

function result(name: string, status: TaskResult["status"] = "passed"): TaskResult {
  return {
    name,
    prompt: "p",
    status,
    finalText: "",
    turns: 1,
    toolCalls: 0,
    tokens: { input: 1, output: 2, total: 3 },
    startedAt: 0,
    durationMs: 10,
    cwd: "/x",
    changedFiles: null,
    check: null,
    sessionFile: null,
    worktree: null,
  };
}

const NAMES = Array.from({ length: 7 }, (_, i) => `t${i + 1}`);

/** The reports N shards of `names` would write, each started `offsetMs` after the previous. */
function shardReports(
  names: string[],
  total: number,
  over: (i: number) => Partial<RunReport> = () => ({}),
  statuses: Record<string, TaskResult["status"]> = {},
): SourcedReport[] {
  return Array.from({ length: total }, (_, k) => {
    const shard = { index: k + 1, total };
    const results = selectShard(names, shard).map((n) => result(n, statuses[n]));
    const report = buildReport({
      results,
      startedAt: 1_000_000 + k * 100,
      durationMs: 1000 + k * 500,
      interrupted: false,
      shard,
      listed: names.length,
    });
    return { source: `run-${k + 1}.json`, report: { ...report, ...over(k + 1) } };
  });
}

describe("shardSize", () => {
  it.each([
    [7, 1, 3, 3],
    [7, 2, 3, 2],
    [7, 3, 3, 2],
    [2, 3, 3, 0],
    [0, 1, 1, 0],
    [6, 3, 3, 2],
  ])("a list of %i: shard %i/%i has %i", (listed, index, total, size) => {
    expect(shardSize(listed, index, total)).toBe(size);
    expect(selectShard(Array.from({ length: listed }), { index, total })).toHaveLength(size);
  });
});

describe("mergeReports", () => {
  it.each([1, 2, 3, 4, 7, 9])("puts %i shards back in list order with the counts and exit code of one run", (total) => {
    const merged = mergeReports(shardReports(NAMES, total));
    expect(merged.tasks.map((t) => t.name)).toEqual(NAMES);
    expect(merged.shard).toBeNull();
    expect(merged.listed).toBe(7);
    expect(merged.counts).toEqual({ total: 7, passed: 7, failed: 0, timed_out: 0, cancelled: 0, skipped: 0 });
    expect(merged.exitCode).toBe(0);
  });

  it("spans from the first shard's start to the last shard's end", () => {
    const merged = mergeReports(shardReports(NAMES, 3));
    expect(merged.startedAt).toBe(new Date(1_000_000).toISOString());
    // shard 3 starts at +200 and lasts 2000: ends at +2200.
    expect(merged.durationMs).toBe(2200);
  });

  it.each([
    [{ t2: "failed" }, false, 1, { failed: 1 }],
    [{ t5: "timed_out" }, false, 1, { timed_out: 1 }],
    [{ t7: "skipped" }, false, 1, { skipped: 1 }],
    [{ t3: "cancelled" }, true, 130, { cancelled: 1 }],
  ] as const)("statuses %j (a shard interrupted: %s) → exit %i", (statuses, interrupted, exitCode, counts) => {
    const merged = mergeReports(
      shardReports(NAMES, 2, (i) => (interrupted && i === 2 ? { interrupted: true } : {}), statuses),
    );
    expect(merged.exitCode).toBe(exitCode);
    expect(merged.interrupted).toBe(interrupted);
    expect(merged.counts).toMatchObject({ total: 7, passed: 6, ...counts });
  });

  it.each<[string, () => SourcedReport[], RegExp]>([
    ["no reports", () => [], /no reports to merge/],
    [
      "a shard missing",
      () => shardReports(NAMES, 3).filter((r) => r.report.shard!.index !== 2),
      /missing the report of shard 2\/3/,
    ],
    ["two shards missing", () => shardReports(NAMES, 4).slice(0, 2), /shards 3\/4, 4\/4/],
    [
      "a shard given twice",
      () => {
        const r = shardReports(NAMES, 2);
        return [r[0], r[1], { ...r[0], source: "copy.json" }];
      },
      /task "t1" is in both run-1\.json and copy\.json/,
    ],
    [
      "a task in two shards",
      () => {
        const r = shardReports(NAMES, 2);
        r[1].report.tasks.push(result("t1"));
        return r;
      },
      /task "t1" is in both run-1\.json and run-2\.json/,
    ],
    [
      "a task twice in one report",
      () => {
        const r = shardReports(NAMES, 2);
        r[0].report.tasks.push(result("t1"));
        return r;
      },
      /run-1\.json: task "t1" is in it twice/,
    ],
    [
      "the same shard index of other tasks",
      () => {
        const r = shardReports(NAMES, 2);
        const other = shardReports(["x1", "x2"], 2)[0];
        return [r[0], r[1], { ...other, source: "other.json" }];
      },
      /shard 1\/2 is given twice \(run-1\.json and other\.json\)/,
    ],
    [
      "shards of different matrices",
      () => [
        shardReports(NAMES, 2)[0],
        ...shardReports(["y1", "y2", "y3"], 3).map((r) => ({ ...r, source: `y-${r.source}` })),
      ],
      /run-1\.json is shard 1\/2 but y-run-1\.json is shard 1\/3; merge the shards of one matrix/,
    ],
    [
      "a shard lacking a task",
      () => {
        const r = shardReports(NAMES, 3);
        r[2].report.tasks.pop();
        return r;
      },
      /shard 3\/3\) has 1 task, but shard 3\/3 of a list of 7 has 2; tasks are missing/,
    ],
    [
      "lists of different lengths",
      () => shardReports(NAMES, 2, (i) => (i === 2 ? { listed: 9 } : {})),
      /different lengths \(7, 9\)/,
    ],
    [
      "a whole run and a shard",
      () => [
        {
          source: "whole.json",
          report: buildReport({ results: [result("z")], startedAt: 0, durationMs: 1, interrupted: false, shard: null }),
        },
        ...shardReports(NAMES, 2),
      ],
      /whole\.json is a whole run but run-1\.json is a shard/,
    ],
    [
      "a whole run lacking tasks",
      () => [
        {
          source: "whole.json",
          report: buildReport({
            results: [result("z")],
            startedAt: 0,
            durationMs: 1,
            interrupted: false,
            shard: null,
            listed: 2,
          }),
        },
      ],
      /lists 2 tasks but holds 1/,
    ],
  ])("refuses %s", (_, inputs, message) => {
    expect(() => mergeReports(inputs())).toThrow(MergeError);
    expect(() => mergeReports(inputs())).toThrow(message);
  });

  it("without `listed` (older reports) still finds a shard that lost a task when the sizes no longer fit", () => {
    const r = shardReports(NAMES, 3, () => ({ listed: undefined }));
    r[2].report.tasks.splice(0, 1);
    expect(() => mergeReports(r)).toThrow(/shard 1\/3 of a list of 6 has 2/);
  });

  it("with the task list: follows its order and names what is missing or foreign", () => {
    const reports = shardReports(NAMES, 2);
    expect(mergeReports(reports, [...NAMES].reverse()).tasks.map((t) => t.name)).toEqual([...NAMES].reverse());
    expect(() => mergeReports(reports, [...NAMES, "t8", "t9"])).toThrow(/lack 2 tasks of the list: t8, t9/);
    expect(() => mergeReports(reports, NAMES.slice(1))).toThrow(/task the list does not have: t1/);
  });

  it("merges whole runs of different lists side by side", () => {
    const a = {
      source: "a.json",
      report: buildReport({
        results: [result("a1"), result("a2")],
        startedAt: 0,
        durationMs: 5,
        interrupted: false,
        shard: null,
        listed: 2,
      }),
    };
    const b = {
      source: "b.json",
      report: buildReport({
        results: [result("b1", "failed")],
        startedAt: 2,
        durationMs: 10,
        interrupted: false,
        shard: null,
        listed: 1,
      }),
    };
    const merged = mergeReports([a, b]);
    expect(merged.tasks.map((t) => t.name)).toEqual(["a1", "a2", "b1"]);
    expect(merged).toMatchObject({ exitCode: 1, durationMs: 12, counts: { total: 3, passed: 2, failed: 1 } });
  });
});

describe("parseReport", () => {
  const good = JSON.stringify(shardReports(NAMES, 1)[0].report);

  it("reads what --report-json writes", () => expect(parseReport(good, "r.json").tasks).toHaveLength(7));

  it.each([
    ["{", /r\.json: not valid JSON/],
    ["[]", /r\.json: not a pi-orch run report/],
    [JSON.stringify({ ...JSON.parse(good), version: 2 }), /not a pi-orch run report \(\/version/],
    [JSON.stringify({ ...JSON.parse(good), tasks: [{ name: "x" }] }), /\/tasks\/0/],
    [JSON.stringify({ ...JSON.parse(good), tasks: [{ ...result("x"), status: "great" }] }), /\/tasks\/0\/status/],
  ])("refuses %j", (text, message) => expect(() => parseReport(text, "r.json")).toThrow(message));
});
