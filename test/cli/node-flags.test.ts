import { describe, expect, it } from "vitest";
import {
  DEFAULT_SUPERVISOR_NODE_FLAGS,
  nodeFlagsHint,
  nodeFlagsProblem,
  supervisorNodeFlags,
} from "../../cli/serve/node-flags.js";

describe("node flags of a supervisor pi-orch starts", () => {
  it.each([
    { env: undefined, want: [...DEFAULT_SUPERVISOR_NODE_FLAGS] },
    { env: "", want: [] },
    { env: "   ", want: [] },
    { env: "--max-semi-space-size=4", want: ["--max-semi-space-size=4"] },
    {
      env: "  --max-semi-space-size=8   --single-threaded-gc ",
      want: ["--max-semi-space-size=8", "--single-threaded-gc"],
    },
  ])("PI_ORCH_SUPERVISOR_NODE_FLAGS=$env gives $want", ({ env, want }) => {
    expect(supervisorNodeFlags(env === undefined ? {} : { PI_ORCH_SUPERVISOR_NODE_FLAGS: env })).toEqual(want);
  });

  it("defaults to a 2 MB young generation, scavenged on the main thread alone", () => {
    expect(DEFAULT_SUPERVISOR_NODE_FLAGS).toEqual(["--max-semi-space-size=2", "--no-parallel-scavenge"]);
  });

  it.each([
    { env: undefined, stray: null },
    { env: "", stray: null },
    { env: "--max-semi-space-size=2 --single-threaded-gc", stray: null },
    { env: "--require=./preload.cjs", stray: null },
    { env: "2", stray: "2" },
    { env: "--max-semi-space-size 2", stray: "2" },
    { env: "-r ./preload.cjs", stray: "./preload.cjs" },
  ])("PI_ORCH_SUPERVISOR_NODE_FLAGS=$env is refused for $stray", ({ env, stray }) => {
    const problem = nodeFlagsProblem(env === undefined ? {} : { PI_ORCH_SUPERVISOR_NODE_FLAGS: env });
    if (stray === null) return expect(problem).toBeNull();
    expect(problem).toContain(
      `PI_ORCH_SUPERVISOR_NODE_FLAGS=${JSON.stringify(env)} has ${JSON.stringify(stray)}, which is not a node flag`,
    );
    expect(problem).toContain('value after "="');
  });

  it("names the variable in a failed start's message only when it is set", () => {
    expect(nodeFlagsHint({})).toBe("");
    expect(nodeFlagsHint({ PI_ORCH_SUPERVISOR_NODE_FLAGS: "--bogus-flag" })).toBe(
      '; it was started with node flags from PI_ORCH_SUPERVISOR_NODE_FLAGS="--bogus-flag": fix or unset it',
    );
  });
});
