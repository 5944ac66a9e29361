import { describe, expect, it } from "vitest";
import { DEFAULT_SUPERVISOR_NODE_FLAGS, supervisorNodeFlags } from "../../cli/serve/node-flags.js";

describe("node flags of a supervisor pi-orch starts", () => {
  it.each([
    { env: undefined, want: [...DEFAULT_SUPERVISOR_NODE_FLAGS] },
    { env: "", want: [] },
    { env: "   ", want: [] },
    { env: "--max-semi-space-size=4", want: ["--max-semi-space-size=4"] },
    { env: "  --max-semi-space-size=8   --single-threaded-gc ", want: ["--max-semi-space-size=8", "--single-threaded-gc"] },
  ])("PI_ORCH_SUPERVISOR_NODE_FLAGS=$env gives $want", ({ env, want }) => {
    expect(supervisorNodeFlags(env === undefined ? {} : { PI_ORCH_SUPERVISOR_NODE_FLAGS: env })).toEqual(want);
  });

  it("defaults to a 2 MB young generation", () => {
    expect(DEFAULT_SUPERVISOR_NODE_FLAGS).toEqual(["--max-semi-space-size=2"]);
  });
});
