import { homedir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { agentDir, piOrchHome } from "../../shared/paths.js";

describe("agentDir: where a worker keeps models.json, settings, auth, sessions and trust", () => {
  it.each([
    ["nothing set: pi's default", {}, join(homedir(), ".pi", "agent")],
    ["pi's PI_CODING_AGENT_DIR", { PI_CODING_AGENT_DIR: "/pi/agent" }, "/pi/agent"],
    ["a leading ~ in PI_CODING_AGENT_DIR, as pi expands it", { PI_CODING_AGENT_DIR: "~/alt" }, join(homedir(), "alt")],
    ["PI_ORCH_HOME points a fleet elsewhere", { PI_ORCH_HOME: "/fleet" }, "/fleet"],
    [
      "PI_ORCH_HOME wins over PI_CODING_AGENT_DIR",
      { PI_ORCH_HOME: "/fleet", PI_CODING_AGENT_DIR: "/pi/agent" },
      "/fleet",
    ],
    ["an empty variable counts as unset", { PI_ORCH_HOME: "", PI_CODING_AGENT_DIR: "/pi/agent" }, "/pi/agent"],
  ])("%s", (_name, env, expected) => {
    expect(agentDir(env)).toBe(expected);
  });

  it("leaves the supervisor's home where it was: PI_ORCH_HOME, else ~/.pi-orch", () => {
    expect(piOrchHome({ PI_CODING_AGENT_DIR: "/pi/agent" })).toBe(join(homedir(), ".pi-orch"));
    expect(piOrchHome({ PI_ORCH_HOME: "/fleet" })).toBe("/fleet");
  });
});
