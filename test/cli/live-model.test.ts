import { describe, expect, it } from "vitest";
import { lastModelInSession } from "../../cli/commands/live-model.js";

const line = (o: unknown) => JSON.stringify(o);
const header = line({ type: "session", version: 3, id: "s", timestamp: "t", cwd: "/x" });
const change = (provider: string, modelId: string) =>
  line({ type: "model_change", provider, modelId, id: "a", parentId: null, timestamp: "t" });
const reply = (provider: string, model: string) =>
  line({
    type: "message",
    message: {
      role: "assistant",
      content: [],
      api: "openai-completions",
      provider,
      model,
      usage: {
        input: 1,
        output: 1,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: 2,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      },
      stopReason: "stop",
      timestamp: 1,
    },
    id: "b",
    parentId: "a",
    timestamp: "t",
  });
const user = line({
  type: "message",
  message: { role: "user", content: [{ type: "text", text: 'say "assistant" and "model_change"' }], timestamp: 1 },
  id: "c",
  parentId: "b",
  timestamp: "t",
});

describe("lastModelInSession", () => {
  it.each([
    ["no model recorded", [header], null],
    ["the opening model_change", [header, change("faux", "faux-1")], { provider: "faux", id: "faux-1" }],
    [
      "a later model_change wins",
      [header, change("faux", "faux-1"), reply("faux", "faux-1"), change("openai", "gpt-5.4")],
      { provider: "openai", id: "gpt-5.4" },
    ],
    [
      "an assistant reply after the change",
      [header, change("openai", "gpt-5.4"), reply("anthropic", "claude-opus-4-7")],
      { provider: "anthropic", id: "claude-opus-4-7" },
    ],
    [
      "a user text naming the words is not a model",
      [header, change("faux", "faux-1"), user],
      { provider: "faux", id: "faux-1" },
    ],
    [
      "a torn last line is skipped",
      [header, change("faux", "faux-1"), '{"type":"model_change","provider":"op'],
      { provider: "faux", id: "faux-1" },
    ],
    [
      "a reply that does not match its entry's schema is skipped",
      [
        header,
        change("faux", "faux-1"),
        reply("anthropic", "claude-opus-4-7").replace('"stopReason":"stop"', '"stopReason":42'),
      ],
      { provider: "faux", id: "faux-1" },
    ],
    ["an empty file", [""], null],
  ])("%s", (_name, lines, expected) => {
    expect(lastModelInSession(`${lines.join("\n")}\n`)).toEqual(expected);
  });
});
