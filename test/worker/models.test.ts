import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAnthropicProvider } from "../../worker/providers/anthropic.js";
import {
  applyProviders,
  BUILT_IN_MODELS,
  checkProviderConfig,
  defaultProvider,
  loadCatalogue,
  resolveApiKey,
  resolveModel,
} from "../../worker/providers/models.js";
import { startMockModelServer } from "../support/mock-model-server.js";
import { tempDir } from "../support/rpc-worker.js";

const dirs: { path: string; cleanup: () => void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});

function catalogueWith(json: unknown) {
  const dir = tempDir();
  dirs.push(dir);
  const file = join(dir.path, "models.json");
  writeFileSync(file, JSON.stringify(json));
  return loadCatalogue(file);
}

const local = {
  providers: {
    ollama: {
      baseUrl: "http://127.0.0.1:11434/v1",
      api: "openai-completions",
      apiKey: "LOCAL_TEST_KEY_VAR",
      models: [{ id: "qwen-coder", contextWindow: 32768 }],
    },
    scripted: {
      baseUrl: "http://127.0.0.1:9/v1",
      api: "openai-completions",
      apiKey: "!printf from-command",
      models: [{ id: "m" }],
    },
  },
};

describe("model catalogue", () => {
  it("has the built-in providers without a models.json", () => {
    const c = loadCatalogue(undefined);
    expect(new Set(c.models.map((m) => m.provider))).toEqual(new Set(["anthropic", "openai", "faux"]));
  });

  it.each([
    ["provider only: its first model", "faux", undefined, "faux/faux-1"],
    ["provider/id in --model", undefined, "openai/gpt-4.1", "openai/gpt-4.1"],
    ["a custom provider from models.json", "ollama", "qwen-coder", "ollama/qwen-coder"],
    ["an unlisted id of a known provider", "anthropic", "claude-future-9", "anthropic/claude-future-9"],
  ])("resolves %s", (_name, provider, model, expected) => {
    const c = catalogueWith(local);
    const m = resolveModel(c, provider, model);
    expect(`${m.provider}/${m.id}`).toBe(expected);
  });

  it("takes settings of custom models from models.json", () => {
    const m = resolveModel(catalogueWith(local), "ollama", "qwen-coder");
    expect(m).toMatchObject({ api: "openai-completions", baseUrl: "http://127.0.0.1:11434/v1", contextWindow: 32768 });
  });

  it("names the known providers for an unknown one", () => {
    expect(() => resolveModel(loadCatalogue(undefined), "nope")).toThrow(
      /unknown provider "nope"; known: anthropic, openai, faux/,
    );
  });

  it("names the file and field of a bad models.json", () => {
    expect(() => catalogueWith({ providers: { x: { models: [{ id: 5 }] } } })).toThrow(
      /models\.json: \/providers\/x\/models\/0\/id/,
    );
    expect(() =>
      catalogueWith({ providers: { x: { baseUrl: "http://h", api: "gemini", models: [{ id: "a" }] } } }),
    ).toThrow(/use "openai-completions", "openai-responses" or "anthropic-messages"/);
  });

  it("resolves keys: flag, then a literal / env var / !command from models.json, then the provider's env var", () => {
    const c = catalogueWith(local);
    expect(resolveApiKey(c, "ollama", "from-flag", {})).toBe("from-flag");
    expect(resolveApiKey(c, "ollama", undefined, { LOCAL_TEST_KEY_VAR: "from-env-var" })).toBe("from-env-var");
    expect(resolveApiKey(c, "ollama", undefined, {})).toBe("LOCAL_TEST_KEY_VAR");
    expect(resolveApiKey(c, "scripted", undefined, {})).toBe("from-command");
    expect(resolveApiKey(c, "anthropic", undefined, { ANTHROPIC_API_KEY: "sk-ant" })).toBe("sk-ant");
    expect(resolveApiKey(c, "openai", undefined, {})).toBeUndefined();
    // An empty variable is no key, as pi reads it (a shell's `export OPENAI_API_KEY=`).
    expect(resolveApiKey(c, "openai", undefined, { OPENAI_API_KEY: "" })).toBeUndefined();
    expect(resolveApiKey(c, "ollama", undefined, { LOCAL_TEST_KEY_VAR: "" })).toBe("LOCAL_TEST_KEY_VAR");
  });

  it("runs an apiKey command once and reuses its output", () => {
    const scratch = tempDir();
    dirs.push(scratch);
    const counter = join(scratch.path, "count");
    const c = catalogueWith({
      providers: {
        cmd: {
          baseUrl: "http://127.0.0.1:9/v1",
          api: "openai-completions",
          apiKey: `!echo x >> ${counter}; printf key`,
          models: [{ id: "m" }],
        },
      },
    });
    expect(resolveApiKey(c, "cmd", undefined, {})).toBe("key");
    expect(resolveApiKey(c, "cmd", undefined, {})).toBe("key");
    expect(readFileSync(counter, "utf8")).toBe("x\n");
  });

  it("a built-in provider's baseUrl and headers alone re-aim its built-in models, as pi's proxy setup", () => {
    const c = catalogueWith({
      providers: { anthropic: { baseUrl: "https://proxy.example.com", headers: { "x-team": "a" } } },
    });
    const model = resolveModel(c, "anthropic", "claude-opus-4-7");
    expect(model).toMatchObject({ baseUrl: "https://proxy.example.com", headers: { "x-team": "a" } });
    // Its facts stay the catalogue's.
    expect(model.cost).toEqual(BUILT_IN_MODELS.find((m) => m.id === "claude-opus-4-7")!.cost);
    expect(resolveModel(c, "openai", "gpt-5.4").baseUrl).toBe("https://api.openai.com/v1");
  });

  it("defaults to a provider that has a key, else faux", () => {
    expect(defaultProvider({ ANTHROPIC_API_KEY: "a" })).toBe("anthropic");
    expect(defaultProvider({ OPENAI_API_KEY: "o" })).toBe("openai");
    expect(defaultProvider({})).toBe("faux");
  });
});

