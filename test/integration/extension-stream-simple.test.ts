/**
 * `pi.registerProvider` with `streamSimple` (pi's custom stream contract) in the built
 * worker: pi 0.73.1's own `custom-provider-anthropic` example, unchanged, streams through
 * the real Anthropic SDK to the mock model server (a second extension re-aims the
 * provider's baseUrl, pi's override-only registration), on our worker and on upstream
 * pi with the same command line; a small stream of our own covers text, tool calls and
 * the error event; an OAuth-only provider is refused saying what to do.
 * Run `npm run build` first; upstream runs skip when test/upstream is not installed.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { PI_BIN, RpcWorker, killAllWorkers, tempDir } from "../support/rpc-worker.js";
import { useOracleFixture } from "../support/oracle-fixture.js";

const PACKAGE = resolve(import.meta.dirname, "../upstream/node_modules/@mariozechner/pi-coding-agent");
const UPSTREAM = join(PACKAGE, "dist/cli.js");
const EXAMPLES = join(PACKAGE, "examples/extensions");
const installed = existsSync(UPSTREAM);

type Implementation = "ours" | "upstream";
type Line = Record<string, any>;

const { server, dirs } = useOracleFixture();

function world(impl: Implementation): { home: string; project: string } {
  const home = tempDir(`pi-stream-${impl}-home-`);
  const project = tempDir(`pi-stream-${impl}-project-`);
  dirs.push(home, project);
  return { home: home.path, project: project.path };
}

function worker(
  impl: Implementation,
  args: string[],
  w: { home: string; project: string },
  env: NodeJS.ProcessEnv = {},
): RpcWorker {
  const base = impl === "ours" ? { PI_ORCH_HOME: w.home } : { PI_CODING_AGENT_DIR: w.home, PI_OFFLINE: "1" };
  return new RpcWorker(["--mode", "rpc", "--no-session", ...args], {
    cwd: w.project,
    env: { ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "", ...base, ...env },
    bin: [process.execPath, impl === "ours" ? PI_BIN : UPSTREAM],
  });
}

async function prompt(w: RpcWorker, message: string): Promise<Line> {
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message }, 30_000)).toMatchObject({ success: true });
  return w.event("agent_end", 30_000, from);
}

describe("providers with their own stream (streamSimple)", () => {
  it("custom-provider-anthropic streams through the Anthropic SDK to the mock server, as on upstream pi", async () => {
    const results: Record<string, { request: Line; reply: Line }> = {};
    for (const impl of (installed ? ["ours", "upstream"] : ["ours"]) as Implementation[]) {
      const w = world(impl);
      const reaim = join(w.project, "reaim.ts");
      writeFileSync(
        reaim,
        `export default (pi: any) => pi.registerProvider("custom-anthropic", { baseUrl: ${JSON.stringify(server.url)} });`,
      );
      const args = [
        "-e",
        join(EXAMPLES, "custom-provider-anthropic"),
        "-e",
        reaim,
        "--provider",
        "custom-anthropic",
        "--model",
        "claude-sonnet-4-5",
        "--thinking",
        "off",
      ];
      const pi = worker(impl, args, w, { CUSTOM_ANTHROPIC_API_KEY: "sk-ant-api-not-secret" });
      const at = server.requests.length;
      server.enqueue({ text: ["streamed ", "by the example"], usage: { input: 12, output: 5 } });
      const end = await prompt(pi, "hello there");
      expect(server.requests).toHaveLength(at + 1);
      results[impl] = { request: server.requests[at]!, reply: end.messages.at(-1) };
      await killAllWorkers();
    }
    const ours = results.ours!;
    expect(ours.request).toMatchObject({ path: "/v1/messages", body: { model: "claude-sonnet-4-5", stream: true } });
    expect(ours.request.headers["x-api-key"]).toBe("sk-ant-api-not-secret");
    expect(ours.request.body.messages.at(-1)).toMatchObject({ role: "user" });
    expect(JSON.stringify(ours.request.body.messages.at(-1).content)).toContain("hello there");
    expect(ours.reply).toMatchObject({
      role: "assistant",
      provider: "custom-anthropic",
      model: "claude-sonnet-4-5",
      content: [{ type: "text", text: "streamed by the example" }],
      stopReason: "stop",
    });
    const upstream = results.upstream;
    if (upstream) {
      // The oracle: the example built the same request from what each worker gave it.
      const pick = (r: Line) => ({
        path: r.path,
        model: r.body.model,
        max_tokens: r.body.max_tokens,
        thinking: r.body.thinking,
        messages: r.body.messages,
        tools: (r.body.tools ?? []).map((t: Line) => t.name).sort(),
        beta: r.headers["anthropic-beta"],
      });
      expect(pick(ours.request)).toEqual(pick(upstream.request));
      const reply = (m: Line) => ({
        role: m.role,
        provider: m.provider,
        model: m.model,
        api: m.api,
        content: m.content,
        stopReason: m.stopReason,
        usage: { input: m.usage.input, output: m.usage.output },
      });
      expect(reply(ours.reply)).toEqual(reply(upstream.reply));
    }
  });

  it("an extension's own stream: text, a tool call the worker runs, then an error event that ends the run", async () => {
    const w = world("ours");
    const ext = join(w.project, "own-stream.ts");
    writeFileSync(
      ext,
      `import { createAssistantMessageEventStream } from "@mariozechner/pi-ai";
       let call = 0;
       export default (pi: any) => pi.registerProvider("own", {
         baseUrl: "local://own", apiKey: "OWN_KEY", api: "own-api",
         models: [{ id: "own-1", name: "Own", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 8000, maxTokens: 512 }],
         streamSimple: (model: any, context: any, options: any) => {
           const stream = createAssistantMessageEventStream();
           const n = call++;
           const msg: any = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id,
             usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
             stopReason: "stop", timestamp: Date.now() };
           queueMicrotask(() => {
             stream.push({ type: "start", partial: msg });
             if (n === 0) {
               const toolCall = { type: "toolCall", id: "t1", name: "ls", arguments: { path: "." } };
               msg.content.push(toolCall);
               stream.push({ type: "toolcall_start", contentIndex: 0, partial: msg });
               stream.push({ type: "toolcall_end", contentIndex: 0, toolCall, partial: msg });
               msg.stopReason = "toolUse";
               stream.push({ type: "done", reason: "toolUse", message: msg });
             } else if (n === 1) {
               const last = context.messages.at(-1);
               const text = "key " + options.apiKey + " saw " + last.role + " " + last.toolName + "; tools " + context.tools.map((t: any) => t.name).join(",");
               msg.content.push({ type: "text", text: "" });
               stream.push({ type: "text_start", contentIndex: 0, partial: msg });
               msg.content[0].text = text;
               stream.push({ type: "text_delta", contentIndex: 0, delta: text, partial: msg });
               stream.push({ type: "text_end", contentIndex: 0, content: text, partial: msg });
               stream.push({ type: "done", reason: "stop", message: msg });
             } else {
               msg.stopReason = "error"; msg.errorMessage = "own backend is down";
               stream.push({ type: "error", reason: "error", error: msg });
             }
             stream.end();
           });
           return stream;
         },
       });`,
    );
    const pi = worker("ours", ["-e", ext, "--provider", "own", "--model", "own-1", "--tools", "ls,read"], w, {
      OWN_KEY: "own-key",
    });
    const first = await prompt(pi, "list files");
    const tool = first.messages.find((m: Line) => m.role === "toolResult");
    expect(tool).toMatchObject({ toolName: "ls", isError: false });
    expect(first.messages.at(-1)).toMatchObject({
      role: "assistant",
      provider: "own",
      content: [{ type: "text", text: "key own-key saw toolResult ls; tools read,ls" }],
    });
    expect(pi.received.some((l) => l.type === "message_update" && l.assistantMessageEvent?.type === "text_delta")).toBe(
      true,
    );
    const second = await prompt(pi, "again");
    expect(second.messages.at(-1)).toMatchObject({
      role: "assistant",
      stopReason: "error",
      errorMessage: "own backend is down",
    });
    expect(await pi.request({ type: "get_state" })).toMatchObject({ success: true, data: { isStreaming: false } });
  });

  it("an OAuth-only provider is refused at load, naming it and what to do; the worker keeps working", async () => {
    const w = world("ours");
    const ext = join(w.project, "oauth-only.ts");
    writeFileSync(
      ext,
      `export default (pi: any) => pi.registerProvider("corp-sso", {
         baseUrl: "https://llm.corp.example", api: "anthropic-messages",
         models: [{ id: "m", name: "M", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 8000, maxTokens: 512 }],
         oauth: { name: "Corp SSO", login: async () => ({ access: "", refresh: "", expires: 0 }), refreshToken: async (c: any) => c, getApiKey: (c: any) => c.access },
       });`,
    );
    const pi = worker("ours", ["-e", ext, "--provider", "faux"], w);
    const error = await pi.event("extension_error", 30_000);
    expect(error).toMatchObject({ event: "load" });
    expect(error.error).toContain(
      'registerProvider "corp-sso": this provider gets its key only through OAuth (/login), which needs pi\'s terminal; give it an "apiKey"',
    );
    expect(await pi.request({ type: "get_state" })).toMatchObject({
      success: true,
      data: { model: { provider: "faux" } },
    });
  });
});
