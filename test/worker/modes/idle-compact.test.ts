import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { compactWhenIdle } from "../../../worker/modes/idle-compact.js";

const CHILD = resolve(import.meta.dirname, "../../support/idle-compact-child.ts");

describe("compactWhenIdle", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  const start = (busy: () => boolean = () => false, collect = vi.fn(async () => undefined)) => ({
    collect,
    idle: compactWhenIdle(100, busy, { now: Date.now, collect }),
  });

  it("collects once, after the quiet period, and never again", () => {
    const { collect } = start();
    vi.advanceTimersByTime(99);
    expect(collect).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(collect).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(10_000);
    expect(collect).toHaveBeenCalledTimes(1);
  });

  it("counts the quiet period from the last activity", () => {
    const { collect, idle } = start();
    vi.advanceTimersByTime(60);
    idle.activity();
    vi.advanceTimersByTime(99);
    expect(collect).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(collect).toHaveBeenCalledTimes(1);
  });

  it("waits while a command is being handled, however quiet", () => {
    let busy = true;
    const { collect } = start(() => busy);
    vi.advanceTimersByTime(1_000);
    expect(collect).not.toHaveBeenCalled();
    busy = false;
    vi.advanceTimersByTime(100);
    expect(collect).toHaveBeenCalledTimes(1);
  });

  it("does nothing once stopped", () => {
    const { collect, idle } = start();
    vi.advanceTimersByTime(50);
    idle.stop();
    vi.advanceTimersByTime(1_000);
    expect(collect).not.toHaveBeenCalled();
  });

  it("takes a failed collection as no collection", async () => {
    const collect = vi.fn(async () => {
      throw new Error("no inspector in this node");
    });
    start(() => false, collect);
    vi.advanceTimersByTime(100);
    expect(collect).toHaveBeenCalledTimes(1);
    // An unhandled rejection would fail the run.
    await vi.runAllTimersAsync();
  });
});

describe("collectAllAvailableGarbage", () => {
  it("gives back the young generation's pages, and the process still ends by itself", () => {
    const r = spawnSync(process.execPath, ["--import", "jiti/register", CHILD], { encoding: "utf8", timeout: 60_000 });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const { before, after } = JSON.parse(r.stdout) as { before: number; after: number };
    expect(after).toBeLessThan(before / 2);
  });
});
