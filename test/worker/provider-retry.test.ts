import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { WorkerEvent } from "../../shared/schema/events.js";
import type { AgentMessage, AssistantMessage } from "../../shared/schema/messages.js";
import { Agent, userMessage } from "../../worker/agent/agent.js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentSession } from "../../worker/core/agent-session.js";
import { AutoRetry } from "../../worker/core/auto-retry.js";
import { ProviderSet } from "../../worker/providers/index.js";
import { mockModel, startMockModelServer, type MockModelServer, type MockReply } from "../support/mock-model-server.js";

type Api = "openai-completions" | "anthropic-messages";
const APIS: Api[] = ["anthropic-messages", "openai-completions"];

let server: MockModelServer | undefined;

beforeEach(async () => {
  server = await startMockModelServer();
});

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/**
 * An agent on the mock server through the real SDK, with the session layer's automatic
 * retry wired in as the session does; a 5 ms base backoff keeps the provider's wait visible.
 */
function agentOn(api: Api, maxRetryDelayMs?: number) {
  const providers = new ProviderSet({}, { maxRetryDelayMs });
  const events: WorkerEvent[] = [];
  const retry = new AutoRetry({ enabled: true, maxAttempts: 3, baseDelayMs: 5, maxRetryDelayMs }, (e) =>
    events.push(e),
  );
  const agent = new Agent(
    {
      cwd: process.cwd(),
      provider: (model) => providers.for(model),
      apiKey: () => "test-key",
      systemPrompt: () => "test",
      tools: () => [],
      afterResponse: async (ctx) => {
        retry.noteResponse(ctx.failure);
        return "accept";
      },
    },
    { model: mockModel(server!, api), thinkingLevel: "off" },
  );
  agent.subscribe((e) => {
    if (e.type === "agent_end") retry.onAgentEnd(e.messages);
    if (e.type === "message_end" && e.message.role === "assistant") retry.onMessageEnd(e.message);
  });
  /** A run followed through its retries, as the session starts one. */
  const target = {
    omit: (failed: AgentMessage) => agent.messages.splice(agent.messages.lastIndexOf(failed), 1),
    start: (prompts: AgentMessage[]) => agent.start(prompts),
  };
  const run = (text: string) => retry.follow(target, agent.start([userMessage(text)]).done);
  return { agent, events, run };
}

const retryStarts = (events: readonly WorkerEvent[]) =>
  events.filter((e): e is Extract<WorkerEvent, { type: "auto_retry_start" }> => e.type === "auto_retry_start");

