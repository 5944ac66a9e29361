import { describe, expect, it } from "vitest";
import { decideRestart, type RestartHistory } from "../../supervisor/restart-policy.js";
import type { RestartKind, WorkerExit } from "../../shared/schema/agent.js";
import { DEFAULT_RESTART_POLICY } from "../../supervisor/types.js";

const NOW = 1_000_000;
const crash: WorkerExit = { code: 1, signal: null, reason: "exit", at: NOW };
const clean: WorkerExit = { code: 0, signal: null, reason: "exit", at: NOW };
const killed: WorkerExit = { code: null, signal: "SIGKILL", reason: "exit", at: NOW };
const hung: WorkerExit = { code: null, signal: "SIGKILL", reason: "unresponsive", at: NOW };
type Case = RestartHistory & { startedAt: number | null };
const fresh: Case = { restartTimes: [], backoffStep: 0, startedAt: NOW - 1_000 };
const times = (n: number, ago = 1_000) => Array.from({ length: n }, (_, i) => NOW - ago - i);

describe("decideRestart", () => {
  const table: [string, RestartKind, Case, WorkerExit, ReturnType<typeof decideRestart>["action"], number?][] = [
    ["transient restarts after a crash", "transient", fresh, crash, "restart", 500],
    ["transient restarts after a signal", "transient", fresh, killed, "restart", 500],
    [
      "transient restarts an unresponsive worker even if it exited 0",
      "transient",
      fresh,
      { ...hung, code: 0, signal: null },
      "restart",
      500,
    ],
    ["transient leaves a clean exit down", "transient", fresh, clean, "stay_down"],
    ["permanent restarts a clean exit", "permanent", fresh, clean, "restart", 500],
    ["temporary never restarts", "temporary", fresh, crash, "stay_down"],
    ["backoff doubles per unhealthy restart", "transient", { ...fresh, backoffStep: 3 }, crash, "restart", 4_000],
    ["backoff is capped at 30 s", "transient", { ...fresh, backoffStep: 20 }, crash, "restart", 30_000],
    [
      "backoff resets after 60 s healthy",
      "transient",
      { restartTimes: [], backoffStep: 5, startedAt: NOW - 60_000 },
      crash,
      "restart",
      500,
    ],
    ["4 restarts in the period still restart", "transient", { ...fresh, restartTimes: times(4) }, crash, "restart"],
    ["5 restarts in the period give up", "transient", { ...fresh, restartTimes: times(5) }, crash, "give_up"],
    [
      "restarts older than the period do not count",
      "transient",
      { ...fresh, restartTimes: times(5, 61_000) },
      crash,
      "restart",
    ],
    [
      "a worker that never started backs off",
      "transient",
      { restartTimes: [], backoffStep: 2, startedAt: null },
      { ...crash, reason: "spawn_error" },
      "restart",
      2_000,
    ],
  ];
  for (const [title, restart, history, exit, action, delay] of table) {
    it(title, () => {
      const decision = decideRestart({ ...DEFAULT_RESTART_POLICY, restart }, history, exit, NOW, history.startedAt);
      expect(decision.action).toBe(action);
      if (delay !== undefined && decision.action === "restart") expect(decision.delayMs).toBe(delay);
    });
  }

  it("says how many restarts in how long when it gives up", () => {
    const decision = decideRestart(
      DEFAULT_RESTART_POLICY,
      { ...fresh, restartTimes: times(5) },
      crash,
      NOW,
      fresh.startedAt,
    );
    expect(decision).toEqual({
      action: "give_up",
      reason: "failed after 5 restarts in 60s",
      history: { restartTimes: times(5), backoffStep: 0 },
    });
  });

  it("returns the new history: this restart added, the next backoff step", () => {
    const decision = decideRestart(
      DEFAULT_RESTART_POLICY,
      { ...fresh, backoffStep: 2, restartTimes: [NOW - 5] },
      crash,
      NOW,
      fresh.startedAt,
    );
    expect(decision).toEqual({
      action: "restart",
      delayMs: 2_000,
      history: { restartTimes: [NOW - 5, NOW], backoffStep: 3 },
    });
  });

  it("prunes restarts older than the period from the history, whatever the decision", () => {
    const old = [NOW - 61_000, NOW - 70_000];
    const down = decideRestart(
      { ...DEFAULT_RESTART_POLICY, restart: "temporary" },
      { restartTimes: [...old, NOW - 10], backoffStep: 4 },
      crash,
      NOW,
      null,
    );
    expect(down.history).toEqual({ restartTimes: [NOW - 10], backoffStep: 4 });
    const healthy = decideRestart(
      DEFAULT_RESTART_POLICY,
      { restartTimes: old, backoffStep: 4 },
      crash,
      NOW,
      NOW - 60_000,
    );
    expect(healthy).toMatchObject({
      action: "restart",
      delayMs: 500,
      history: { restartTimes: [NOW], backoffStep: 1 },
    });
  });
});
