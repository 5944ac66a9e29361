/**
 * The environment pi 1.6.0 gives the commands it runs, ours against the real 1.6.0 on the
 * same mock model: the model's `bash` tool sees `AI_AGENT=pi`, `PI_CODING_AGENT=true` and
 * the session's `PI_SESSION_ID`, `PI_SESSION_FILE`, `PI_PROVIDER`, `PI_MODEL`,
 * `PI_REASONING_LEVEL` (resolved per command); the RPC `bash` command sees only the process
 * markers. Both sides keep their files in the agent directory `PI_CODING_AGENT_DIR` names.
 * One deliberate difference: our tool commands never see the provider keys.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { mockModelsJson } from "../support/upstream-oracle.js";
import { RpcWorker, tempDir } from "../support/rpc-worker.js";
import { NODE22, PI16_CLI, pi16Installed as installed } from "../support/upstream-pi16.js";

type Impl = "ours" | "pi 1.6.0";
const IMPLS: Impl[] = ["ours", "pi 1.6.0"];

// Prints the variables pi sets (and a key, to show ours keeps it out) one per line, sorted.
const PRINT_ENV =
  "env | grep -E '^(AI_AGENT|PI_CODING_AGENT|PI_SESSION_ID|PI_SESSION_FILE|PI_PROVIDER|PI_MODEL|PI_REASONING_LEVEL|ANTHROPIC_API_KEY)=' | sort";

const { server, dirs } = useOracleFixture();

/**
 * `impl` in RPC mode on the mock model (a reasoning one), its agent directory given by
 * PI_CODING_AGENT_DIR only; `prepare` writes more into that directory before the start.
 */
function start(
  impl: Impl,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  prepare: (agentDir: string) => void = () => undefined,
): { w: RpcWorker; agentDir: string } {
  const agentDir = tempDir("pi16-env-agent-");
  const project = tempDir("pi16-env-project-");
  dirs.push(agentDir, project);
  const models = mockModelsJson(server) as { providers: { mock: { models: Record<string, unknown>[] } } };
  models.providers.mock.models[0]!.reasoning = true;
  writeFileSync(join(agentDir.path, "models.json"), JSON.stringify(models));
  prepare(agentDir.path);
  const w = new RpcWorker(["--mode", "rpc", "--provider", "mock", "--model", "mock-1", ...args], {
    cwd: project.path,
    env: {
      PI_ORCH_HOME: undefined,
      PI_CODING_AGENT_DIR: agentDir.path,
      PI_OFFLINE: "1",
      ANTHROPIC_API_KEY: "sk-ant-not-for-tools",
      ...env,
    },
    ...(impl === "pi 1.6.0" ? { bin: [NODE22, PI16_CLI] } : {}),
  });
  return { w, agentDir: agentDir.path };
}

/** The variables a command printed with PRINT_ENV. */
function parseEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.trim().split("\n").filter(Boolean)) {
    const eq = line.indexOf("=");
    out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}

/** Have the model run PRINT_ENV with its bash tool; what the command printed. */
async function modelBashEnv(w: RpcWorker): Promise<Record<string, string>> {
  server.enqueue({ toolCalls: [{ name: "bash", arguments: { command: PRINT_ENV } }] }, { text: "done" });
  const from = w.received.length;
  expect((await w.request({ type: "prompt", message: "print the environment" })).success).toBe(true);
  const end = await w.event("tool_execution_end", 30_000, from);
  await w.event("agent_end", 30_000, from);
  return parseEnv(end.result.content[0].text);
}

