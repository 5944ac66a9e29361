import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AssistantMessage, LlmMessage, Model, ThinkingLevel } from "../../shared/schema/messages.js";
import { emptyUsage } from "../../shared/schema/messages.js";
import { createAnthropicProvider } from "../../worker/providers/anthropic.js";
import { createOpenAIProvider } from "../../worker/providers/openai.js";
import type { Provider, ProviderEvent, ProviderRequest, ToolSpec } from "../../worker/types.js";
import { mockModel, startMockModelServer, type MockModelServer } from "../support/mock-model-server.js";

type Api = "openai-completions" | "anthropic-messages";

const PROVIDERS: { name: string; api: Api; create: () => Provider; source: string; sdk: string }[] = [
  { name: "openai", api: "openai-completions", create: createOpenAIProvider, source: "openai.ts", sdk: "openai" },
  {
    name: "anthropic",
    api: "anthropic-messages",
    create: createAnthropicProvider,
    source: "anthropic.ts",
    sdk: "@anthropic-ai/sdk",
  },
];

const BASH_TOOL: ToolSpec = {
  name: "bash",
  description: "Run a shell command",
  parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
};

const PIXEL = "iVBORw0KGgo=";

let server: MockModelServer | undefined;

beforeEach(async () => {
  server = await startMockModelServer();
});

afterEach(async () => {
  await server?.close();
  server = undefined;
});

function mock(): MockModelServer {
  if (!server) throw new Error("mock model server not started");
  return server;
}

function request(model: Model, overrides: Partial<ProviderRequest> = {}): ProviderRequest {
  return {
    model,
    systemPrompt: "You are a test.",
    messages: [{ role: "user", content: "hi", timestamp: 1 }],
    tools: [],
    thinkingLevel: "off",
    apiKey: "test-key",
    signal: new AbortController().signal,
    ...overrides,
  };
}

async function collect(stream: AsyncIterable<ProviderEvent>): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

function finalMessage(events: ProviderEvent[]): AssistantMessage {
  const last = events.at(-1);
  if (!last || (last.type !== "done" && last.type !== "error")) throw new Error(`stream did not finish: ${last?.type}`);
  return last.message;
}

function lastEvent<T extends ProviderEvent["type"]>(
  events: ProviderEvent[],
  type: T,
): Extract<ProviderEvent, { type: T }> {
  const last = events.at(-1);
  expect(last?.type).toBe(type);
  return last as Extract<ProviderEvent, { type: T }>;
}

/** A prior turn: the assistant called two tools, one result failed. */
function priorToolTurn(): LlmMessage[] {
  const assistant: AssistantMessage = {
    role: "assistant",
    content: [
      { type: "text", text: "Let me look." },
      { type: "toolCall", id: "call_1", name: "bash", arguments: { command: "ls" } },
      { type: "toolCall", id: "call_2", name: "bash", arguments: { command: "cat x" } },
    ],
    api: "test",
    provider: "test",
    model: "mock-1",
    usage: emptyUsage(),
    stopReason: "toolUse",
    timestamp: 2,
  };
  return [
    {
      role: "user",
      content: [
        { type: "text", text: "what is in here?" },
        { type: "image", data: PIXEL, mimeType: "image/png" },
      ],
      timestamp: 1,
    },
    assistant,
    {
      role: "toolResult",
      toolCallId: "call_1",
      toolName: "bash",
      content: [{ type: "text", text: "a.txt" }],
      isError: false,
      timestamp: 3,
    },
    {
      role: "toolResult",
      toolCallId: "call_2",
      toolName: "bash",
      content: [{ type: "text", text: "no such file" }],
      isError: true,
      timestamp: 4,
    },
  ];
}

