/**
 * `--provider X --model Y` (and settings' defaultProvider / defaultModel) naming a
 * provider that an extension registers with `pi.registerProvider`: pi resolves the model
 * after extensions load, so the worker starts on it. Each case runs the same command line
 * and the same extension on our worker and on upstream pi 0.73.1 (the oracle), against
 * the mock model server, in RPC mode and in print mode.
 * Run `npm run build` first; upstream cases skip when test/upstream is not installed.
 */
import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { PI_BIN, RpcWorker } from "../support/rpc-worker.js";
import { useOracleFixture } from "../support/oracle-fixture.js";

const UPSTREAM = resolve(import.meta.dirname, "../upstream/node_modules/@mariozechner/pi-coding-agent/dist/cli.js");
const installed = existsSync(UPSTREAM);
const IMPLS = (installed ? ["ours", "upstream"] : ["ours"]) as Implementation[];

type Implementation = "ours" | "upstream";
type Line = Record<string, any>;

const { server, dir } = useOracleFixture();
let home: string;
let project: string;

beforeEach(() => {
  home = dir("pi-extprov-home-");
  project = dir("pi-extprov-project-");
});

/** An extension registering `ext-mock` (full model definitions, as upstream requires) on the mock server. */
function extension(): string {
  const path = join(project, "ext-mock.ts");
  writeFileSync(
    path,
    `export default (pi: any) => {
       pi.registerProvider("ext-mock", {
         baseUrl: ${JSON.stringify(`${server.url}/v1`)}, api: "openai-completions", apiKey: "EXT_MOCK_KEY",
         models: [
           { id: "ext-1", name: "Ext One", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 64000, maxTokens: 2048 },
           { id: "ext-2", name: "Ext Two", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 32000, maxTokens: 1024 },
         ],
       });
     };`,
  );
  return path;
}

function envFor(impl: Implementation): NodeJS.ProcessEnv {
  const keys = { EXT_MOCK_KEY: "ext-key-not-secret", ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" };
  return impl === "ours" ? { ...keys, PI_ORCH_HOME: home } : { ...keys, PI_CODING_AGENT_DIR: home, PI_OFFLINE: "1" };
}

const bin = (impl: Implementation) => (impl === "ours" ? [process.execPath, PI_BIN] : [process.execPath, UPSTREAM]);

function rpc(impl: Implementation, args: string[]): RpcWorker {
  return new RpcWorker(["--mode", "rpc", "--no-session", ...args], { cwd: project, env: envFor(impl), bin: bin(impl) });
}

/** Run `pi ARGS` to its end (stdin closed); the promise settles when the process exits. */
function run(impl: Implementation, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const [cmd, ...pre] = bin(impl);
  const child = spawn(cmd!, [...pre, ...args], {
    cwd: project,
    env: { ...process.env, ...envFor(impl) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
  return new Promise((res, rej) => {
    child.on("error", rej);
    child.on("close", (code) => res({ code, stdout, stderr }));
  });
}

async function promptAndAnswer(w: RpcWorker, text: string): Promise<Line> {
  server.enqueue({ text });
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message: "hi" }, 30_000)).toMatchObject({ success: true });
  return w.event("agent_end", 30_000, from);
}

describe("a provider an extension registers, named at start-up", () => {
  it.each(IMPLS)("%s: --provider ext-mock --model ext-2 starts on it in RPC mode and prompts it", async (impl) => {
    const w = rpc(impl, ["-e", extension(), "--provider", "ext-mock", "--model", "ext-2"]);
    const state = await w.request({ type: "get_state" }, 30_000);
    expect(state.data.model).toMatchObject({ provider: "ext-mock", id: "ext-2", contextWindow: 32000 });
    const end = await promptAndAnswer(w, "hello from ext-2");
    expect(end.messages.at(-1)).toMatchObject({ role: "assistant", provider: "ext-mock", model: "ext-2" });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({ path: "/v1/chat/completions", body: { model: "ext-2" } });
    expect(server.requests[0]!.headers.authorization).toBe("Bearer ext-key-not-secret");
  });

  it.each(IMPLS)("%s: --model ext-mock/ext-1 in print mode answers from it", async (impl) => {
    server.enqueue({ text: "printed by ext-1" });
    const out = await run(impl, ["-p", "--no-session", "-e", extension(), "--model", "ext-mock/ext-1", "say it"]);
    expect(out.stderr).not.toMatch(/unknown provider|not found/i);
    expect(out).toMatchObject({ code: 0 });
    expect(out.stdout.trim()).toBe("printed by ext-1");
    expect(server.requests[0]?.body).toMatchObject({ model: "ext-1" });
  });

  it.each(IMPLS)("%s: settings' defaultProvider / defaultModel name it", async (impl) => {
    writeFileSync(join(home, "settings.json"), JSON.stringify({ defaultProvider: "ext-mock", defaultModel: "ext-2" }));
    const w = rpc(impl, ["-e", extension()]);
    const state = await w.request({ type: "get_state" }, 30_000);
    expect(state.data.model).toMatchObject({ provider: "ext-mock", id: "ext-2" });
    await promptAndAnswer(w, "from the settings' model");
    expect(server.requests[0]?.body).toMatchObject({ model: "ext-2" });
  });

  it.each(IMPLS)("%s: --api-key goes to the extension's provider named with it", async (impl) => {
    const w = rpc(impl, [
      "-e",
      extension(),
      "--provider",
      "ext-mock",
      "--model",
      "ext-1",
      "--api-key",
      "cli-key-not-secret",
    ]);
    await promptAndAnswer(w, "keyed");
    expect(server.requests[0]!.headers.authorization).toBe("Bearer cli-key-not-secret");
  });

  it("ours: a provider nobody registers still fails the start, naming it (exit 2)", async () => {
    const out = await run("ours", [
      "-p",
      "--no-session",
      "-e",
      extension(),
      "--provider",
      "ext-nope",
      "--model",
      "x",
      "hi",
    ]);
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/unknown provider "ext-nope"; known: .*ext-mock/);
  });

  it("ours: a resumed session's model from an extension provider is kept once the extension loads", async () => {
    const sessions = join(home, "s");
    const first = new RpcWorker(
      ["--mode", "rpc", "--session-dir", sessions, "-e", extension(), "--provider", "ext-mock", "--model", "ext-2"],
      {
        cwd: project,
        env: envFor("ours"),
      },
    );
    await promptAndAnswer(first, "first run");
    first.closeStdin();
    await first.exited;
    const again = new RpcWorker(["--mode", "rpc", "--session-dir", sessions, "--continue", "-e", extension()], {
      cwd: project,
      env: envFor("ours"),
    });
    const state = await again.request({ type: "get_state" }, 30_000);
    expect(state.data.model).toMatchObject({ provider: "ext-mock", id: "ext-2" });
    expect(again.stderr.join("")).not.toMatch(/not available/);
  });
});
