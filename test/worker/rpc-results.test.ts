/**
 * Every answer the command map gives matches its command's result schema
 * (shared/schema/rpc.ts RpcResultSchemas), on a real in-process session with a session
 * file and the faux model: the types the handlers are checked against at compile time
 * hold for the values that leave the worker, casts and all.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type RpcCommand,
  RpcResultSchemas,
  answerFields,
  readRpcAnswer,
  RpcStateSummary,
} from "../../shared/schema/rpc.js";
import { checker } from "../../shared/validate.js";
import { AgentSession } from "../../worker/core/agent-session.js";
import { createCommandHandlers, dispatchCommand } from "../../worker/modes/commands.js";
import { tempDir } from "../support/rpc-worker.js";

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A session writing its file under a temp dir, answering with the faux model's scripted replies. */
function session(): AgentSession {
  const dir = tempDir("pi-rpc-results-");
  cleanups.push(() => dir.cleanup());
  writeFileSync(join(dir.path, "script.json"), JSON.stringify([{ text: "first answer" }, { text: "second" }]));
  const s = new AgentSession({
    cwd: dir.path,
    home: dir.path,
    sessionDir: join(dir.path, "sessions"),
    provider: "faux",
    fauxScript: join(dir.path, "script.json"),
    env: {},
    warn: () => undefined,
  });
  cleanups.push(() => s.shutdown());
  return s;
}

/** Run a command through the map and check its answer against the command's result schema. */
async function answerMatches(handlers: ReturnType<typeof createCommandHandlers>, command: RpcCommand) {
  const data = await dispatchCommand(handlers, command);
  const checked = checker(RpcResultSchemas[command.type])(data);
  expect(checked.ok ? [] : checked.errors, `${command.type} answered ${JSON.stringify(data)}`).toEqual([]);
  // And a client (IpcClient.rpc, the TUI) reads it.
  expect(readRpcAnswer("ours", command.type, { type: "response", command: command.type, success: true, data })).toEqual(
    expect.objectContaining({ success: true }),
  );
  return data;
}

describe("the command map's answers and their result schemas", () => {
  it("match for each command a client reads, before and after a run", async () => {
    const s = session();
    const handlers = createCommandHandlers(s, () => undefined);
    const reads: RpcCommand[] = [
      { type: "get_state" },
      { type: "get_messages" },
      { type: "get_available_models" },
      { type: "get_available_thinking_levels" },
      { type: "get_session_stats" },
      { type: "get_fork_messages" },
      { type: "get_entries" },
      { type: "get_tree" },
      { type: "get_last_assistant_text" },
      { type: "get_commands" },
    ];
    for (const command of reads) await answerMatches(handlers, command);
    const answer = await answerMatches(handlers, { type: "prompt", message: "hello" });
    expect(answer).toEqual({ disposition: "started", running: true });
    await new Promise<void>((resolve) => {
      const off = s.subscribe((e) => {
        if (e.type === "agent_settled") {
          off();
          resolve();
        }
      });
    });
    for (const command of reads) await answerMatches(handlers, command);
    await answerMatches(handlers, { type: "cycle_thinking_level" });
    await answerMatches(handlers, { type: "set_thinking_level", level: "low" });
    await answerMatches(handlers, { type: "clear_queue" });
    await answerMatches(handlers, { type: "set_session_name", name: "typed" });
    await answerMatches(handlers, { type: "clone" });
  });

  it("get_state's answer is what the supervisor reads of it, field by field, without casts", async () => {
    const s = session();
    const data = await dispatchCommand(
      createCommandHandlers(s, () => undefined),
      { type: "get_state" },
    );
    const read = answerFields(RpcStateSummary, { success: true, data });
    expect(read?.model).toMatchObject({ provider: "faux", id: expect.any(String) });
    expect(read?.isStreaming).toBe(false);
    expect(read?.sessionFile).toBe(s.sessionFile);
    // Another pi's field of another shape is left out, not the others with it (the fixture worker's `model: null`).
    expect(answerFields(RpcStateSummary, { success: true, data: { model: null, sessionFile: "/s.jsonl" } })).toEqual({
      sessionFile: "/s.jsonl",
    });
    expect(
      answerFields(RpcStateSummary, { success: true, data: { model: { provider: 1 }, isStreaming: true } }),
    ).toEqual({ isStreaming: true });
    expect(answerFields(RpcStateSummary, { success: true, data: "busy" })).toBeUndefined();
    expect(answerFields(RpcStateSummary, { success: false })).toBeUndefined();
  });
});

describe("readRpcAnswer: what a client reads of any pi's answer", () => {
  const ok = (command: string, data?: unknown) => ({
    type: "response" as const,
    command,
    success: true as const,
    ...(data === undefined ? {} : { data }),
  });
  it.each<{ name: string; type: "prompt" | "get_state" | "steer" | "get_available_models"; data?: unknown }>([
    { name: "pi 0.73's prompt answer, without data", type: "prompt" },
    { name: "pi 1.6's prompt answer, without running", type: "prompt", data: { disposition: "queued" } },
    { name: "pi 0.73's steer answer, without data", type: "steer" },
    { name: "pi 0.73's get_state with model null", type: "get_state", data: { model: null, sessionFile: "/s.jsonl" } },
    {
      name: "a model of an API our schema does not list",
      type: "get_available_models",
      data: { models: [{ provider: "google", id: "gemini", api: "google-generative-ai" }] },
    },
  ])("takes $name", ({ type, data }) => {
    expect(readRpcAnswer("a", type, ok(type, data))).toMatchObject({ success: true });
  });

  it("passes a refusal as it is, and refuses data of another shape naming the agent, command and field", () => {
    const refusal = { type: "response" as const, command: "get_state", success: false as const, error: "busy" };
    expect(readRpcAnswer("a", "get_state", refusal)).toBe(refusal);
    expect(() => readRpcAnswer("fix-login", "get_state", ok("get_state", { sessionFile: 7 }))).toThrow(
      /^agent "fix-login" answered get_state with data pi-orch cannot read \(\/sessionFile: .*\); .*pi-orch rpc fix-login/,
    );
    expect(() => readRpcAnswer("a", "get_session_stats", ok("get_session_stats"))).toThrow(
      /get_session_stats .*\(\/: /,
    );
  });
});
