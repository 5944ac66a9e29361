/**
 * The built `pi --mode rpc` as a child process against the mock model server,
 * through both official SDKs.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { useMockWorkerEnv } from "../support/mock-worker-env.js";
import { RpcWorker, isAlive, waitForExit } from "../support/rpc-worker.js";

const APIS = ["openai-completions", "anthropic-messages"] as const;

const ctx = useMockWorkerEnv();

beforeEach(() => {
  writeFileSync(join(ctx.project, "alpha.txt"), "a\n");
  writeFileSync(join(ctx.project, "beta.txt"), "b\n");
});

/** Point a `mock` provider of the given API at the mock server, through models.json. */
function startWorker(api: (typeof APIS)[number], extraArgs: string[] = []): RpcWorker {
  ctx.writeModels({ api });
  return new RpcWorker(
    ["--mode", "rpc", "--provider", "mock", "--model", "mock-1", "--retry-delay-ms", "10", ...extraArgs],
    {
      cwd: ctx.project,
      env: { PI_ORCH_HOME: ctx.home, ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" },
    },
  );
}

const withoutUpdates = (types: string[]) =>
  types.filter((t) => t !== "message_update" && t !== "tool_execution_update");

describe.each(APIS)("pi --mode rpc with %s", (api) => {
  it("streams pi's event order for a turn with a tool call", async () => {
    ctx.server.enqueue(
      { toolCalls: [{ name: "bash", arguments: { command: "ls" }, argChunks: 3 }] },
      { text: ["done: ", "alpha.txt beta.txt"] },
    );
    const w = startWorker(api);
    const state = await w.request({ type: "get_state" });
    expect(state).toMatchObject({ type: "response", command: "get_state", success: true });
    expect(state.data.model).toMatchObject({ id: "mock-1", provider: "mock", api });

    const from = w.received.length;
    const accepted = await w.request({ type: "prompt", message: "list files" });
    expect(accepted).toEqual({
      id: accepted.id,
      type: "response",
      command: "prompt",
      success: true,
      data: { disposition: "started", running: true },
    });
    const end = await w.event("agent_end");
    await w.event("agent_settled");
    // pi 1.6's order: the system message declaring the prompt and tools, the prompt, the reply.
    expect(withoutUpdates(w.eventTypes(from))).toEqual([
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "message_start",
      "message_end",
      "message_start",
      "message_end",
      "tool_execution_start",
      "tool_execution_end",
      "message_start",
      "message_end",
      "turn_end",
      "turn_start",
      "message_start",
      "message_end",
      "turn_end",
      "agent_end",
      "agent_settled",
    ]);
    const subtypes = w.received.filter((l) => l.type === "message_update").map((l) => l.assistantMessageEvent.type);
    expect(subtypes.filter((t) => t === "toolcall_delta").length).toBeGreaterThanOrEqual(2);
    expect(subtypes).toContain("toolcall_end");
    expect(subtypes).toContain("text_delta");
    const toolEnd = w.received.find((l) => l.type === "tool_execution_end")!;
    expect(toolEnd.result.content[0].text).toContain("alpha.txt");
    expect(end.messages.map((m: any) => m.role)).toEqual(["system", "user", "assistant", "toolResult", "assistant"]);
    expect(end.messages[0].toolsAdded.map((t: any) => t.name)).toEqual(["read", "bash", "edit", "write"]);
    expect(end.messages[2].stopReason).toBe("toolUse");
    expect(end.messages[4].content[0].text).toBe("done: alpha.txt beta.txt");
    expect(end.messages[2].usage.input).toBeGreaterThan(0);
    // The second request carried the tool call and its result back to the model.
    expect(JSON.stringify(ctx.server.requests[1].body)).toContain("alpha.txt");
    for (const line of w.received.filter((l) => l.type !== "response")) expect(line).not.toHaveProperty("id");
  });

  it("delivers a steer sent while a bash tool runs before the next model call", async () => {
    ctx.server.enqueue(
      {
        toolCalls: [
          { name: "bash", arguments: { command: "echo started; read -t 30 line < /dev/null; sleep 1; echo finished" } },
        ],
      },
      { text: "steered reply" },
    );
    const w = startWorker(api);
    await w.request({ type: "prompt", message: "run something" });
    await w.event("tool_execution_start");
    const steer = await w.request({ type: "steer", message: "talk instead" });
    expect(steer.success).toBe(true);
    const queued = await w.waitFor((l) => l.type === "queue_update" && l.steering.length === 1);
    expect(queued.steering).toEqual(["talk instead"]);
    await w.event("agent_end");
    const toolEnd = w.received.findIndex((l) => l.type === "tool_execution_end");
    const steerMsg = w.received.findIndex(
      (l) => l.type === "message_start" && l.message.role === "user" && l.message.content[0].text === "talk instead",
    );
    const nextAssistant = w.received.findIndex(
      (l, i) => i > steerMsg && l.type === "message_start" && l.message.role === "assistant",
    );
    expect(steerMsg).toBeGreaterThan(toolEnd);
    expect(nextAssistant).toBeGreaterThan(steerMsg);
    const lastBody = JSON.stringify(ctx.server.requests[1].body);
    expect(lastBody).toContain("talk instead");
  });

  it("refuses a prompt without streamingBehavior while streaming, and queues a follow_up", async () => {
    ctx.server.enqueue({ text: ["one ", "two ", "three"], chunkDelayMs: 150 }, { text: "follow-up answer" });
    const w = startWorker(api);
    await w.request({ type: "prompt", message: "first" });
    await w.event("message_update");
    const refused = await w.request({ type: "prompt", message: "no behaviour given" });
    expect(refused.success).toBe(false);
    expect(refused.error).toMatch(/streamingBehavior/);
    const fu = await w.request({ type: "follow_up", message: "and then this" });
    expect(fu.success).toBe(true);
    const end = await w.event("agent_end");
    expect(end.messages.map((m: any) => m.role)).toEqual(["system", "user", "assistant", "user", "assistant"]);
    expect(end.messages[4].content[0].text).toBe("follow-up answer");
  });

  it("abort during a slow stream ends the run with stopReason aborted", async () => {
    ctx.server.enqueue({ text: Array.from({ length: 50 }, (_, i) => `w${i} `), chunkDelayMs: 200 });
    const w = startWorker(api);
    await w.request({ type: "prompt", message: "talk slowly" });
    await w.event("message_update");
    const abort = await w.request({ type: "abort" });
    expect(abort.success).toBe(true);
    const end = w.received.find((l) => l.type === "agent_end");
    expect(end).toBeDefined();
    expect(w.received.indexOf(end!)).toBeLessThan(w.received.indexOf(abort));
    expect(end!.messages.at(-1).stopReason).toBe("aborted");
    const state = await w.request({ type: "get_state" });
    expect(state.data.isStreaming).toBe(false);
  });

  it("abort during bash `sleep 60` kills the sleep and the run goes on to end", async () => {
    ctx.server.enqueue({ toolCalls: [{ name: "bash", arguments: { command: "sleep 60 & echo SLEEP_PID=$!; wait" } }] });
    const w = startWorker(api);
    await w.request({ type: "prompt", message: "please sleep" });
    const update = await w.waitFor(
      (l) => l.type === "tool_execution_update" && /SLEEP_PID=\d+/.test(JSON.stringify(l.partialResult)),
    );
    const pid = Number(/SLEEP_PID=(\d+)/.exec(JSON.stringify(update.partialResult))![1]);
    expect(isAlive(pid)).toBe(true);
    await w.request({ type: "abort" });
    const toolEnd = w.received.find((l) => l.type === "tool_execution_end")!;
    expect(toolEnd.isError).toBe(true);
    expect(JSON.stringify(toolEnd.result)).toMatch(/aborted/i);
    expect(await waitForExit(pid)).toBe(true);
    const messages = await w.request({ type: "get_messages" });
    expect(messages.data.messages.at(-1).stopReason).toBe("aborted");
  });

  it("closing stdin while bash runs exits 0 and leaves no child behind", async () => {
    ctx.server.enqueue({ toolCalls: [{ name: "bash", arguments: { command: "sleep 60 & echo SLEEP_PID=$!; wait" } }] });
    const w = startWorker(api);
    await w.request({ type: "prompt", message: "please sleep" });
    const update = await w.waitFor(
      (l) => l.type === "tool_execution_update" && /SLEEP_PID=\d+/.test(JSON.stringify(l.partialResult)),
    );
    const pid = Number(/SLEEP_PID=(\d+)/.exec(JSON.stringify(update.partialResult))![1]);
    w.closeStdin();
    const exit = await w.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(await waitForExit(pid)).toBe(true);
  });

  it("retries after a scripted 529 and then succeeds", async () => {
    ctx.server.enqueue({ error: { status: 529, message: "Overloaded" } }, { text: "recovered" });
    const w = startWorker(api);
    await w.request({ type: "prompt", message: "hello" });
    const start = await w.event("auto_retry_start");
    expect(start).toMatchObject({ attempt: 1, maxAttempts: 3, delayMs: 10 });
    expect(start.errorMessage).toMatch(/529/);
    const retryEnd = await w.event("auto_retry_end");
    // pi counts the retries done.
    expect(retryEnd).toMatchObject({ success: true, attempt: 1 });
    const end = await w.waitFor((l) => l.type === "agent_end" && l.messages.at(-1)?.stopReason === "stop");
    expect(end.messages.at(-1).content[0].text).toBe("recovered");
    expect(ctx.server.requests).toHaveLength(2);
    await w.event("agent_settled");
    // pi 1.6's order: the failed run ends, auto_retry_start, the failed reply leaves the
    // context (a context_edit entry), then the retry is a run of its own, and only after
    // it the prompt settles.
    expect(withoutUpdates(w.eventTypes())).toEqual([
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "message_start",
      "message_end",
      "message_start",
      "message_end",
      "turn_end",
      "agent_end",
      "auto_retry_start",
      "entry_appended",
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "auto_retry_end",
      "turn_end",
      "agent_end",
      "agent_settled",
    ]);
  });
});

describe("pi --mode rpc with bad input", () => {
  const cases: [string, string, RegExp, string | undefined][] = [
    ["a line that is not JSON", "{not json", /Failed to parse command/, undefined],
    ["null", "null", /expected a JSON object, got null/, undefined],
    ["an array", "[1,2]", /expected a JSON object, got an array/, undefined],
    ["a number", "42", /expected a JSON object, got a number/, undefined],
    ["an unknown type", '{"id":"u1","type":"fly_to_moon"}', /Unknown command: fly_to_moon/, "u1"],
    ["a missing type", '{"id":"m1"}', /\/type/, "m1"],
    ["a field of the wrong type", '{"id":"w1","type":"prompt","message":42}', /\/message: must be string/, "w1"],
    ["a wrong enum value", '{"id":"e1","type":"set_steering_mode","mode":"sometimes"}', /\/mode/, "e1"],
  ];

  it.each(cases)("answers %s with success:false and keeps running", async (_name, line, error, id) => {
    const w = startWorker("openai-completions");
    await w.request({ type: "get_state" });
    const from = w.received.length;
    w.writeRaw(`${line}\n`);
    const response = await w.waitFor((l) => l.type === "response" && l.success === false, 10_000, from);
    expect(response.error).toMatch(error);
    if (id) expect(response.id).toBe(id);
    const state = await w.request({ type: "get_state" });
    expect(state.success).toBe(true);
  });

  it("rejects an oversized line with a clear error and keeps running", async () => {
    const w = startWorker("openai-completions", ["--max-line-bytes", "1024"]);
    await w.request({ type: "get_state" });
    const from = w.received.length;
    w.writeRaw(`${JSON.stringify({ type: "prompt", message: "x".repeat(5000) })}\n`);
    const response = await w.waitFor((l) => l.type === "response" && l.success === false, 10_000, from);
    expect(response.error).toMatch(/exceeds the 1024-byte limit/);
    expect((await w.request({ type: "get_state" })).success).toBe(true);
  });

  it("writes nothing but protocol lines on stdout and exits 0 when stdin closes", async () => {
    const w = startWorker("openai-completions");
    await w.request({ type: "get_state" });
    w.closeStdin();
    expect(await w.exited).toEqual({ code: 0, signal: null });
    expect(w.received.every((l) => l.type !== "__not_json__")).toBe(true);
  });

  it("exits 0 on SIGTERM", async () => {
    const w = startWorker("openai-completions");
    await w.request({ type: "get_state" });
    w.proc.kill("SIGTERM");
    expect(await w.exited).toEqual({ code: 0, signal: null });
  });
});