describe("built-in catalogue is current", () => {
  it("defaults to pi 1.6.0's models (its defaultModelPerProvider)", () => {
    const catalogue = loadCatalogue();
    expect(resolveModel(catalogue, "anthropic").id).toBe("claude-opus-5-5");
    expect(resolveModel(catalogue, "openai").id).toBe("gpt-6.2-sol");
  });

  // The SDK warns (console.warn) on every request to a model on its deprecation list, and
  // when a model that thinks adaptively gets `thinking.type: "enabled"`. The real SDK decides.
  // pi 1.6.0 still lists four models the SDK calls deprecated (Opus and Sonnet 4.5); we list
  // what pi lists, and those get the SDK's warning (the test below), the rest none.
  const sdkDeprecated = Object.keys(
    createRequire(import.meta.url)(
      join(import.meta.dirname, "../../node_modules/@anthropic-ai/sdk/internal/data/deprecated-models.js"),
    ).DEPRECATED_MODELS as Record<string, string>,
  );
  it("lists the SDK's deprecated models only where pi 1.6.0 does (Opus and Sonnet 4.5)", () => {
    expect(BUILT_IN_MODELS.filter((m) => sdkDeprecated.includes(m.id)).map((m) => m.id)).toEqual([
      "claude-opus-4-5",
      "claude-opus-4-5-20251101",
      "claude-sonnet-4-5",
      "claude-sonnet-4-5-20250929",
    ]);
  });
  it.each(
    BUILT_IN_MODELS.filter((m) => m.api === "anthropic-messages" && !sdkDeprecated.includes(m.id)).map(
      (m) => [m.id, m] as const,
    ),
  )("%s: no SDK warning on a request with thinking", async (_id, builtIn) => {
    const server = await startMockModelServer();
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      server.enqueue({ text: "ok" });
      const model = { ...builtIn, baseUrl: server.url, maxTokens: 4096 };
      const events = [];
      for await (const e of createAnthropicProvider().stream({
        model,
        systemPrompt: "test",
        messages: [{ role: "user", content: "hi", timestamp: 1 }],
        tools: [],
        thinkingLevel: "medium",
        apiKey: "k",
        signal: new AbortController().signal,
      })) {
        events.push(e);
      }
      expect(events.at(-1)?.type).toBe("done");
      expect(server.requests[0].body.model).toBe(builtIn.id);
      expect(server.requests[0].body.thinking).toBeDefined();
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
      await server.close();
    }
  });

  it("an old model still gets the SDK's warning (the check above can fail)", async () => {
    const server = await startMockModelServer();
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      server.enqueue({ text: "ok" });
      const model = { ...BUILT_IN_MODELS[0], id: "claude-sonnet-4-5", baseUrl: server.url, maxTokens: 4096 };
      for await (const _ of createAnthropicProvider().stream({
        model,
        systemPrompt: "test",
        messages: [{ role: "user", content: "hi", timestamp: 1 }],
        tools: [],
        thinkingLevel: "off",
        apiKey: "k",
        signal: new AbortController().signal,
      })) {
        // drain
      }
      expect(warn).toHaveBeenCalledWith(expect.stringContaining("claude-sonnet-4-5' is deprecated"));
    } finally {
      warn.mockRestore();
      await server.close();
    }
  });
});