describe.each(PROVIDERS)("$name provider against the mock server", ({ api, create, source, sdk }) => {
  it("streams text as start, text_start, text_delta…, text_end, done", async () => {
    mock().enqueue({ text: ["Hel", "lo ", "world"] });
    const events = await collect(create().stream(request(mockModel(mock(), api))));

    expect(events.map((e) => e.type)).toEqual([
      "start",
      "text_start",
      "text_delta",
      "text_delta",
      "text_delta",
      "text_end",
      "done",
    ]);
    const message = finalMessage(events);
    expect(message.content).toEqual([{ type: "text", text: "Hello world" }]);
    expect(message).toMatchObject({ role: "assistant", api, provider: "mock", model: "mock-1", stopReason: "stop" });
    expect(message.responseId).toMatch(/mock/);
  });

  it("streams a tool call whose arguments arrive in several chunks", async () => {
    mock().enqueue({
      toolCalls: [{ id: "call_abc", name: "bash", arguments: { command: "ls -la /tmp" }, argChunks: 3 }],
    });
    const events = await collect(create().stream(request(mockModel(mock(), api), { tools: [BASH_TOOL] })));

    // OpenAI's first tool-call chunk carries `arguments: ""`: pi reports it as a delta too.
    const deltas = api === "openai-completions" ? 4 : 3;
    expect(events.map((e) => e.type)).toEqual([
      "start",
      "toolcall_start",
      ...new Array<string>(deltas).fill("toolcall_delta"),
      "toolcall_end",
      "done",
    ]);
    // Each delta carries the arguments parsed so far (partial JSON), as pi's do.
    const sofar = events
      .filter((e) => e.type === "toolcall_delta")
      .map((e) =>
        JSON.stringify((e as { partial: { content: { arguments: unknown }[] } }).partial.content[0]!.arguments),
      );
    expect(sofar.at(-1)).toBe(JSON.stringify({ command: "ls -la /tmp" }));
    const end = events.find((e) => e.type === "toolcall_end");
    expect(end).toMatchObject({
      toolCall: { type: "toolCall", id: "call_abc", name: "bash", arguments: { command: "ls -la /tmp" } },
    });
    const message = finalMessage(events);
    expect(message.stopReason).toBe("toolUse");
    expect(message.content).toEqual([
      { type: "toolCall", id: "call_abc", name: "bash", arguments: { command: "ls -la /tmp" } },
    ]);
  });

  it("records usage, cache reads included", async () => {
    mock().enqueue({ text: "ok", usage: { input: 100, output: 20, cacheRead: 30 } });
    const message = finalMessage(await collect(create().stream(request(mockModel(mock(), api)))));
    expect(message.usage).toMatchObject({ input: 100, output: 20, cacheRead: 30, cacheWrite: 0, totalTokens: 150 });
  });

  it("prices usage with the model's costs per million tokens", async () => {
    mock().enqueue({ text: "ok", usage: { input: 1_000_000, output: 2_000_000 } });
    const model = { ...mockModel(mock(), api), cost: { input: 3, output: 15, cacheRead: 0, cacheWrite: 0 } };
    const message = finalMessage(await collect(create().stream(request(model))));
    expect(message.usage.cost).toMatchObject({ input: 3, output: 30, total: 33 });
  });

  it("maps a max-tokens stop to stopReason length", async () => {
    mock().enqueue({ text: "cut", stopReason: "length" });
    const message = finalMessage(await collect(create().stream(request(mockModel(mock(), api)))));
    expect(message.stopReason).toBe("length");
  });

  it("turns 429, 500 and 529 into a retryable error event", async () => {
    const model = mockModel(mock(), api);
    for (const status of [429, 500, 529]) {
      mock().enqueue({ error: { status, message: `boom ${status}` } });
      const events = await collect(create().stream(request(model)));
      const error = lastEvent(events, "error");
      expect(error.retryable, `status ${status}`).toBe(true);
      expect(error.contextOverflow).toBeFalsy();
      expect(error.message.stopReason).toBe("error");
      expect(error.message.errorMessage).toBe(`${status} boom ${status}`);
    }
    expect(mock().requests).toHaveLength(3);
  });

  it("reports a context overflow as such, not retryable", async () => {
    const text =
      api === "anthropic-messages"
        ? "prompt is too long: 210000 tokens > 200000 maximum"
        : "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.";
    mock().enqueue({ error: { status: 400, message: text } });
    const error = lastEvent(await collect(create().stream(request(mockModel(mock(), api)))), "error");
    expect(error).toMatchObject({ retryable: false, contextOverflow: true });
    expect(error.message.errorMessage).toBe(`400 ${text}`);
  });

  it("fails clearly, without retrying, when the server has no scripted reply", async () => {
    const error = lastEvent(await collect(create().stream(request(mockModel(mock(), api)))), "error");
    expect(error.message.errorMessage).toMatch(/^500 .*no scripted reply left/);
    expect(mock().requests).toHaveLength(1);
  });

  it("stops promptly with stopReason aborted when aborted during a slow stream", async () => {
    mock().enqueue({ text: ["first", "second"], chunkDelayMs: 10_000 });
    const controller = new AbortController();
    const events: ProviderEvent[] = [];
    let abortedAt = 0;
    for await (const event of create().stream(request(mockModel(mock(), api), { signal: controller.signal }))) {
      events.push(event);
      if (event.type === "start") {
        abortedAt = Date.now();
        controller.abort();
      }
    }
    expect(Date.now() - abortedAt).toBeLessThan(2_000);
    const error = lastEvent(events, "error");
    expect(error.retryable).toBe(false);
    // pi 1.6's words once the response streams, by API (test/integration/abort-texts-oracle.test.ts).
    const words = api === "anthropic-messages" ? "This operation was aborted" : "Request was aborted";
    expect(error.message).toMatchObject({ stopReason: "aborted", errorMessage: words });
  });

  it("stops promptly when aborted while the server hangs", async () => {
    mock().enqueue({ hang: true });
    const controller = new AbortController();
    const stream = create().stream(request(mockModel(mock(), api), { signal: controller.signal }));
    void mock()
      .waitForRequests(1)
      .then(() => controller.abort());
    const error = lastEvent(await collect(stream), "error");
    expect(error.message.stopReason).toBe("aborted");
  });

  it("fails with a retryable error when the connection drops mid-stream", async () => {
    mock().enqueue({ text: ["first", "second"], chunkDelayMs: 10_000 });
    const events: ProviderEvent[] = [];
    for await (const event of create().stream(request(mockModel(mock(), api)))) {
      events.push(event);
      if (event.type === "start") await mock().close();
    }
    const error = lastEvent(events, "error");
    expect(error.retryable).toBe(true);
    expect(error.message.stopReason).toBe("error");
  });

  it("fails with a retryable error when nothing listens at the base URL", async () => {
    const model = mockModel(mock(), api);
    await mock().close();
    const error = lastEvent(await collect(create().stream(request(model))), "error");
    expect(error.retryable).toBe(true);
    expect(error.message.errorMessage).toMatch(/^Connection error\. \(connect ECONNREFUSED 127\.0\.0\.1:\d+\)$/);
  });

  it("sends the key and the model's headers, never retrying inside the SDK", async () => {
    mock().enqueue({ error: { status: 500 } });
    const model = { ...mockModel(mock(), api), headers: { "x-custom": "yes" } };
    await collect(create().stream(request(model, { apiKey: "sk-secret" })));
    const { headers } = mock().requests[0];
    expect(headers["x-custom"]).toBe("yes");
    // @anthropic-ai/sdk 1.x sends the API key as a bearer token too, not as x-api-key.
    expect(headers.authorization).toBe("Bearer sk-secret");
    expect(mock().requests).toHaveLength(1);
  });

  it("imports its SDK only inside the stream call", () => {
    const text = readFileSync(new URL(`../../worker/providers/${source}`, import.meta.url), "utf8");
    const valueImport = new RegExp(`^import (?!type )[^;]*from "${sdk.replace("/", "\\/")}"`, "m");
    expect(text).not.toMatch(valueImport);
    expect(text).toContain(`await import("${sdk}")`);
  });
});

