import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { LlmMessage, Model, SystemMessage } from "../../shared/schema/messages.js";
import { detectCompat, resolveCompat } from "../../worker/providers/compat.js";
import { loadCatalogue } from "../../worker/providers/models.js";
import { buildOpenAIParams } from "../../worker/providers/openai.js";
import type { PlacedSystemMessage } from "../../worker/types.js";
import { tempDir } from "../support/rpc-worker.js";

const model = (over: Partial<Model>): Model => ({
  id: "m",
  name: "m",
  api: "openai-completions",
  provider: "local",
  baseUrl: "http://127.0.0.1:8000/v1",
  reasoning: true,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 128_000,
  maxTokens: 1000,
  ...over,
});

describe("compat detection per host", () => {
  it.each([
    [
      "OpenAI",
      { provider: "openai", baseUrl: "https://api.openai.com/v1" },
      {
        maxTokensField: "max_completion_tokens",
        thinkingFormat: "openai",
        requiresReasoningContentOnAssistantMessages: false,
        supportsStrictMode: true,
      },
    ],
    [
      "Azure OpenAI",
      { provider: "azure", baseUrl: "https://x.openai.azure.com/openai/v1" },
      { maxTokensField: "max_completion_tokens" },
    ],
    [
      "DeepSeek",
      { provider: "ds", baseUrl: "https://api.deepseek.com" },
      { thinkingFormat: "deepseek", requiresReasoningContentOnAssistantMessages: true, maxTokensField: "max_tokens" },
    ],
    [
      "OpenRouter",
      { provider: "or", baseUrl: "https://openrouter.ai/api/v1" },
      { thinkingFormat: "openrouter", maxTokensField: "max_completion_tokens" },
    ],
    [
      "Ollama",
      { provider: "ollama", baseUrl: "http://127.0.0.1:11434/v1" },
      {
        thinkingFormat: "openai",
        maxTokensField: "max_tokens",
        supportsUsageInStreaming: true,
        supportsStrictMode: false,
      },
    ],
    [
      "xAI",
      { provider: "xai", baseUrl: "https://api.x.ai/v1" },
      { supportsReasoningEffort: false, supportsStrictMode: false },
    ],
    [
      "Moonshot (rejects strict)",
      { provider: "kimi", baseUrl: "https://api.moonshot.ai/v1" },
      { supportsStrictMode: false },
    ],
    [
      "Cloudflare AI gateway (rejects strict)",
      { provider: "cf", baseUrl: "https://gateway.ai.cloudflare.com/v1/a/b/openai" },
      { supportsStrictMode: false },
    ],
  ] as const)("%s", (_name, where, expected) => {
    expect(detectCompat(where)).toMatchObject(expected);
  });

  it("models.json compat wins field by field", () => {
    const resolved = resolveCompat(
      model({ provider: "deepseek", compat: { maxTokensField: "max_completion_tokens" } }),
    );
    expect(resolved).toMatchObject({ maxTokensField: "max_completion_tokens", thinkingFormat: "deepseek" });
  });
});

describe("what the compat fields send", () => {
  const request = (m: Model, thinkingLevel: "off" | "high" = "high") => ({
    model: m,
    systemPrompt: "s",
    messages: [],
    tools: [],
    thinkingLevel,
    signal: new AbortController().signal,
  });

  it.each([
    [
      "openai: reasoning_effort",
      {},
      { reasoning_effort: "high", max_tokens: 1000, stream_options: { include_usage: true } },
    ],
    [
      "deepseek: thinking enabled",
      { thinkingFormat: "deepseek" },
      { thinking: { type: "enabled" }, reasoning_effort: "high" },
    ],
    ["openrouter: reasoning object", { thinkingFormat: "openrouter" }, { reasoning: { effort: "high" } }],
    ["qwen: enable_thinking", { thinkingFormat: "qwen" }, { enable_thinking: true }],
    [
      "qwen-chat-template",
      { thinkingFormat: "qwen-chat-template" },
      { chat_template_kwargs: { enable_thinking: true, preserve_thinking: true } },
    ],
    ["max_completion_tokens", { maxTokensField: "max_completion_tokens" }, { max_completion_tokens: 1000 }],
  ] as const)("%s", (_name, compat, expected) => {
    expect(buildOpenAIParams(request(model({ compat })))).toMatchObject(expected);
  });

  it("no usage request when the server does not support it, no effort when switched off", () => {
    const params = buildOpenAIParams(
      request(model({ compat: { supportsUsageInStreaming: false, supportsReasoningEffort: false } })),
    );
    expect(params.stream_options).toBeUndefined();
    expect(params.reasoning_effort).toBeUndefined();
  });

  it("DeepSeek with thinking off says so", () => {
    expect(buildOpenAIParams(request(model({ provider: "deepseek" }), "off"))).toMatchObject({
      thinking: { type: "disabled" },
    });
  });
});

