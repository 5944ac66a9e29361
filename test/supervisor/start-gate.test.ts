import { describe, expect, it } from "vitest";
import { defaultStartConcurrency, parseStartConcurrency, StartGate } from "../../supervisor/start-gate.js";

describe("start gate", () => {
  it("grants up to its limit at once, then one per release in the order asked", () => {
    const gate = new StartGate(2);
    const granted: string[] = [];
    for (const name of ["a", "b", "c", "d"]) gate.acquire(() => granted.push(name));
    expect(granted).toEqual(["a", "b"]);
    expect([gate.active, gate.queued]).toEqual([2, 2]);
    gate.release();
    expect(granted).toEqual(["a", "b", "c"]);
    gate.release();
    gate.release();
    gate.release();
    expect(granted).toEqual(["a", "b", "c", "d"]);
    expect([gate.active, gate.queued]).toEqual([0, 0]);
  });

  it("forgets a request cancelled while it waits", () => {
    const gate = new StartGate(1);
    const granted: string[] = [];
    gate.acquire(() => granted.push("a"));
    const cancelB = gate.acquire(() => granted.push("b"));
    gate.acquire(() => granted.push("c"));
    cancelB();
    gate.release();
    expect(granted).toEqual(["a", "c"]);
  });

  it("reads PI_ORCH_START_CONCURRENCY: a whole number of 1 or more, else the default of two per CPU", () => {
    expect(defaultStartConcurrency(1)).toBe(2);
    expect(defaultStartConcurrency(8)).toBe(16);
    const cases: [string | undefined, number | null][] = [
      [undefined, 4],
      [" ", 4],
      ["1", 1],
      ["12", 12],
      ["0", null],
      ["-3", null],
      ["2.5", null],
      ["many", null],
    ];
    for (const [text, want] of cases) expect([text, parseStartConcurrency(text, 2)]).toEqual([text, want]);
    expect(() => new StartGate(0)).toThrow(RangeError);
  });
});
