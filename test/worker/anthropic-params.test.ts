/**
 * The Messages API request as pi-ai 1.6.0 builds it, as a pure table: where the session's
 * later system messages go, tool changes in place, and the effort markers, by what the
 * model's `compat` says. The whole request against pi 1.6.0's own is in
 * test/integration/mid-convo-wire-oracle.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { AssistantMessage, LlmMessage, Model, SystemMessage } from "../../shared/schema/messages.js";
import { emptyUsage } from "../../shared/schema/messages.js";
import type { PlacedSystemMessage, ProviderRequest } from "../../worker/types.js";
import { buildAnthropicParams } from "../../worker/providers/anthropic-params.js";

type Json = Record<string, any>;

const READ = { name: "read", description: "Read a file", parameters: { type: "object", properties: {} } };
const HELLO = { name: "hello", description: "Say hello", parameters: { type: "object", properties: {} } };
const ALL_MIDCONVO = {
  supportsMidConvoSystemMessages: true,
  supportsMidConvoToolChanges: true,
  supportsMidConvoEffort: true,
};

function model(compat: Record<string, unknown>): Model {
  return {
    id: "claude-x",
    name: "x",
    api: "anthropic-messages",
    provider: "anthropic",
    baseUrl: "http://h",
    reasoning: true,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 200_000,
    maxTokens: 8192,
    compat: { forceAdaptiveThinking: true, ...compat },
  };
}

const user = (text: string): LlmMessage => ({ role: "user", content: text, timestamp: 0 });
function reply(text: string, extra: Partial<AssistantMessage> = {}): AssistantMessage {
  return {
    role: "assistant",
    content: [{ type: "text", text }],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude-x",
    usage: emptyUsage(),
    stopReason: "stop",
    timestamp: 0,
    ...extra,
  };
}
const system = (m: Partial<SystemMessage>): SystemMessage => ({ role: "system", content: "", timestamp: 0, ...m });

/** A session: the prompt with `read`, a reply made at "high", then `hello` replacing `read` before the next prompt. */
function session(m: Model, thinkingLevel: ProviderRequest["thinkingLevel"]): ProviderRequest {
  const placed: PlacedSystemMessage[] = [
    { at: 0, message: system({ content: "You help.", toolsAdded: [READ] }) },
    { at: 2, message: system({ toolsAdded: [HELLO], toolsRemoved: [{ name: "read" }] }) },
  ];
  return {
    model: m,
    systemPrompt: "You help.",
    messages: [user("a"), reply("b", { providerThinkingLevel: "high" }), user("c")],
    tools: [HELLO],
    systemMessages: placed,
    thinkingLevel,
    signal: new AbortController().signal,
  };
}

/** Each request message as a word: its role, a system turn's block types or effort. */
const shape = (params: Json) =>
  (params.messages as Json[]).map((m) =>
    m.role !== "system"
      ? m.role
      : m.output_config
        ? `effort ${m.output_config.effort}`
        : (m.content as Json[]).map((b) => b.type).join("+"),
  );

describe("buildAnthropicParams", () => {
  it("without the compat, later system messages fold into the prompt and the request's tools are the current ones", () => {
    const { params, providerThinkingLevel } = buildAnthropicParams(session(model({}), "high"));
    expect(shape(params)).toEqual(["user", "assistant", "user"]);
    expect((params.tools ?? []).map((t) => t.name)).toEqual(["hello"]);
    expect(params.output_config).toEqual({ effort: "high" });
    expect(params.betas).toBeUndefined();
    expect(providerThinkingLevel).toBeUndefined();
  });

  it("with it, the first tools stay with the placeholder, changes go in place and each reply gets its effort", () => {
    const { params, providerThinkingLevel } = buildAnthropicParams(session(model(ALL_MIDCONVO), "medium"));
    expect((params.tools ?? []).map((t) => t.name)).toEqual(["read", "__pi_deferred_placeholder__"]);
    // The change was made before "c" and goes after it: only an assistant turn may follow it.
    expect(shape(params)).toEqual([
      "user",
      "effort high",
      "assistant",
      "user",
      "tool_removal+tool_addition",
      "effort medium",
    ]);
    expect(params.output_config).toEqual({ effort: "low" });
    expect(params.thinking).toMatchObject({
      type: "adaptive",
      block_binding: { prefix_mismatch_behavior: "drop_block" },
    });
    expect(params.betas).toEqual([
      "mid-conversation-output-config-2026-07-01",
      "thinking-binding-controls-2026-08-01",
      "inline-tools-2026-09-15",
    ]);
    expect(providerThinkingLevel).toBe("medium");
  });

  it("a tool defined again under its name is one addition, no removal", () => {
    const request = session(model(ALL_MIDCONVO), "high");
    request.systemMessages![1]!.message = system({
      toolsAdded: [{ ...READ, description: "Read" }],
      toolsRemoved: [{ name: "read" }],
    });
    expect(shape(buildAnthropicParams(request).params)).toEqual([
      "user",
      "effort high",
      "assistant",
      "user",
      "tool_addition",
      "effort high",
    ]);
  });

  it("thinking off, where the model can stop thinking, sends no markers and disables thinking", () => {
    const { params, providerThinkingLevel } = buildAnthropicParams(session(model(ALL_MIDCONVO), "off"));
    expect(shape(params)).toEqual(["user", "assistant", "user", "tool_removal+tool_addition"]);
    expect(params.thinking).toEqual({ type: "disabled" });
    expect(params.output_config).toBeUndefined();
    expect(providerThinkingLevel).toBeUndefined();
  });

  it("text-only system messages in place when the model takes them but not tool changes", () => {
    const request = session(model({ supportsMidConvoSystemMessages: true }), "high");
    request.systemMessages![1]!.message = system({ sections: { rules: "Be brief." } });
    request.tools = [READ];
    const { params } = buildAnthropicParams(request);
    expect(shape(params)).toEqual(["user", "assistant", "user", "text"]);
    expect((params.messages.at(-1) as Json).content[0].text).toBe(
      'Updated system prompt section "rules":\n\nBe brief.',
    );
    expect((params.tools ?? []).map((t) => t.name)).toEqual(["read"]);
  });
});