describe("system messages mid-conversation (supportsMidConvoSystemMessages)", () => {
  const tool = (name: string) => ({ name, description: name, parameters: { type: "object", properties: {} } });
  const system = (over: Partial<SystemMessage>): SystemMessage => ({
    role: "system",
    content: "",
    timestamp: 0,
    ...over,
  });
  const user = (text: string): LlmMessage => ({ role: "user", content: [{ type: "text", text }], timestamp: 0 });
  // A session: the prompt with read and bash, a prompt, bash removed, a prompt, hello added, a prompt.
  const placed: PlacedSystemMessage[] = [
    {
      at: 0,
      message: system({
        content: "base",
        sections: { cwd: "<cwd>/p</cwd>" },
        toolsAdded: [tool("read"), tool("bash")],
      }),
    },
    { at: 1, message: system({ sections: { tools: "only read" }, toolsRemoved: [{ name: "bash" }] }) },
    { at: 2, message: system({ toolsAdded: [tool("hello")] }) },
  ];
  const request = (compat: Record<string, unknown>, systemMessages?: PlacedSystemMessage[]) =>
    buildOpenAIParams({
      model: model({ reasoning: false, compat }),
      systemPrompt: "folded prompt",
      messages: [user("a"), user("b"), user("c")],
      tools: [tool("read"), tool("hello")],
      thinkingLevel: "off",
      signal: new AbortController().signal,
      ...(systemMessages ? { systemMessages } : {}),
    });
  const roles = (params: { messages: unknown[] }) =>
    (params.messages as { role: string; tools?: { function: { name: string } }[] }[]).map((m) =>
      m.tools ? `system+${m.tools.map((t) => t.function.name).join(",")}` : m.role,
    );
  const names = (params: { tools?: unknown[] }) =>
    (params.tools as { function: { name: string } }[] | undefined)?.map((t) => t.function.name);

  it("folds them into the first by default, or when the request has none placed", () => {
    for (const params of [request({}, placed), request({ supportsMidConvoSystemMessages: true })]) {
      expect(roles(params)).toEqual(["system", "user", "user", "user"]);
      expect(params.messages[0]).toEqual({ role: "system", content: "folded prompt" });
      expect(names(params)).toEqual(["read", "hello"]);
    }
  });

  it("sends each where it stands: the first whole, a later one as pi renders an update; tools all in the request", () => {
    const params = request({ supportsMidConvoSystemMessages: true }, placed);
    expect(roles(params)).toEqual(["system", "user", "system", "user", "user"]);
    expect(params.messages[0]).toEqual({ role: "system", content: "base\n\n<cwd>/p</cwd>" });
    expect(params.messages[2]).toEqual({
      role: "system",
      content: 'Updated system prompt section "tools":\n\nonly read',
    });
    expect(names(params)).toEqual(["read", "hello"]);
  });

  it("with tool additions in place: the request's tools as of the last removal, a later addition where it stands", () => {
    const params = request({ supportsMidConvoSystemMessages: true, supportsMidConvoToolAdditions: true }, placed);
    expect(roles(params)).toEqual(["system", "user", "system", "user", "system+hello", "user"]);
    expect(names(params)).toEqual(["read"]);
  });

  it("instructions go as developer for a reasoning model of a host that takes that role", () => {
    const params = buildOpenAIParams({
      model: model({ compat: { supportsMidConvoSystemMessages: true, supportsDeveloperRole: true } }),
      systemPrompt: "folded prompt",
      messages: [user("a")],
      tools: [],
      thinkingLevel: "high",
      signal: new AbortController().signal,
      systemMessages: [{ at: 0, message: system({ content: "base" }) }],
    });
    expect(params.messages[0]).toEqual({ role: "developer", content: "base" });
  });
});

describe("compat in models.json", () => {
  const dirs: { cleanup: () => void }[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) d.cleanup();
  });

  it("merges provider and model compat; pi's other fields load unchanged", () => {
    const dir = tempDir();
    dirs.push(dir);
    const file = join(dir.path, "models.json");
    writeFileSync(
      file,
      JSON.stringify({
        providers: {
          local: {
            baseUrl: "http://127.0.0.1:8080/v1",
            api: "openai-completions",
            compat: { supportsUsageInStreaming: false, maxTokensField: "max_tokens", supportsStrictMode: false },
            models: [{ id: "a" }, { id: "b", compat: { maxTokensField: "max_completion_tokens" } }],
          },
        },
      }),
    );
    const models = loadCatalogue(file).models.filter((m) => m.provider === "local");
    expect(models.map((m) => m.compat)).toEqual([
      { supportsUsageInStreaming: false, maxTokensField: "max_tokens", supportsStrictMode: false },
      { supportsUsageInStreaming: false, maxTokensField: "max_completion_tokens", supportsStrictMode: false },
    ]);
  });

  it("a wrong value names the file and the field", () => {
    const dir = tempDir();
    dirs.push(dir);
    const file = join(dir.path, "models.json");
    writeFileSync(
      file,
      JSON.stringify({
        providers: {
          d: {
            baseUrl: "http://h",
            api: "openai-completions",
            models: [{ id: "r", compat: { maxTokensField: "bogus" } }],
          },
        },
      }),
    );
    expect(() => loadCatalogue(file)).toThrow(/models\.json: \/providers\/d\/models\/0\/compat\/maxTokensField/);
  });
});
