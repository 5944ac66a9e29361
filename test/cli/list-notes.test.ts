import { describe, expect, it } from "vitest";
import { supervisorExitNote } from "../../cli/commands/list.js";

const exited = (name: string) => ({ name, status: "stopped" as const, statusReason: "supervisor exited" });

describe("the note under pi-orch list for agents a supervisor's exit stopped", () => {
  it.each([
    { agents: [], want: null },
    {
      agents: [
        { name: "a", status: "stopped" as const, statusReason: "stopped by request" },
        { name: "b", status: "idle" as const },
      ],
      want: null,
    },
    {
      agents: [exited("k1")],
      want: "k1 was stopped when the supervisor exited; pi-orch restart k1 brings it back with its session",
    },
    {
      agents: [exited("k1"), { name: "x", status: "idle" as const }, exited("k2")],
      want: "k1, k2 were stopped when the supervisor exited; pi-orch restart NAME brings one back with its session (all of them: pi-orch shutdown, then pi-orch serve --resume)",
    },
  ])("$want", ({ agents, want }) => {
    expect(supervisorExitNote(agents)).toBe(want);
  });
});
