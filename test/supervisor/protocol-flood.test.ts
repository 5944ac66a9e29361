import { describe, expect, it } from "vitest";
import {
  closeWindow,
  NO_FLOOD,
  noteBadLine,
  type FloodLimits,
  type FloodState,
} from "../../supervisor/protocol-flood.js";

const limits: FloodLimits = { perWindow: 2, windowMs: 1000, restartAfterDropped: 5 };

/** Feed bad lines at the given times (and window ends as "tick@T"); collect the actions. */
function play(steps: (number | string)[]): { actions: string[]; state: FloodState } {
  let state = NO_FLOOD;
  const actions: string[] = [];
  for (const step of steps) {
    if (typeof step === "string") {
      const closed = closeWindow(state, Number(step.slice(5)));
      state = closed.state;
      actions.push(
        closed.calm ? `calm${closed.summarise ? `:${closed.summarise}` : ""}` : `summary:${closed.summarise}`,
      );
    } else {
      const noted = noteBadLine(state, limits, step);
      state = noted.state;
      actions.push(noted.floodStarted ? `${noted.action}!` : noted.action);
    }
  }
  return { actions, state };
}

describe("protocol flood limits", () => {
  it.each([
    { name: "a few lines are each reported", steps: [0, 10], actions: ["report", "report"] },
    {
      name: "past perWindow the rest are dropped; the first drop starts the flood",
      steps: [0, 1, 2, 3],
      actions: ["report", "report", "drop!", "drop"],
    },
    {
      name: "a quiet window ends by itself: the allowance is back",
      steps: [0, 1, 1500, 1501],
      actions: ["report", "report", "report", "report"],
    },
    {
      name: "while flooding every line is dropped, one summary per window; a window without drops ends it",
      steps: [0, 1, 2, 3, "tick@1000", 1001, "tick@2000", "tick@3000", 3001],
      actions: ["report", "report", "drop!", "drop", "summary:2", "drop", "summary:1", "calm", "report"],
    },
    {
      name: "the drop that reaches the limit restarts, once",
      steps: [0, 1, 2, 3, 4, 5, 6, 7],
      actions: ["report", "report", "drop!", "drop", "drop", "drop", "restart", "drop"],
    },
  ])("$name", ({ steps, actions }) => {
    expect(play(steps).actions).toEqual(actions);
  });

  it("counts dropped lines over the worker's life, across windows", () => {
    expect(play([0, 1, 2, "tick@1000", 1001, "tick@2000", "tick@3000"]).state.totalDropped).toBe(2);
  });
});
