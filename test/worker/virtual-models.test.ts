import { describe, expect, it } from "vitest";
import type { AgentMessage, AssistantMessage, Model } from "../../shared/schema/messages.js";
import { emptyUsage, supportedThinkingLevels } from "../../shared/schema/messages.js";
import {
  createVirtualModel,
  routeReason,
  virtualModelUsable,
  withVirtualModels,
} from "../../worker/extensions/virtual-models.js";

const route = () => undefined;
const physical = (provider: string, id: string): Model => ({
  ...createVirtualModel({ provider, id, name: id, route }),
  api: "openai-completions",
});
const reply = (stopReason: AssistantMessage["stopReason"]): AssistantMessage => ({
  role: "assistant",
  content: [],
  api: "openai-completions",
  provider: "p",
  model: "m",
  usage: emptyUsage(),
  stopReason,
  timestamp: 0,
});
const user: AgentMessage = { role: "user", content: "hi", timestamp: 0 };
const custom: AgentMessage = { role: "custom", customType: "x", content: "note", display: true, timestamp: 0 };

describe("virtual models", () => {
  it("are catalogue entries of api pi-virtual offering exactly their thinking levels, as pi's", () => {
    const m = createVirtualModel({ provider: "router", id: "auto", thinkingLevels: ["low", "high"], route });
    expect(m).toMatchObject({ api: "pi-virtual", baseUrl: "", reasoning: true, contextWindow: 0, maxTokens: 0 });
    expect(supportedThinkingLevels(m)).toEqual(["low", "high"]);
    expect(supportedThinkingLevels(createVirtualModel({ provider: "r", id: "plain", route }))).toEqual(["off"]);
  });

  it("join the catalogue after the physical models and hide a physical one of the same id", () => {
    const models = [physical("openai", "auto"), physical("openai", "gpt")];
    const joined = withVirtualModels(models, [{ path: "x.ts", definition: { provider: "openai", id: "auto", route } }]);
    expect(joined.map((m) => `${m.provider}/${m.id}:${m.api}`)).toEqual([
      "openai/gpt:openai-completions",
      "openai/auto:pi-virtual",
    ]);
  });

  it("are usable under a provider of their own, or when their provider's physical models are", () => {
    const v = createVirtualModel({ provider: "openai", id: "auto", route });
    expect(virtualModelUsable(v, [v], () => false)).toBe(true);
    expect(virtualModelUsable(v, [v, physical("openai", "gpt")], () => false)).toBe(false);
    expect(virtualModelUsable(v, [v, physical("openai", "gpt")], () => true)).toBe(true);
  });

  it.each<[string, AgentMessage[], AssistantMessage | undefined, string]>([
    ["a user message after the last response", [reply("stop"), user], undefined, "user"],
    ["a user message followed by an extension's", [user, custom], undefined, "user"],
    ["only an extension message after the response", [user, reply("stop"), custom], undefined, "continuation"],
    ["tool results after the response", [user, reply("toolUse")], undefined, "continuation"],
    ["a retried failure", [user], reply("error"), "retry"],
  ])("say why a request is made: %s", (_, messages, failed, reason) => {
    expect(routeReason(messages, failed)).toBe(reason);
  });
});