describe("openai provider request body", () => {
  it("carries the system prompt, tools, images, and a prior tool call with its results", async () => {
    mock().enqueue({ text: "fine" });
    const model = mockModel(mock(), "openai-completions");
    await collect(createOpenAIProvider().stream(request(model, { messages: priorToolTurn(), tools: [BASH_TOOL] })));

    const body = mock().requests[0].body;
    expect(mock().requests[0].path).toBe("/v1/chat/completions");
    expect(body).toMatchObject({
      model: "mock-1",
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 4096,
    });
    expect(body.reasoning_effort).toBeUndefined();
    expect(body.tools).toEqual([
      {
        type: "function",
        function: { name: "bash", description: "Run a shell command", parameters: BASH_TOOL.parameters },
      },
    ]);
    expect(body.messages).toEqual([
      { role: "system", content: "You are a test." },
      {
        role: "user",
        content: [
          { type: "text", text: "what is in here?" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${PIXEL}` } },
        ],
      },
      {
        role: "assistant",
        content: "Let me look.",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "bash", arguments: '{"command":"ls"}' } },
          { id: "call_2", type: "function", function: { name: "bash", arguments: '{"command":"cat x"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "a.txt" },
      { role: "tool", tool_call_id: "call_2", content: "no such file" },
    ]);
  });

  it("sends reasoning_effort only for reasoning models with thinking on", async () => {
    mock().enqueue({ text: "a" }, { text: "b" });
    const model = mockModel(mock(), "openai-completions");
    await collect(createOpenAIProvider().stream(request(model, { thinkingLevel: "high" })));
    await collect(createOpenAIProvider().stream(request({ ...model, reasoning: false }, { thinkingLevel: "high" })));
    expect(mock().requests[0].body.reasoning_effort).toBe("high");
    expect(mock().requests[1].body.reasoning_effort).toBeUndefined();
  });

  it("streams reasoning_content from compatible servers as thinking", async () => {
    mock().enqueue({ thinking: "Pondering.", text: "Done." });
    const events = await collect(createOpenAIProvider().stream(request(mockModel(mock(), "openai-completions"))));
    expect(events.map((e) => e.type)).toEqual([
      "start",
      "thinking_start",
      "thinking_delta",
      "thinking_end",
      "text_start",
      "text_delta",
      "text_end",
      "done",
    ]);
    expect(finalMessage(events).content).toEqual([
      { type: "thinking", thinking: "Pondering.", thinkingSignature: "reasoning_content" },
      { type: "text", text: "Done." },
    ]);
  });
});

describe("anthropic provider request body", () => {
  it("carries the system prompt, tools, images, and a prior tool call with its results in one user turn, as pi-ai 1.6.0", async () => {
    mock().enqueue({ text: "fine" });
    const model = mockModel(mock(), "anthropic-messages");
    await collect(createAnthropicProvider().stream(request(model, { messages: priorToolTurn(), tools: [BASH_TOOL] })));

    const body = mock().requests[0].body;
    expect(mock().requests[0].path).toBe("/v1/messages");
    // Cache breakpoints as pi-ai puts them: the system prompt, the last tool, the last message's last block.
    expect(body).toMatchObject({
      model: "mock-1",
      stream: true,
      max_tokens: 4096,
      system: [{ type: "text", text: "You are a test.", cache_control: { type: "ephemeral" } }],
    });
    // A thinking model at level off is told so, as pi 1.6 does.
    expect(body.thinking).toEqual({ type: "disabled" });
    expect(body.tools).toEqual([
      {
        name: "bash",
        description: "Run a shell command",
        eager_input_streaming: true,
        input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
        cache_control: { type: "ephemeral" },
      },
    ]);
    expect(body.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "what is in here?" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: PIXEL } },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Let me look." },
          { type: "tool_use", id: "call_1", name: "bash", input: { command: "ls" } },
          { type: "tool_use", id: "call_2", name: "bash", input: { command: "cat x" } },
        ],
      },
      {
        role: "user",
        content: [
          // Text-only results as one string, as pi-ai sends them.
          { type: "tool_result", tool_use_id: "call_1", content: "a.txt", is_error: false },
          {
            type: "tool_result",
            tool_use_id: "call_2",
            content: "no such file",
            is_error: true,
            cache_control: { type: "ephemeral" },
          },
        ],
      },
    ]);
  });

  it.each<[ThinkingLevel, number | undefined]>([
    ["off", undefined], // { type: "disabled" }
    ["minimal", 1024],
    ["low", 2048],
    // maxTokens is 4096: the budget shrinks so the answer keeps 1024 tokens.
    ["high", 3072],
  ])("thinking level %s gives budget_tokens %s", async (level, budget) => {
    mock().enqueue({ text: "ok" });
    await collect(
      createAnthropicProvider().stream(request(mockModel(mock(), "anthropic-messages"), { thinkingLevel: level })),
    );
    const { body } = mock().requests[0];
    if (budget === undefined) expect(body.thinking).toEqual({ type: "disabled" });
    else expect(body.thinking).toEqual({ type: "enabled", budget_tokens: budget, display: "summarized" });
    if (budget !== undefined) expect(body.max_tokens).toBeGreaterThan(budget);
  });

  it("sends no thinking for a model without reasoning", async () => {
    mock().enqueue({ text: "ok" });
    const model = { ...mockModel(mock(), "anthropic-messages"), reasoning: false };
    await collect(createAnthropicProvider().stream(request(model, { thinkingLevel: "high" })));
    expect(mock().requests[0].body.thinking).toBeUndefined();
  });

  it("streams thinking with its signature, then text", async () => {
    mock().enqueue({ thinking: "Let me think.", thinkingSignature: "sig-abc", text: "Answer." });
    const events = await collect(createAnthropicProvider().stream(request(mockModel(mock(), "anthropic-messages"))));
    expect(events.map((e) => e.type)).toEqual([
      "start",
      "thinking_start",
      "thinking_delta",
      "thinking_end",
      "text_start",
      "text_delta",
      "text_end",
      "done",
    ]);
    expect(finalMessage(events).content).toEqual([
      { type: "thinking", thinking: "Let me think.", thinkingSignature: "sig-abc" },
      { type: "text", text: "Answer." },
    ]);
  });

  it("keeps redacted thinking and sends it back, with signed thinking, on the next request", async () => {
    mock().enqueue(
      { redactedThinking: "opaque-payload", thinking: "Visible.", thinkingSignature: "sig-1", text: "ok" },
      { text: "again" },
    );
    const model = mockModel(mock(), "anthropic-messages");
    const provider = createAnthropicProvider();
    const first = finalMessage(await collect(provider.stream(request(model))));
    expect(first.content[0]).toEqual({
      type: "thinking",
      thinking: "[Reasoning redacted]",
      thinkingSignature: "opaque-payload",
      redacted: true,
    });

    const messages: LlmMessage[] = [
      { role: "user", content: "hi", timestamp: 1 },
      first,
      { role: "user", content: "more", timestamp: 3 },
    ];
    await collect(provider.stream(request(model, { messages })));
    expect(mock().requests[1].body.messages[1]).toEqual({
      role: "assistant",
      content: [
        { type: "redacted_thinking", data: "opaque-payload" },
        { type: "thinking", thinking: "Visible.", signature: "sig-1" },
        { type: "text", text: "ok" },
      ],
    });
  });
});
