/**
 * The Responses API input as pi-ai 1.6.0 builds it, as a pure table: the system prompt as
 * an instruction item, and by what the model's `compat` says, later system messages in
 * place, tools in `additional_tools` items or loaded by a client tool search, and the
 * level in `configuration_update` items. The whole request against pi 1.6.0's own is in
 * test/integration/mid-convo-wire-oracle.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { AssistantMessage, LlmMessage, Model, SystemMessage } from "../../shared/schema/messages.js";
import { emptyUsage } from "../../shared/schema/messages.js";
import { buildResponsesParams } from "../../worker/providers/openai-responses.js";
import type { ProviderRequest } from "../../worker/types.js";

type Json = Record<string, any>;

const READ = { name: "read", description: "Read a file", parameters: { type: "object", properties: {} } };
const HELLO = { name: "hello", description: "Say hello", parameters: { type: "object", properties: {} } };

function model(compat: Record<string, unknown>): Model {
  return {
    id: "gpt-x",
    name: "x",
    api: "openai-responses",
    provider: "openai",
    baseUrl: "http://h",
    reasoning: true,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 200_000,
    maxTokens: 8192,
    compat,
  };
}

const user = (text: string): LlmMessage => ({ role: "user", content: text, timestamp: 0 });
const reply = (text: string, extra: Partial<AssistantMessage> = {}): AssistantMessage => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "openai-responses",
  provider: "openai",
  model: "gpt-x",
  usage: emptyUsage(),
  stopReason: "stop",
  timestamp: 0,
  ...extra,
});
const system = (m: Partial<SystemMessage>): SystemMessage => ({ role: "system", content: "", timestamp: 0, ...m });

/** A session: the prompt with `read`, a reply made at "high", then `hello` replacing `read` before the next prompt. */
function session(m: Model): ProviderRequest {
  return {
    model: m,
    systemPrompt: "You help.",
    messages: [user("a"), reply("b", { providerThinkingLevel: "high" }), user("c")],
    tools: [HELLO],
    systemMessages: [
      { at: 0, message: system({ content: "You help.", toolsAdded: [READ] }) },
      { at: 2, message: system({ toolsAdded: [HELLO], toolsRemoved: [{ name: "read" }] }) },
    ],
    thinkingLevel: "medium",
    sessionId: "s-1",
    signal: new AbortController().signal,
  };
}

/** Each input item as a word. */
const shape = (input: Json[]) =>
  input.map((i) =>
    i.type === "additional_tools"
      ? `tools ${(i.tools as Json[]).map((t) => t.name).join(",")}`
      : i.type === "configuration_update"
        ? `effort ${i.reasoning.effort}`
        : i.type === "message"
          ? i.id
          : (i.role ?? i.type),
  );

describe("buildResponsesParams", () => {
  it("without the compat: the current prompt as the first instruction, the current tools at the top", () => {
    const { params, providerThinkingLevel } = buildResponsesParams(session(model({})));
    expect(shape(params.input as Json[])).toEqual(["developer", "user", "msg_pi_1", "user"]);
    expect((params.tools as Json[]).map((t) => t.name)).toEqual(["hello"]);
    // No `strict` unless the server takes the field; the session's id keys the prompt cache.
    expect((params.tools as Json[])[0].strict).toBeUndefined();
    expect(params).toMatchObject({ prompt_cache_key: "s-1", reasoning: { effort: "medium", summary: "auto" } });
    expect(providerThinkingLevel).toBeUndefined();
  });

  it("with additional tools and effort: every tool in items, the removal said, the level in updates", () => {
    const m = model({
      supportsMidConvoSystemMessages: true,
      supportsAdditionalTools: true,
      supportsMidConvoEffort: true,
    });
    const { params, providerThinkingLevel } = buildResponsesParams(session(m));
    const input = params.input as Json[];
    expect(shape(input)).toEqual([
      "tools read",
      "developer",
      "user",
      "effort high",
      "msg_pi_1",
      "developer",
      "tools hello",
      "developer",
      "user",
      "effort medium",
    ]);
    expect(input[5].content).toMatch(/^This is an incremental tools update\./);
    expect(input[7].content).toBe("The following tools are no longer available. Do not call them:\n- read");
    expect(params.tools).toBeUndefined();
    expect(params.reasoning).toEqual({ effort: "medium", summary: "auto" });
    expect(providerThinkingLevel).toBe("medium");
  });

  it("with a client tool search: an added tool is loaded where it was added, a removal changes the top", () => {
    const m = model({ supportsMidConvoSystemMessages: true, supportsToolSearch: true });
    const { params } = buildResponsesParams(session(m));
    const input = params.input as Json[];
    // The removal makes the request's tools the state after it: nothing is loaded or said in place.
    expect(shape(input)).toEqual(["developer", "user", "msg_pi_1", "user"]);
    expect((params.tools as Json[]).map((t) => t.name)).toEqual(["hello"]);
    const added = session(m);
    added.systemMessages![1]!.message = system({ toolsAdded: [HELLO] });
    added.tools = [READ, HELLO];
    const loaded = buildResponsesParams(added).params;
    expect(shape(loaded.input as Json[])).toEqual([
      "developer",
      "user",
      "msg_pi_1",
      "tool_search_call",
      "tool_search_output",
      "user",
    ]);
    const [call, output] = (loaded.input as Json[]).slice(3);
    expect(call.call_id).toMatch(/^pi_tool_load_[0-9a-z]+$/);
    expect(output).toMatchObject({ call_id: call.call_id, tools: [{ name: "hello", defer_loading: true }] });
    expect((loaded.tools as Json[]).map((t) => t.name)).toEqual(["read"]);
  });
});
