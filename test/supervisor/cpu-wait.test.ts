import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  type CpuWaits,
  parseSchedstatWaitMs,
  readCpuWaits,
  waitedBetween,
  workerLeaves,
} from "../../supervisor/cpu-wait.js";

/** The kernel keeps run-queue delays (Linux with schedstats). */
const schedstat = existsSync("/proc/self/schedstat");

describe("waits for a CPU", () => {
  it.each([
    ["1234567 2500000 42\n", 2.5],
    ["0 0 0", 0],
    ["7", null],
    ["", null],
    ["1 -3 2", null],
  ])("reads %j as %j ms", (text, ms) => {
    expect(parseSchedstatWaitMs(text)).toBe(ms);
  });

  const at = (self: number | null, tree: [number, number][]): CpuWaits => ({ self, tree: new Map(tree) });
  it.each<[string, CpuWaits, CpuWaits, number]>([
    ["nothing waited", at(10, [[5, 100]]), at(10, [[5, 100]]), 0],
    ["the supervisor waited", at(10, [[5, 100]]), at(900, [[5, 100]]), 890],
    ["the worker waited", at(10, [[5, 100]]), at(10, [[5, 400]]), 300],
    ["the longer of the two, not their sum", at(10, [[5, 100]]), at(210, [[5, 400]]), 300],
    [
      "any process of the tree",
      at(0, [
        [5, 0],
        [6, 10],
      ]),
      at(0, [
        [5, 1],
        [6, 60],
      ]),
      50,
    ],
    [
      "a process started since counts from its start",
      at(0, [[5, 0]]),
      at(0, [
        [5, 0],
        [7, 40],
      ]),
      40,
    ],
    ["a pid taken by a newer process never counts back", at(0, [[5, 500]]), at(0, [[5, 20]]), 0],
    ["no reading of the supervisor", at(null, []), at(null, [[5, 30]]), 30],
  ])("%s", (_what, before, after, waited) => {
    expect(waitedBetween(before, after)).toBe(waited);
  });

  it.skipIf(!schedstat)("reads this process, and the processes asked for", () => {
    const alone = readCpuWaits([]);
    expect(alone.self).toBeGreaterThanOrEqual(0);
    expect(alone.tree.size).toBe(0);
    expect(readCpuWaits([process.pid]).tree.get(process.pid)).toBeGreaterThanOrEqual(0);
    // A pid no process has is left out, as a worker without processes has no leaves.
    expect(readCpuWaits([2 ** 22 + 1]).tree.size).toBe(0);
    expect(workerLeaves(2 ** 22 + 1)).toEqual([]);
    // This process's leaves: itself when it has no children, else processes below it.
    expect(workerLeaves(process.pid).length).toBeGreaterThan(0);
  });
});
