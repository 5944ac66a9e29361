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
    expect(splitCommandLine(`node "/a b/pi.js" --mode rpc 'it''s' a\\ b`)).toEqual([
      "node",
      "/a b/pi.js",
      "--mode",
      "rpc",
      "its",
      "a b",
    ]);
    expect(() => splitCommandLine(`pi "open`)).toThrow(/unterminated/);
  });

  it("appends provider, model and --session to custom commands too", () => {
    expect(buildWorkerArgv({ workerCommand: ["pi", "--mode", "rpc"], model: "m" }, "/s.jsonl", ["x"])).toEqual({
      file: "pi",
      args: ["--mode", "rpc", "--model", "m", "--session", "/s.jsonl"],
      env: {},
    });
    expect(buildWorkerArgv({}, null, ["node", "pi.js", "--mode", "rpc"])).toEqual({
      file: "node",
      args: ["pi.js", "--mode", "rpc"],
      env: {},
    });
  });

  it("passes an agent's packages as pi's -e SOURCE, before its extra arguments", () => {
    expect(
      buildWorkerArgv(
        { workerCommand: ["pi", "--mode", "rpc"], packages: ["npm:tools", "/abs/pkg"], extraArgs: ["--trust"] },
        null,
        ["x"],
      ).args,
    ).toEqual(["--mode", "rpc", "-e", "npm:tools", "-e", "/abs/pkg", "--trust"]);
  });

  it.each([
    {
      name: "our pi, --api-key in extraArgs",
      spec: { extraArgs: ["--api-key", "K", "--trust"] },
      args: ["pi.js", "--mode", "rpc", "--trust"],
      env: { PI_API_KEY: "K" },
    },
    {
      name: "our pi, --api-key=K",
      spec: { provider: "x", extraArgs: ["--api-key=K"] },
      args: ["pi.js", "--mode", "rpc", "--provider", "x"],
      env: { PI_API_KEY: "K" },
    },
    {
      name: "custom command with --provider",
      spec: { workerCommand: ["pi", "--mode", "rpc", "--api-key", "K"], provider: "anthropic" },
      args: ["--mode", "rpc", "--provider", "anthropic"],
      env: { PI_API_KEY: "K", ANTHROPIC_API_KEY: "K" },
    },
    {
      name: "custom command with --model P/ID",
      spec: { workerCommand: ["pi", "--mode", "rpc", "--model=openrouter/x", "--api-key=K"] },
      args: ["--mode", "rpc", "--model=openrouter/x"],
      env: { PI_API_KEY: "K", OPENROUTER_API_KEY: "K" },
    },
    { name: "no key", spec: { workerCommand: ["pi", "--api-key"] }, args: ["--api-key"], env: {} },
  ])("moves --api-key out of argv into the environment: $name", ({ spec, args, env }) => {
    const built = buildWorkerArgv(spec, null, ["node", "pi.js", "--mode", "rpc"]);
    expect(built.args).toEqual(args);
    expect(built.env).toEqual(env);
  });

  it("refuses a key for a custom command whose provider it cannot tell", () => {
    expect(() => buildWorkerArgv({ workerCommand: ["pi", "--api-key", "K"] }, null, [])).toThrow(
      /names no provider.*environment pi-orch serve runs with/,
    );
    expect(() => buildWorkerArgv({ workerCommand: ["pi", "--api-key", "K"], provider: "mine" }, null, [])).toThrow(
      /provider "mine" has no known variable/,
    );
  });
});
