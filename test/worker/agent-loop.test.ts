import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import type { AgentEvent, WorkerEvent } from "../../shared/schema/events.js";
import type { AgentMessage } from "../../shared/schema/messages.js";
import { Agent, AgentBusyError, userMessage } from "../../worker/agent/agent.js";
import { AutoRetry } from "../../worker/core/auto-retry.js";
import { createFauxProvider, type FauxReply } from "../../worker/providers/faux.js";
import { BUILT_IN_MODELS } from "../../worker/providers/models.js";
import type { AgentTool } from "../../worker/types.js";

const model = BUILT_IN_MODELS.find((m) => m.api === "faux")!;

/** A tool that waits until released (or aborted), recording the order things happen. */
function gateTool(log: string[]) {
  const gates = new Map<string, () => void>();
  const started = new Map<string, Promise<void>>();
  const startedResolvers = new Map<string, () => void>();
  const tool: AgentTool = {
    name: "gate",
    label: "gate",
    description: "waits for a test to release it",
    parameters: Type.Object({ key: Type.String() }),
    execute: (args, ctx) =>
      new Promise((resolve, reject) => {
        const key = (args as { key: string }).key;
        log.push(`start ${key}`);
        startedResolvers.get(key)?.();
        ctx.onUpdate?.({ content: [{ type: "text", text: `running ${key}` }] });
        gates.set(key, () => {
          log.push(`end ${key}`);
          resolve({ content: [{ type: "text", text: `done ${key}` }] });
        });
        ctx.signal.addEventListener("abort", () => reject(new Error(`aborted ${key}`)), { once: true });
      }),
  };
  return {
    tool,
    release: (key: string) => gates.get(key)!(),
    started: (key: string) => {
      if (!started.has(key)) started.set(key, new Promise((r) => startedResolvers.set(key, r)));
      return started.get(key)!;
    },
  };
}

/**
 * An agent over the faux provider. Its events, its queue changes and the session
 * layer's automatic retry (wired in through hooks, as the session does) go to `events`.
 */
