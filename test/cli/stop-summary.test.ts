import { describe, expect, it } from "vitest";
import { shutdownOutcome, shutdownSummary } from "../../cli/commands/shutdown.js";
import { stopSummary } from "../../cli/commands/stop.js";
import type { AgentStatus } from "../../shared/schema/agent.js";
import { info } from "./tui/helpers.js";

const agents = (...pairs: [string, AgentStatus][]) => pairs.map(([name, status]) => info(name, status));

describe("what stop --all says", () => {
  it.each([
    { before: agents(["a", "idle"], ["b", "busy"]), want: "stopped 2 agents: a, b" },
    { before: agents(["a", "idle"]), want: "stopped 1 agent: a" },
    {
      before: agents(["a", "stopped"], ["b", "idle"], ["c", "failed"]),
      want: "stopped 1 agent: b (already down: a, c)",
    },
    { before: agents(["a", "stopped"]), want: "no running agents to stop (already down: a)" },
    { before: [], want: "no running agents to stop" },
  ])("$want", ({ before, want }) => {
    const after = before.map((a) => ({ ...a, status: a.status === "failed" ? "failed" : ("stopped" as AgentStatus) }));
    expect(stopSummary(before, after)).toBe(want);
  });

  it("counts an agent spawned between the list and the stop as stopped", () => {
    expect(stopSummary(agents(["a", "stopped"]), agents(["a", "stopped"], ["new", "stopped"]))).toBe(
      "stopped 1 agent: new (already down: a)",
    );
  });
});

describe("what shutdown says", () => {
  it.each([
    {
      before: agents(["a", "idle"], ["b", "stopped"], ["c", "busy"]),
      want: "supervisor stopped; stopped 2 agents: a, c",
    },
    { before: agents(["a", "busy"]), want: "supervisor stopped; stopped 1 agent: a" },
    { before: agents(["a", "stopped"], ["b", "failed"]), want: "supervisor stopped; no agent was running" },
    { before: [], want: "supervisor stopped; no agent was running" },
  ])("$want", ({ before, want }) => {
    expect(
      shutdownSummary(
        before,
        before.map((a) => a.name),
      ),
    ).toBe(want);
  });
});

describe("what shutdown --json says: the same split as the text", () => {
  it.each([
    {
      before: agents(["a", "idle"], ["b", "stopped"], ["c", "busy"]),
      want: { stopped: ["a", "c"], alreadyDown: ["b"] },
    },
    { before: agents(["a", "stopped"], ["b", "failed"]), want: { stopped: [], alreadyDown: ["a", "b"] } },
    { before: [], want: { stopped: [], alreadyDown: [] } },
  ])("$want.stopped stopped, $want.alreadyDown already down", ({ before, want }) => {
    expect(
      shutdownOutcome(
        before,
        before.map((a) => a.name),
      ),
    ).toEqual(want);
  });

  it("counts an agent spawned after the list as stopped by the shutdown", () => {
    expect(shutdownOutcome(agents(["a", "stopped"]), ["a", "new"])).toEqual({ stopped: ["new"], alreadyDown: ["a"] });
  });
});
