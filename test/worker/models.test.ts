import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { defaultProvider, loadCatalogue, resolveApiKey, resolveModel } from "../../worker/providers/models.js";
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
    scripted: { baseUrl: "http://127.0.0.1:9/v1", api: "openai-completions", apiKey: "!printf from-command", models: [{ id: "m" }] },
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
    expect(() => resolveModel(loadCatalogue(undefined), "nope")).toThrow(/unknown provider "nope"; known: anthropic, openai, faux/);
  });

  it("names the file and field of a bad models.json", () => {
    expect(() => catalogueWith({ providers: { x: { models: [{ id: 5 }] } } })).toThrow(/models\.json: \/providers\/x\/models\/0\/id/);
    expect(() => catalogueWith({ providers: { x: { baseUrl: "http://h", api: "gemini", models: [{ id: "a" }] } } })).toThrow(/use "openai-completions" or "anthropic-messages"/);
  });

  it("resolves keys: flag, then a literal / env var / !command from models.json, then the provider's env var", () => {
    const c = catalogueWith(local);
    expect(resolveApiKey(c, "ollama", "from-flag", {})).toBe("from-flag");
    expect(resolveApiKey(c, "ollama", undefined, { LOCAL_TEST_KEY_VAR: "from-env-var" })).toBe("from-env-var");
    expect(resolveApiKey(c, "ollama", undefined, {})).toBe("LOCAL_TEST_KEY_VAR");
    expect(resolveApiKey(c, "scripted", undefined, {})).toBe("from-command");
    expect(resolveApiKey(c, "anthropic", undefined, { ANTHROPIC_API_KEY: "sk-ant" })).toBe("sk-ant");
    expect(resolveApiKey(c, "openai", undefined, {})).toBeUndefined();
  });

  it("runs an apiKey command once and reuses its output", () => {
    const scratch = tempDir();
    dirs.push(scratch);
    const counter = join(scratch.path, "count");
    const c = catalogueWith({
      providers: { cmd: { baseUrl: "http://127.0.0.1:9/v1", api: "openai-completions", apiKey: `!echo x >> ${counter}; printf key`, models: [{ id: "m" }] } },
    });
    expect(resolveApiKey(c, "cmd", undefined, {})).toBe("key");
    expect(resolveApiKey(c, "cmd", undefined, {})).toBe("key");
    expect(readFileSync(counter, "utf8")).toBe("x\n");
  });

  it("defaults to a provider that has a key, else faux", () => {
    expect(defaultProvider({ ANTHROPIC_API_KEY: "a" })).toBe("anthropic");
    expect(defaultProvider({ OPENAI_API_KEY: "o" })).toBe("openai");
    expect(defaultProvider({})).toBe("faux");
  });
});