describe("providers registered by extensions (pi's registerProvider rules)", () => {
  const base = { models: BUILT_IN_MODELS, keySettings: new Map<string, string>() };
  const proxy = {
    baseUrl: "http://proxy",
    api: "anthropic-messages",
    apiKey: "PROXY_KEY",
    models: [{ id: "p1" }, { id: "p2", baseUrl: "http://other" }],
  };

  it.each([
    {
      name: "models without baseUrl",
      config: { apiKey: "K", api: "openai-completions", models: [{ id: "m" }] },
      error: /"baseUrl" is required when defining models/,
    },
    {
      name: "models without apiKey",
      config: { baseUrl: "http://x", api: "openai-completions", models: [{ id: "m" }] },
      error: /"apiKey" .* is required/,
    },
    {
      name: "an api we do not speak",
      config: { baseUrl: "http://x", apiKey: "K", api: "gitlab-duo-api", models: [{ id: "m" }] },
      error: /model "m": api "gitlab-duo-api" is not one pi-orch speaks/,
    },
    {
      name: "no api at all",
      config: { baseUrl: "http://x", apiKey: "K", models: [{ id: "m" }] },
      error: /api "\(none\)"/,
    },
    { name: "a wrong type", config: { baseUrl: 5 }, error: /^provider "p": / },
  ])("refuses $name", ({ config, error }) => {
    expect(() => checkProviderConfig("p", config)).toThrow(error);
  });

  it.each([
    {
      name: "a config with models replaces the provider's models",
      registered: [{ name: "anthropic", config: proxy }],
      expected: { anthropic: ["p1@http://proxy", "p2@http://other"] },
      key: { anthropic: "PROXY_KEY" },
    },
    {
      name: "baseUrl alone re-aims the existing models",
      registered: [{ name: "openai", config: { baseUrl: "http://gw/v1" } }],
      expected: { openai: BUILT_IN_MODELS.filter((m) => m.provider === "openai").map((m) => `${m.id}@http://gw/v1`) },
      key: {},
    },
    {
      name: "nothing registered (or all unregistered) is models.json's list",
      registered: [],
      expected: {
        anthropic: BUILT_IN_MODELS.filter((m) => m.provider === "anthropic").map((m) => `${m.id}@${m.baseUrl}`),
      },
      key: {},
    },
  ])("$name", ({ registered, expected, key }) => {
    const out = applyProviders(
      base,
      registered.map((r) => ({ name: r.name, config: checkProviderConfig(r.name, r.config) })),
    );
    for (const [provider, list] of Object.entries(expected)) {
      expect(out.models.filter((m) => m.provider === provider).map((m) => `${m.id}@${m.baseUrl}`)).toEqual(list);
    }
    expect(Object.fromEntries(out.keySettings)).toEqual(key);
    expect(base.models).toBe(BUILT_IN_MODELS);
  });
});
