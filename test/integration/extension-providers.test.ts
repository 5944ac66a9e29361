/**
 * `pi.registerProvider` / `pi.unregisterProvider` in the built worker: an extension's
 * models.json-shaped provider on the mock model server is listed, selectable and
 * prompted at once, through the real SDK; a later registration from a command is live
 * too, and unregistering removes it. pi 0.73.1's own provider examples (custom stream
 * APIs with a key and OAuth) load (extension-stream-simple.test.ts streams one).
 * Run `npm run build` first.
 */
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { useMockWorkerEnv } from "../support/mock-worker-env.js";
import { RpcWorker } from "../support/rpc-worker.js";

const UPSTREAM_EXAMPLES = resolve(
  import.meta.dirname,
  "../upstream/node_modules/@mariozechner/pi-coding-agent/examples/extensions",
);

const env = useMockWorkerEnv();

function proxyExtension(): string {
  const path = join(env.project, "proxy.ts");
  const url = `${env.server.url}/v1`;
  writeFileSync(
    path,
    `export default (pi: any) => {
       const config = {
         baseUrl: ${JSON.stringify(url)}, api: "openai-completions", apiKey: "EXT_PROXY_KEY",
         models: [{ id: "proxy-large", name: "Proxy Large", contextWindow: 64000, maxTokens: 2048 }],
       };
       pi.registerProvider("ext-proxy", config);
       pi.registerCommand("proxy-off", { handler: async () => pi.unregisterProvider("ext-proxy") });
       pi.registerCommand("proxy-small", {
         handler: async () => pi.registerProvider("ext-proxy", { ...config, models: [{ id: "proxy-small" }] }),
       });
     };`,
  );
  return path;
}

function worker(args: string[]): RpcWorker {
  return new RpcWorker(["--mode", "rpc", "--provider", "faux", ...args], {
    cwd: env.project,
    env: { PI_ORCH_HOME: env.home, ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "", EXT_PROXY_KEY: "proxy-key-not-secret" },
  });
}

const ids = (reply: Record<string, any>) =>
  (reply.data.models as { provider: string; id: string }[]).map((m) => `${m.provider}/${m.id}`);

describe("providers registered by extensions", () => {
  it("are listed, selectable and prompted at once; a command can replace or remove them", async () => {
    const w = worker(["-e", proxyExtension()]);
    expect(ids(await w.request({ type: "get_available_models" }))).toContain("ext-proxy/proxy-large");

    expect(await w.request({ type: "set_model", provider: "ext-proxy", modelId: "proxy-large" })).toMatchObject({
      success: true,
      data: { provider: "ext-proxy", id: "proxy-large", contextWindow: 64000, maxTokens: 2048 },
    });
    env.server.enqueue({ text: "hello from the proxy" });
    const from = w.received.length;
    await w.request({ type: "prompt", message: "hi" });
    const end = await w.event("agent_end", undefined, from);
    expect(end.messages.at(-1)).toMatchObject({
      role: "assistant",
      provider: "ext-proxy",
      model: "proxy-large",
      content: [{ type: "text", text: "hello from the proxy" }],
    });
    expect(env.server.requests).toHaveLength(1);
    expect(env.server.requests[0]).toMatchObject({ path: "/v1/chat/completions", body: { model: "proxy-large" } });
    expect(env.server.requests[0].headers.authorization).toBe("Bearer proxy-key-not-secret");

    // Registering the name again after start-up replaces its models (pi's rule), live.
    await w.request({ type: "prompt", message: "/proxy-small" });
    const models = ids(await w.request({ type: "get_available_models" }));
    expect(models).toContain("ext-proxy/proxy-small");
    expect(models).not.toContain("ext-proxy/proxy-large");

    await w.request({ type: "prompt", message: "/proxy-off" });
    expect(ids(await w.request({ type: "get_available_models" })).filter((m) => m.startsWith("ext-proxy/"))).toEqual(
      [],
    );
    expect(await w.request({ type: "set_model", provider: "ext-proxy", modelId: "proxy-small" })).toMatchObject({
      success: false,
    });
  });

  it.each([
    ["custom-provider-gitlab-duo", "gitlab-duo"],
    ["custom-provider-anthropic", "custom-anthropic"],
  ])(
    "loads pi's %s example (a custom stream API with a key and OAuth): its models are listed",
    async (example, provider) => {
      const w = worker(["-e", join(UPSTREAM_EXAMPLES, example)]);
      const models = ids(await w.request({ type: "get_available_models" }));
      expect(models.some((m) => m.startsWith(`${provider}/`))).toBe(true);
      expect(w.received.filter((l) => l.type === "extension_error")).toEqual([]);
    },
  );
});
