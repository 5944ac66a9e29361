import { describe, expect, it } from "vitest";
import { generateName, resolveAgentRef, assertValidName } from "../../supervisor/names.js";
import { buildWorkerArgv, splitCommandLine } from "../../supervisor/worker-command.js";

describe("names", () => {
  it("generates two-word names that are not taken", () => {
    const name = generateName(new Set());
    expect(name).toMatch(/^[a-z]+-[a-z]+$/);
    const always0 = () => 0;
    expect(generateName(new Set(["amber-otter"]), always0)).toBe("amber-otter-2");
  });

  it("finds agents by name, id, or a unique id prefix", () => {
    const agents = [
      { name: "x", id: "abc123" },
      { name: "y", id: "abd456" },
    ];
    expect(resolveAgentRef(agents, "y").id).toBe("abd456");
    expect(resolveAgentRef(agents, "abc").name).toBe("x");
    expect(() => resolveAgentRef(agents, "ab")).toThrow(/matches 2 agents: x \(abc123\), y \(abd456\)/);
    expect(() => resolveAgentRef(agents, "zz")).toThrow(/no agent named "zz".*pi-orch list/);
  });

  it("rejects names that cannot be file names", () => {
    expect(() => assertValidName("../x")).toThrow(/invalid agent name/);
    expect(() => assertValidName("fix-login_2")).not.toThrow();
  });
});

describe("worker command", () => {
  it("splits like a shell without expanding anything", () => {
    expect(splitCommandLine(`node "/a b/pi.js" --mode rpc 'it''s' a\\ b`)).toEqual(["node", "/a b/pi.js", "--mode", "rpc", "its", "a b"]);
    expect(() => splitCommandLine(`pi "open`)).toThrow(/unterminated/);
  });

  it("appends provider, model and --session to custom commands too", () => {
    expect(buildWorkerArgv({ workerCommand: ["pi", "--mode", "rpc"], model: "m" }, "/s.jsonl", ["x"])).toEqual({
      file: "pi",
      args: ["--mode", "rpc", "--model", "m", "--session", "/s.jsonl"],
    });
    expect(buildWorkerArgv({}, null, ["node", "pi.js", "--mode", "rpc"])).toEqual({ file: "node", args: ["pi.js", "--mode", "rpc"] });
  });
});