describe.each(APIS)("rate limits and transient errors through the real SDK (%s)", (api) => {
  it("waits at least what retry-after asks before the next request", async () => {
    server!.enqueue(
      { error: { status: 429, message: "rate limited", headers: { "retry-after": "1" } } },
      { text: "ok" },
    );
    const { agent, events, run } = agentOn(api);
    await run("go");
    const [first, second] = server!.requests;
    // The mock's own request times: the client waited the provider's second, not the 5 ms backoff.
    expect(second.at - first.at).toBeGreaterThanOrEqual(1000);
    expect(retryStarts(events)).toEqual([
      expect.objectContaining({
        attempt: 1,
        delayMs: 1000,
        delayReason: "the provider asked to wait (retry-after: 1)",
      }),
    ]);
    expect((agent.messages.at(-1) as AssistantMessage).content).toEqual([{ type: "text", text: "ok" }]);
  });

  it("honours retry-after-ms", async () => {
    server!.enqueue({ error: { status: 429, headers: { "retry-after-ms": "300" } } }, { text: "ok" });
    const { events, run } = agentOn(api);
    await run("go");
    expect(server!.requests[1].at - server!.requests[0].at).toBeGreaterThanOrEqual(300);
    expect(retryStarts(events)[0]).toMatchObject({
      delayMs: 300,
      delayReason: "the provider asked to wait (retry-after-ms: 300)",
    });
  });

  it("fails at once when the provider asks for longer than the cap, saying how long", async () => {
    server!.enqueue({ error: { status: 429, message: "daily quota", headers: { "retry-after": "18000" } } });
    const { agent, events, run } = agentOn(api);
    await run("go");
    expect(server!.requests).toHaveLength(1);
    expect(retryStarts(events)).toEqual([]);
    expect((agent.messages.at(-1) as AssistantMessage).errorMessage).toBe(
      "429 daily quota; not retried: the provider asked to wait 5 h (retry-after: 18000), longer than the 1 min limit (setting retry.provider.maxRetryDelayMs); try again later or raise the limit",
    );
  });

  it("takes the cap from the setting (retry.provider.maxRetryDelayMs)", async () => {
    server!.enqueue({ error: { status: 429, message: "slow down", headers: { "retry-after": "1" } } });
    const { agent, events, run } = agentOn(api, 500);
    await run("go");
    expect(server!.requests).toHaveLength(1);
    expect(retryStarts(events)).toEqual([]);
    expect((agent.messages.at(-1) as AssistantMessage).errorMessage).toMatch(
      /^429 slow down; not retried: the provider asked to wait 1 s \(retry-after: 1\), longer than the 500 ms limit/,
    );
  });

  it("does not retry when the provider says x-should-retry: false", async () => {
    server!.enqueue({ error: { status: 500, message: "do not", headers: { "x-should-retry": "false" } } });
    const { events, run } = agentOn(api);
    await run("go");
    expect(server!.requests).toHaveLength(1);
    expect(retryStarts(events)).toEqual([]);
  });

  const transient: [string, MockReply][] = [
    ["529 overloaded", { error: { status: 529 } }],
    ["500 server error", { error: { status: 500 } }],
    // Headers and a few bytes, then the socket goes away: what a dropped connection looks like.
    [
      "dropped connection",
      {
        replay: { body: api === "anthropic-messages" ? "event: message_start\ndata: {" : "data: {", dropAfterBytes: 8 },
      },
    ],
  ];
  it.each(transient)("retries %s with backoff", async (_name, reply) => {
    server!.enqueue(reply, { text: "ok" });
    const { agent, events, run } = agentOn(api);
    await run("go");
    expect(server!.requests).toHaveLength(2);
    expect(retryStarts(events)).toEqual([
      expect.objectContaining({ attempt: 1, delayMs: 5, delayReason: "exponential backoff" }),
    ]);
    expect((agent.messages.at(-1) as AssistantMessage).stopReason).toBe("stop");
  });
});

describe("the session's cap", () => {
  it("comes from settings.json (retry.provider.maxRetryDelayMs) for both the SDK and the automatic retry", async () => {
    const home = mkdtempSync(join(tmpdir(), "pi-retry-home-"));
    try {
      const model = mockModel(server!, "openai-completions");
      writeFileSync(
        join(home, "models.json"),
        JSON.stringify({
          providers: {
            mock: { baseUrl: model.baseUrl, api: model.api, apiKey: "test-key", models: [{ id: "mock-1" }] },
          },
        }),
      );
      writeFileSync(
        join(home, "settings.json"),
        JSON.stringify({ retry: { baseDelayMs: 5, provider: { maxRetryDelayMs: 500 } } }),
      );
      server!.enqueue({ error: { status: 429, message: "slow down", headers: { "retry-after": "1" } } });
      const session = new AgentSession({
        cwd: home,
        home,
        provider: "mock",
        model: "mock-1",
        noSession: true,
        env: {},
      });
      const events: WorkerEvent[] = [];
      session.subscribe((e) => void events.push(e));
      await (await session.prompt("go")).done;
      expect(server!.requests).toHaveLength(1);
      expect(retryStarts(events)).toEqual([]);
      expect((session.messages().at(-1) as AssistantMessage).errorMessage).toMatch(
        /not retried: the provider asked to wait 1 s \(retry-after: 1\), longer than the 500 ms limit/,
      );
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
