/**
 * What a built-in model's request says about thinking, ours against pi 1.6.0 on the same
 * script: the `openai` and `anthropic` providers pointed at the mock model server (pi's
 * models.json `baseUrl` override of a built-in provider), one prompt at each thinking
 * level, and the request's reasoning fields compared (`reasoning` of the Responses API;
 * `thinking` and `output_config` of the Messages API). Models from pi 1.6.0's catalogue:
 * ones that map levels to their own words (`off` → "none", `xhigh`, `max`), an adaptive
 * Claude and one with a thinking budget.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { PI_BIN, RpcWorker, tempDir } from "../support/rpc-worker.js";
import { NODE22, PI16_CLI, pi16Installed } from "../support/upstream-pi16.js";

const BIN = { ours: [process.execPath, PI_BIN], "pi 1.6.0": [NODE22, PI16_CLI] } as const;

const { server, dirs } = useOracleFixture();

/** The reasoning fields of each request `impl` sends for one prompt per level. */
async function reasoningFields(impl: keyof typeof BIN, model: string, levels: string[]): Promise<unknown[]> {
  const dir = tempDir("thinking-wire-");
  dirs.push(dir);
  const agentDir = join(dir.path, "agent");
  mkdirSync(agentDir, { recursive: true });
  writeFileSync(
    join(agentDir, "models.json"),
    JSON.stringify({ providers: { openai: { baseUrl: `${server.url}/v1` }, anthropic: { baseUrl: server.url } } }),
  );
  const w = new RpcWorker(["--mode", "rpc", "--no-session", "--model", model], {
    cwd: dir.path,
    env: {
      PATH: process.env.PATH,
      HOME: dir.path,
      PI_CODING_AGENT_DIR: agentDir,
      PI_ORCH_HOME: undefined,
      PI_OFFLINE: "1",
      OPENAI_API_KEY: "o",
      ANTHROPIC_API_KEY: "a",
    },
    bin: [...BIN[impl]],
  });
  const out: unknown[] = [];
  for (const level of levels) {
    const set = await w.request({ type: "set_thinking_level", level });
    expect(set.success, `${impl} ${model} ${level}: ${JSON.stringify(set)}\n${w.stderr.join("")}`).toBe(true);
    server.enqueue({ text: "ok" });
    const before = server.requests.length;
    const from = w.received.length;
    await w.request({ type: "prompt", message: `level ${level}` });
    await w.waitFor((l) => l.type === "agent_end", 20_000, from);
    const body = server.requests[before]?.body ?? {};
    // The level set inside the conversation (a mid-conversation effort model's last marker or
    // configuration update), if any.
    const marker = (body.messages ?? body.input)?.at(-1) as Record<string, unknown> | undefined;
    out.push({
      level,
      reasoning: body.reasoning,
      thinking: body.thinking,
      output_config: body.output_config,
      marker:
        marker?.role === "system" ? marker.output_config : marker?.type === "configuration_update" ? marker : undefined,
    });
  }
  w.kill();
  return out;
}

describe.skipIf(!pi16Installed)("thinking on the wire, ours and pi 1.6.0", () => {
  it.each([
    ["openai/gpt-5.4", ["off", "low", "medium", "high", "xhigh"]],
    ["openai/o3", ["low", "high"]],
    ["anthropic/claude-opus-4-7", ["off", "low", "high", "xhigh", "max"]],
    ["anthropic/claude-haiku-4-5", ["off", "low", "high"]],
    // Effort inside the conversation (`supportsMidConvoEffort`): a fixed effort for the request
    // ("low" for Claude, "medium" for GPT), the level in its marker or configuration update.
    ["anthropic/claude-opus-5-5", ["low", "xhigh", "max"]],
    ["openai/gpt-6.2-sol", ["low", "xhigh", "max"]],
  ])(
    "%s at %j: the same reasoning fields",
    async (model, levels) => {
      const ours = await reasoningFields("ours", model, levels);
      const theirs = await reasoningFields("pi 1.6.0", model, levels);
      expect(ours).toEqual(theirs);
    },
    60_000,
  );
});