function makeAgent(script: FauxReply[], tools: AgentTool[] = []) {
  const provider = createFauxProvider({ script });
  const events: WorkerEvent[] = [];
  const retry = new AutoRetry({ enabled: true, maxAttempts: 3, baseDelayMs: 1 }, (e) => events.push(e));
  const agent = new Agent(
    {
      cwd: process.cwd(),
      provider: () => provider,
      apiKey: () => undefined,
      systemPrompt: () => "test",
      tools: () => tools,
      afterResponse: async (ctx) => {
        retry.noteResponse(ctx.failure);
        return "accept";
      },
      onQueueChange: () => events.push({ type: "queue_update", ...agent.queues() }),
    },
    { model, thinkingLevel: "off" },
  );
  agent.subscribe((e) => {
    events.push(e);
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

function waitForEvent(agent: Agent, test: (e: AgentEvent) => boolean): Promise<AgentEvent> {
  return new Promise((resolve) => {
    const off = agent.subscribe((e) => {
      if (test(e)) {
        off();
        resolve(e);
      }
    });
  });
}

const types = (events: WorkerEvent[]) =>
  events.map((e) => (e.type === "message_start" || e.type === "message_end" ? `${e.type}:${e.message.role}` : e.type));

describe("agent loop", () => {
  it("emits pi's event order for a turn with a tool call", async () => {
    const log: string[] = [];
    const gate = gateTool(log);
    const { agent, events } = makeAgent(
      [{ toolCalls: [{ name: "gate", arguments: { key: "a" } }] }, { text: "all done" }],
      [gate.tool],
    );
    const { done } = agent.start([userMessage("go")]);
    await gate.started("a");
    gate.release("a");
    await done;
    const order = types(events).filter((t) => t !== "message_update" && t !== "tool_execution_update");
    expect(order).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user",
      "message_end:user",
      "message_start:assistant",
      "message_end:assistant",
      "tool_execution_start",
      "tool_execution_end",
      "message_start:toolResult",
      "message_end:toolResult",
      "turn_end",
      "turn_start",
      "message_start:assistant",
      "message_end:assistant",
      "turn_end",
      "agent_end",
    ]);
    const updates = events.filter((e) => e.type === "message_update").map((e) => (e as any).assistantMessageEvent.type);
    expect(updates).toContain("toolcall_start");
    expect(updates).toContain("toolcall_delta");
    expect(updates).toContain("toolcall_end");
    expect(updates).toContain("text_delta");
    const end = events.at(-1) as Extract<WorkerEvent, { type: "agent_end" }>;
    expect(end.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
  });

  it("runs the tool calls of one turn in parallel and records results in call order", async () => {
    const log: string[] = [];
    const gate = gateTool(log);
    const { agent, events } = makeAgent(
      [
        {
          toolCalls: [
            { name: "gate", arguments: { key: "first" } },
            { name: "gate", arguments: { key: "second" } },
          ],
        },
        { text: "ok" },
      ],
      [gate.tool],
    );
    const { done } = agent.start([userMessage("go")]);
    await Promise.all([gate.started("first"), gate.started("second")]);
    gate.release("second");
    gate.release("first");
    await done;
    expect(log).toEqual(["start first", "start second", "end second", "end first"]);
    const ends = events.filter((e) => e.type === "tool_execution_end").map((e) => (e as any).result.content[0].text);
    expect(ends).toEqual(["done second", "done first"]);
    const results = agent.messages.filter((m) => m.role === "toolResult").map((m) => (m as any).content[0].text);
    expect(results).toEqual(["done first", "done second"]);
  });

  it("sends invalid tool arguments back to the model as an error result", async () => {
    const gate = gateTool([]);
    // An object cannot be coerced to a string (42 would be "42", as pi coerces).
    const { agent } = makeAgent(
      [{ toolCalls: [{ name: "gate", arguments: { key: { nested: true } } }] }, { text: "sorry" }],
      [gate.tool],
    );
    await agent.start([userMessage("go")]).done;
    const result = agent.messages.find((m) => m.role === "toolResult") as any;
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([
      {
        type: "text",
        text: 'Validation failed for tool "gate":\n  - key: expected string, got object\n\nReceived arguments:\n{\n  "key": {\n    "nested": true\n  }\n}',
      },
    ]);
    expect(result.details).toEqual({});
    expect((agent.messages.at(-1) as any).stopReason).toBe("stop");
  });

  it("answers an unknown tool with pi 1.6's error result", async () => {
    const { agent } = makeAgent([{ toolCalls: [{ name: "nope", arguments: {} }] }, { text: "ok" }], []);
    await agent.start([userMessage("go")]).done;
    const result = agent.messages.find((m) => m.role === "toolResult") as any;
    expect(result).toMatchObject({
      isError: true,
      details: {},
      content: [{ type: "text", text: "Tool nope not found" }],
    });
  });

  it("delivers a steering message after the turn's tool calls, before the next model call", async () => {
    const log: string[] = [];
    const gate = gateTool(log);
    const { agent, events } = makeAgent(
      [{ toolCalls: [{ name: "gate", arguments: { key: "a" } }] }, { text: "steered" }],
      [gate.tool],
    );
    const { done } = agent.start([userMessage("go")]);
    await gate.started("a");
    agent.steer(userMessage("change of plan"));
    gate.release("a");
    await done;
    const order = types(events).filter((t) => t !== "message_update" && t !== "tool_execution_update");
    const steerAt = events.findIndex(
      (e) => e.type === "message_start" && (e.message as any).content?.[0]?.text === "change of plan",
    );
    const toolEnd = events.findIndex((e) => e.type === "tool_execution_end");
    const secondAssistant = events.findIndex(
      (e, i) => i > steerAt && e.type === "message_start" && e.message.role === "assistant",
    );
    expect(steerAt).toBeGreaterThan(toolEnd);
    expect(secondAssistant).toBeGreaterThan(steerAt);
    expect(order.filter((t) => t === "queue_update")).toHaveLength(2);
    const queueEvents = events.filter((e) => e.type === "queue_update") as any[];
    expect(queueEvents[0].steering).toEqual(["change of plan"]);
    expect(queueEvents[1].steering).toEqual([]);
  });

  it("delivers a steer queued while idle in the next run's first turn, after the prompt, as pi 0.73 does", async () => {
    const { agent, events } = makeAgent([{ text: "both answered" }, { text: "never asked" }]);
    agent.steer(userMessage("also mention the README"));
    await agent.start([userMessage("list the files")]).done;
    const users = agent.messages.filter((m) => m.role === "user").map((m: any) => m.content[0].text);
    expect(users).toEqual(["list the files", "also mention the README"]);
    expect(agent.messages.filter((m) => m.role === "assistant")).toHaveLength(1);
    const queues = events.filter((e) => e.type === "queue_update") as any[];
    expect(queues.at(-1).steering).toEqual([]);
  });

  it("delivers follow-ups when the agent would stop, one at a time or all at once", async () => {
    for (const mode of ["one-at-a-time", "all"] as const) {
      const { agent } = makeAgent([{ text: "first" }, { text: "second" }, { text: "third" }]);
      agent.followUpMode = mode;
      const { done } = agent.start([userMessage("go")]);
      agent.followUp(userMessage("f1"));
      agent.followUp(userMessage("f2"));
      await done;
      const users = agent.messages.filter((m) => m.role === "user").length;
      const assistants = agent.messages.filter((m) => m.role === "assistant").length;
      expect(users).toBe(3);
      expect(assistants).toBe(mode === "all" ? 2 : 3);
    }
  });

  it("refuses a second prompt while a run is in progress", async () => {
    const { agent } = makeAgent([{ text: "slow reply", chunkDelayMs: 20 }]);
    const { done } = agent.start([userMessage("go")]);
    expect(() => agent.start([userMessage("again")])).toThrow(AgentBusyError);
    await done;
  });

  it("abort cancels running tools and ends with an aborted assistant message", async () => {
    const log: string[] = [];
    const gate = gateTool(log);
    const { agent, events } = makeAgent([{ toolCalls: [{ name: "gate", arguments: { key: "a" } }] }], [gate.tool]);
    agent.start([userMessage("go")]);
    await gate.started("a");
    await agent.abort();
    const result = agent.messages.find((m) => m.role === "toolResult") as any;
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toBe("aborted a");
    const last = agent.messages.at(-1) as any;
    expect(last.role).toBe("assistant");
    expect(last.stopReason).toBe("aborted");
    expect(events.at(-1)!.type).toBe("agent_end");
    expect(agent.isStreaming).toBe(false);
  });

  it("answers the calls an abort kept from starting with pi 1.6's text", async () => {
    const gate = gateTool([]);
    const { agent } = makeAgent(
      [
        {
          toolCalls: [
            { name: "gate", arguments: { key: "a" } },
            { name: "gate", arguments: { key: "b" } },
          ],
        },
      ],
      [{ ...gate.tool, executionMode: "sequential" }],
    );
    agent.start([userMessage("go")]);
    await gate.started("a");
    await agent.abort();
    const results = agent.messages.filter((m) => m.role === "toolResult") as any[];
    expect(results.map((r) => [r.content[0].text, r.isError, r.details])).toEqual([
      ["aborted a", true, {}],
      ["Operation aborted", true, {}],
    ]);
  });

  it("abort during a streaming reply stops the stream", async () => {
    const { agent } = makeAgent([{ text: "one two three four five six seven eight nine ten", chunkDelayMs: 30 }]);
    agent.start([userMessage("go")]);
    await waitForEvent(agent, (e) => e.type === "message_update");
    await agent.abort();
    const last = agent.messages.at(-1) as any;
    expect(last.stopReason).toBe("aborted");
    expect(last.content[0].text.length).toBeLessThan("one two three four five six seven eight nine ten".length);
  });

  it("takes no streamed event while its reader is behind (pace), and an abort does not wait for the reader", async () => {
    const provider = createFauxProvider({ script: [{ text: "one two three four five six" }, { text: "a b c d e f" }] });
    let behind: Promise<void> | undefined;
    let release = () => {};
    const agent = new Agent(
      {
        cwd: process.cwd(),
        provider: () => provider,
        apiKey: () => undefined,
        systemPrompt: () => "test",
        tools: () => [],
        pace: () => behind,
      },
      { model, thinkingLevel: "off" },
    );
    let updates = 0;
    agent.subscribe((e) => {
      if (e.type !== "message_update") return;
      updates++;
      // The reader falls behind after the second update.
      if (updates === 2) behind = new Promise((r) => (release = r));
    });
    const run = agent.start([userMessage("go")]);
    await waitForEvent(agent, (e) => e.type === "message_update" && updates === 2);
    await new Promise((r) => setImmediate(r));
    // (The event already taken from the provider may still go out.)
    const held = updates;
    // Many turns of the event loop: with nothing to wait for, the reply would be done in these.
    for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
    expect(updates).toBe(held);
    expect(held).toBeLessThanOrEqual(3);
    behind = undefined;
    release();
    await run.done;
    expect(updates).toBeGreaterThan(2);
    expect((agent.messages.at(-1) as any).content[0].text).toBe("one two three four five six");
    // A reader that never catches up: abort still ends the run.
    updates = 0;
    const second = agent.start([userMessage("again")]);
    await waitForEvent(agent, (e) => e.type === "message_update" && updates === 2);
    await agent.abort();
    await second.done;
    expect(updates).toBeLessThanOrEqual(3);
    expect((agent.messages.at(-1) as any).stopReason).toBe("aborted");
  });

  it("retries a transient provider error in new runs after agent_end, as pi", async () => {
    const { agent, events, run } = makeAgent([
      { error: { message: "529 overloaded", retryable: true } },
      { error: { message: "529 overloaded", retryable: true } },
      { text: "finally" },
    ]);
    await run("go");
    const failedRun = ["agent_start", "turn_start", "message_start", "message_end", "turn_end", "agent_end"];
    // pi 0.73.1's order: the failed run ends, then auto_retry_start and a run that continues (no user message).
    expect(events.map((e) => e.type).filter((t) => t !== "message_update")).toEqual([
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "message_start",
      "message_end",
      "turn_end",
      "agent_end",
      "auto_retry_start",
      ...failedRun,
      "auto_retry_start",
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "auto_retry_end",
      "turn_end",
      "agent_end",
    ]);
    const retry = events.filter((e) => e.type.startsWith("auto_retry")) as any[];
    expect(retry[0]).toMatchObject({ attempt: 1, maxAttempts: 3, delayMs: 1, errorMessage: "529 overloaded" });
    expect(retry[1]).toMatchObject({ attempt: 2, delayMs: 2 });
    // pi counts the retries done.
    expect(retry[2]).toEqual({ type: "auto_retry_end", success: true, attempt: 2 });
    const assistants = agent.messages.filter((m) => m.role === "assistant") as any[];
    expect(assistants).toHaveLength(1);
    expect(assistants[0].content[0].text).toBe("finally");
  });

  it("gives up after the last retry and ends the run with the error", async () => {
    const failing = Array.from({ length: 4 }, () => ({ error: { message: "500 boom", retryable: true } }));
    const { agent, events, run } = makeAgent(failing);
    await run("go");
    const end = events.filter((e) => e.type === "auto_retry_end") as any[];
    expect(end).toEqual([{ type: "auto_retry_end", success: false, attempt: 3, finalError: "500 boom" }]);
    // The last run is over before the retries are: agent_end, then the final auto_retry_end.
    expect(events.slice(-2).map((e) => e.type)).toEqual(["agent_end", "auto_retry_end"]);
    expect(events.filter((e) => e.type === "agent_end")).toHaveLength(4);
    expect((agent.messages.at(-1) as AgentMessage & { stopReason: string }).stopReason).toBe("error");
  });

  it("does not retry a permanent error", async () => {
    const { agent, events, run } = makeAgent([{ error: { message: "401 invalid key", retryable: false } }]);
    await run("go");
    expect(events.some((e) => e.type === "auto_retry_start")).toBe(false);
    expect((agent.messages.at(-1) as any).errorMessage).toBe("401 invalid key");
  });
});
