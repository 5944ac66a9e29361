import { describe, expect, it } from "vitest";
import { formatTokenCount, fuzzyTokenMatches, listModelsJson, listModelsLines } from "../../cli/list-models.js";
import type { Model } from "../../shared/schema/messages.js";

describe("formatTokenCount (pi's numbers)", () => {
  it.each([
    [512, "512"],
    [1000, "1K"],
    [4096, "4.1K"],
    [128_000, "128K"],
    [16_384, "16.4K"],
    [1_000_000, "1M"],
    [1_047_576, "1.0M"],
    [2_500_000, "2.5M"],
  ])("%d is %s", (n, text) => expect(formatTokenCount(n)).toBe(text));
});

describe("fuzzyTokenMatches (pi's search)", () => {
  it.each([
    ["gpt", "openai gpt-5.4", true],
    ["o5", "openai gpt-5.4", true],
    ["GPT", "openai gpt-5.4", true],
    ["gpt5", "openai gpt-5.4", true],
    ["5gpt", "openai gpt-5.4", true],
    ["54mini", "openai gpt-5.4-mini", true],
    ["45", "openai gpt-5.4", false],
    ["sonnet", "openai gpt-5.4", false],
    ["", "anything", true],
  ])("%s in %s: %s", (token, text, matches) => expect(fuzzyTokenMatches(token, text)).toBe(matches));
});

const model = (provider: string, id: string, extra: Partial<Model> = {}): Model =>
  ({
    provider,
    id,
    name: id,
    api: "openai-completions",
    baseUrl: "http://h",
    reasoning: false,
    input: ["text"],
    contextWindow: 128_000,
    maxTokens: 16_384,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    ...extra,
  }) as Model;

describe("listModelsLines", () => {
  const models = [
    model("openai", "gpt-5.5", { reasoning: true, input: ["text", "image"] }),
    model("anthropic", "claude-x"),
    model("openai", "gpt-5.4"),
  ];

  it("sorts by provider then id, as pi", () => {
    expect(listModelsLines(models, undefined)).toEqual([
      "provider   model     context  max-out  thinking  images",
      "anthropic  claude-x  128K     16.4K    no        no    ",
      "openai     gpt-5.4   128K     16.4K    no        no    ",
      "openai     gpt-5.5   128K     16.4K    yes       yes   ",
    ]);
  });

  it("keeps the models every search word matches", () => {
    expect(
      listModelsLines(models, "open 55")
        .slice(1)
        .map((l) => l.split(/\s+/)[1]),
    ).toEqual(["gpt-5.5"]);
    expect(listModelsLines(models, "zzz")).toEqual(['No models matching "zzz"']);
  });

  it("says how to get a model when none can be used", () => {
    expect(listModelsLines([], undefined)[0]).toMatch(/^No models available: set a provider's API key/);
  });
});

describe("listModelsJson (--list-models --mode json)", () => {
  it("gives one object per matching model, in the table's order, and nothing when none match", () => {
    const models = [model("openai", "gpt-5.5", { reasoning: true }), model("anthropic", "claude-x")];
    expect(listModelsJson(models, undefined).map((l) => JSON.parse(l))).toEqual([
      {
        provider: "anthropic",
        id: "claude-x",
        name: "claude-x",
        contextWindow: 128_000,
        maxTokens: 16_384,
        reasoning: false,
        input: ["text"],
      },
      {
        provider: "openai",
        id: "gpt-5.5",
        name: "gpt-5.5",
        contextWindow: 128_000,
        maxTokens: 16_384,
        reasoning: true,
        input: ["text"],
      },
    ]);
    expect(listModelsJson(models, "zzz")).toEqual([]);
    expect(listModelsJson([], undefined)).toEqual([]);
  });
});
