import { describe, expect, it } from "vitest";
import { contextLines, countLimit, startLine } from "../../../worker/tools/numeric-args.js";

// pi 1.6's arithmetic (grep.js, find.js, ls.js, read.js of pi-coding-agent), value by value.
describe("the built-in tools' numeric arguments, as pi 1.6 reads them", () => {
  it.each([
    [undefined, 100],
    [0, 1],
    [-4, 1],
    [0.5, 1],
    [2.5, 2],
    [7, 7],
  ])("limit %s counts %s results (default 100)", (limit, count) => {
    expect(countLimit(limit, 100)).toBe(count);
  });

  it.each([
    [undefined, 0],
    [0, 0],
    [-2, 0],
    [0.5, 0],
    [2.5, 2],
    [1e300, Number.MAX_SAFE_INTEGER],
  ])("grep's context %s shows %s lines", (context, lines) => {
    expect(contextLines(context)).toBe(lines);
  });

  it.each([
    [undefined, 0],
    [0, 0],
    [-3, 0],
    [1, 0],
    [1.5, 0.5],
    [3, 2],
  ])("read's offset %s starts at line index %s", (offset, index) => {
    expect(startLine(offset)).toBe(index);
  });
});