describe.skipIf(!installed)("the environment of commands, as pi 1.6.0 sets it", () => {
  it("the model's bash commands see AI_AGENT, PI_CODING_AGENT and the session's five variables, with 1.6.0's values", async () => {
    const seen: Record<string, unknown> = {};
    for (const impl of IMPLS) {
      const { w, agentDir } = start(impl, ["--thinking", "high"]);
      const state = (await w.request({ type: "get_state" })).data;
      // The session goes where pi keeps it: <agent dir>/sessions/<encoded cwd>/.
      expect(state.sessionFile.startsWith(join(agentDir, "sessions", "--")), impl).toBe(true);
      const first = await modelBashEnv(w);
      expect(first.PI_SESSION_ID, impl).toBe(state.sessionId);
      expect(first.PI_SESSION_FILE, impl).toBe(state.sessionFile);
      // Resolved when each command starts: a thinking change shows in the next one.
      expect((await w.request({ type: "set_thinking_level", level: "low" })).success).toBe(true);
      const second = await modelBashEnv(w);
      const { ANTHROPIC_API_KEY, ...pis } = first;
      if (impl === "ours") expect(ANTHROPIC_API_KEY, "keys stay out of our tools' environment").toBeUndefined();
      seen[impl] = {
        first: { ...pis, PI_SESSION_ID: "<id>", PI_SESSION_FILE: "<file>" },
        secondLevel: second.PI_REASONING_LEVEL,
      };
    }
    expect(seen["pi 1.6.0"]).toEqual({
      first: {
        AI_AGENT: "pi",
        PI_CODING_AGENT: "true",
        PI_MODEL: "mock-1",
        PI_PROVIDER: "mock",
        PI_REASONING_LEVEL: "high",
        PI_SESSION_FILE: "<file>",
        PI_SESSION_ID: "<id>",
      },
      secondLevel: "low",
    });
    expect(seen.ours).toEqual(seen["pi 1.6.0"]);
  }, 90_000);

  it("without a session file PI_SESSION_FILE is unset (an inherited one removed); RPC bash gets only the process markers", async () => {
    const seen: Record<string, unknown> = {};
    for (const impl of IMPLS) {
      const { w } = start(impl, ["--no-session"], { PI_SESSION_FILE: "/stale/parent.jsonl", PI_MODEL: "stale-model" });
      const state = (await w.request({ type: "get_state" })).data;
      const tool = await modelBashEnv(w);
      expect(tool.PI_SESSION_ID, impl).toBe(state.sessionId);
      const rpc = await w.request({ type: "bash", command: PRINT_ENV });
      expect(rpc.success, impl).toBe(true);
      const { ANTHROPIC_API_KEY: _toolKey, ...toolVars } = tool;
      const { ANTHROPIC_API_KEY: _rpcKey, ...rpcVars } = parseEnv(rpc.data.output);
      seen[impl] = { tool: { ...toolVars, PI_SESSION_ID: "<id>" }, rpc: rpcVars };
    }
    expect(seen["pi 1.6.0"]).toEqual({
      tool: {
        AI_AGENT: "pi",
        PI_CODING_AGENT: "true",
        PI_MODEL: "mock-1",
        PI_PROVIDER: "mock",
        PI_REASONING_LEVEL: "medium",
        PI_SESSION_ID: "<id>",
      },
      // The user's own command: the worker's environment as it is, markers included.
      rpc: { AI_AGENT: "pi", PI_CODING_AGENT: "true", PI_MODEL: "stale-model", PI_SESSION_FILE: "/stale/parent.jsonl" },
    });
    expect(seen.ours).toEqual(seen["pi 1.6.0"]);
  }, 90_000);

  it("a key a pi user stored in <agent dir>/auth.json comes before models.json's; --api-key before both; !command keys run", async () => {
    const auth = (key: string) => (dir: string) =>
      writeFileSync(join(dir, "auth.json"), JSON.stringify({ mock: { type: "api_key", key } }));
    const cases: [string, string[], (dir: string) => void][] = [
      ["no auth.json", [], () => undefined],
      ["a stored key", [], auth("auth-key")],
      ["a stored !command", [], auth("!echo cmd-key")],
      ["--api-key over a stored key", ["--api-key", "cli-key"], auth("auth-key")],
    ];
    const seen: Record<string, Record<string, unknown>> = {};
    for (const impl of IMPLS) {
      seen[impl] = {};
      for (const [name, args, prepare] of cases) {
        const { w } = start(impl, ["--no-session", ...args], {}, prepare);
        const before = server.requests.length;
        server.enqueue({ text: "ok" });
        expect((await w.request({ type: "prompt", message: "hi" })).success).toBe(true);
        await w.event("agent_end", 30_000);
        seen[impl]![name] = server.requests[before]?.headers.authorization;
        w.closeStdin();
        await w.exited;
      }
    }
    expect(seen["pi 1.6.0"]).toEqual({
      "no auth.json": "Bearer mock-key",
      "a stored key": "Bearer auth-key",
      "a stored !command": "Bearer cmd-key",
      "--api-key over a stored key": "Bearer cli-key",
    });
    expect(seen.ours).toEqual(seen["pi 1.6.0"]);
  }, 120_000);
});
