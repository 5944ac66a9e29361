import { describe, expect, it } from "vitest";
import { parseProcStat, type ProcStat } from "../../../shared/proc.js";
import { descendantsOf } from "../../../worker/tools/process-tree.js";

describe("parseProcStat", () => {
  it.each([
    ["1234 (bash) S 1000 1234 1234 0 -1 4194560", { pid: 1234, state: "S", ppid: 1000, pgrp: 1234, rssPages: 0 }],
    ["77 (my prog) R 5 6 7 0", { pid: 77, state: "R", ppid: 5, pgrp: 6, rssPages: 0 }],
    ["88 (a) b) (c) Z 9 10 11", { pid: 88, state: "Z", ppid: 9, pgrp: 10, rssPages: 0 }],
    [
      "5 (node) S 1 5 5 0 -1 4194560 9000 0 0 0 40 10 0 0 20 0 11 0 100 1000000 2560 18446744073709551615",
      { pid: 5, state: "S", ppid: 1, pgrp: 5, rssPages: 2560 },
    ],
    ["garbage", null],
    ["12 (x) S notanumber 3", null],
  ])("parses %j", (line, expected) => {
    expect(parseProcStat(line)).toEqual(expected);
  });
});

describe("descendantsOf", () => {
  const p = (pid: number, ppid: number): ProcStat => ({ pid, state: "S", ppid, pgrp: pid, rssPages: 0 });
  it.each([
    { name: "a lone process has none", table: [p(10, 1)], root: 10, expected: [] },
    {
      name: "children and grandchildren, parents first",
      table: [p(10, 1), p(12, 11), p(11, 10), p(13, 10)],
      root: 10,
      expected: [11, 13, 12],
    },
    { name: "other trees are left out", table: [p(10, 1), p(20, 1), p(21, 20), p(11, 10)], root: 10, expected: [11] },
    { name: "a cycle in a racy snapshot does not loop", table: [p(10, 11), p(11, 10)], root: 10, expected: [11] },
  ])("$name", ({ table, root, expected }) => {
    expect(descendantsOf(root, table)).toEqual(expected);
  });
});
