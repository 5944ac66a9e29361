import { describe, expect, it } from "vitest";
import { parseShard, selectShard } from "../../cli/run/shard.js";

describe("parseShard", () => {
  it.each([
    ["1/1", { index: 1, total: 1 }],
    ["2/4", { index: 2, total: 4 }],
    [" 3 / 3 ", { index: 3, total: 3 }],
  ])("reads %j", (text, shard) => expect(parseShard(text)).toEqual(shard));

  it.each([
    ["0/2", /between 1 and 2/],
    ["3/2", /between 1 and 2/],
    ["1/0", /at least 1/],
    ["1", /expected I\/N/],
    ["a/b", /expected I\/N/],
    ["-1/2", /expected I\/N/],
  ])("refuses %j", (text, message) => expect(() => parseShard(text)).toThrow(message));
});

describe("selectShard", () => {
  const tasks = ["a", "b", "c", "d", "e", "f", "g"];

  it.each([1, 2, 3, 4, 7, 9])("splits 7 tasks over %i shards so every task runs exactly once", (total) => {
    const slices = Array.from({ length: total }, (_, i) => selectShard(tasks, { index: i + 1, total }));
    expect(slices.flat().sort()).toEqual(tasks);
    const sizes = slices.map((s) => s.length);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
  });

  it.each([
    [{ index: 1, total: 2 }, ["a", "c", "e", "g"]],
    [{ index: 2, total: 2 }, ["b", "d", "f"]],
    [{ index: 3, total: 3 }, ["c", "f"]],
  ])("is deterministic and keeps file order: %j", (shard, expected) => {
    expect(selectShard(tasks, shard)).toEqual(expected);
    expect(selectShard(tasks, shard)).toEqual(expected);
  });

  it("returns every task without a shard", () => expect(selectShard(tasks, null)).toEqual(tasks));
});
