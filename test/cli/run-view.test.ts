import { describe, expect, it } from "vitest";
import {
  currentTool,
  EMPTY_RUN_VIEW,
  foldRun,
  learnSettles,
  type RunEvent,
  type RunView,
} from "../../cli/events/run-view.js";

const usage = (input: number, output: number) => ({
  input,
  output,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: input + output,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});
const assistant = (
  text: string,
  stopReason: "stop" | "toolUse" | "error" | "aborted" = "stop",
  errorMessage?: string,
) => ({
  role: "assistant" as const,
  content: text === "" ? [] : [{ type: "text" as const, text }],
  api: "faux",
  provider: "faux",
  model: "faux",
  usage: usage(10, 5),
  stopReason,
  ...(errorMessage ? { errorMessage } : {}),
  timestamp: 0,
});
const ev = {
  start: { type: "agent_start" },
  end: { type: "agent_end", messages: [] },
  settled: { type: "agent_settled", aborted: false },
  turn: { type: "turn_start" },
  reply: (text: string, stop?: "stop" | "toolUse" | "error" | "aborted", err?: string) => ({
    type: "message_end",
    message: assistant(text, stop, err),
  }),
  user: { type: "message_end", message: { role: "user", content: "hi", timestamp: 0 } },
  tool: (id: string, name: string, args: unknown = {}) => ({
    type: "tool_execution_start",
    toolCallId: id,
    toolName: name,
    args,
  }),
  toolEnd: (id: string) => ({
    type: "tool_execution_end",
    toolCallId: id,
    toolName: "x",
    result: { content: [] },
    isError: false,
  }),
  delta: (delta: string) => ({
    type: "message_update",
    message: assistant(""),
    assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta, partial: assistant("") },
  }),
  retryStart: (attempt: number) => ({
    type: "auto_retry_start",
    attempt,
    maxAttempts: 3,
    delayMs: 1000,
    errorMessage: "overloaded",
  }),
  retryEnd: (success: boolean, finalError?: string) => ({
    type: "auto_retry_end",
    success,
    attempt: 1,
    ...(finalError ? { finalError } : {}),
  }),
  exited: { type: "worker_exited", code: null, signal: "SIGKILL", reason: "crash" },
  interrupted: { type: "run_interrupted", reason: "the worker crashed" },
  status: (status: string, reason?: string) => ({
    type: "agent_status",
    status,
    previous: "running",
    pid: 1,
    restarts: 0,
    ...(reason ? { reason } : {}),
  }),
} as const;

const fold = (events: readonly unknown[]): RunView => (events as RunEvent[]).reduce(foldRun, EMPTY_RUN_VIEW);

describe("foldRun: how the run ends", () => {
  const cases: { name: string; events: unknown[]; ending: RunView["ending"]; retry?: boolean }[] = [
    { name: "nothing yet", events: [], ending: null },
    {
      name: "agent_end after agent_start ends it",
      events: [ev.start, ev.reply("ok"), ev.end],
      ending: { kind: "ended" },
    },
    { name: "an agent_end with no agent_start does not", events: [ev.end], ending: null },
    {
      name: "a retry announced after agent_end (pi's order) reopens the run",
      events: [ev.start, ev.reply("", "error", "overloaded"), ev.end, ev.retryStart(1)],
      ending: null,
      retry: true,
    },
    {
      name: "the retried attempt's own agent_end is not the end while retrying",
      events: [ev.start, ev.end, ev.retryStart(1), ev.start, ev.reply("", "error"), ev.end],
      ending: null,
      retry: true,
    },
    {
      name: "a successful retry ends with its run's agent_end",
      events: [ev.start, ev.end, ev.retryStart(1), ev.start, ev.reply("fine"), ev.retryEnd(true), ev.end],
      ending: { kind: "ended" },
    },
    {
      name: "retries giving up after the last agent_end end the run",
      events: [
        ev.start,
        ev.end,
        ev.retryStart(1),
        ev.start,
        ev.reply("", "error"),
        ev.end,
        ev.retryEnd(false, "still overloaded"),
      ],
      ending: { kind: "ended" },
    },
    {
      name: "retries giving up inside the run (older order) wait for its agent_end",
      events: [ev.start, ev.retryStart(1), ev.retryEnd(false, "x")],
      ending: null,
    },
    { name: "a new agent_start clears the previous ending", events: [ev.start, ev.end, ev.start], ending: null },
    {
      name: "the worker exiting",
      events: [ev.start, ev.exited],
      ending: { kind: "exited", reason: "the worker exited (signal SIGKILL)" },
    },
    {
      name: "the supervisor interrupting the run",
      events: [ev.start, ev.interrupted],
      ending: { kind: "interrupted", reason: "the worker crashed" },
    },
    {
      name: "the agent leaving the running statuses",
      events: [ev.start, ev.status("backoff", "crashed")],
      ending: { kind: "status", status: "backoff", reason: "crashed" },
    },
    { name: "a running status is not an ending", events: [ev.start, ev.status("running")], ending: null },
    {
      name: "pi 1.x: agent_settled ends the run",
      events: [ev.start, ev.reply("ok"), ev.end, ev.settled],
      ending: { kind: "ended" },
    },
    {
      name: "pi 1.x: once a worker settled, agent_end is not the end (a follow-up run goes on)",
      events: [ev.start, ev.end, ev.settled, ev.start, ev.end, ev.start, ev.reply("next")],
      ending: null,
    },
    {
      name: "pi 1.x: retries giving up are not the end either; agent_settled is",
      events: [ev.settled, ev.start, ev.end, ev.retryStart(1), ev.start, ev.end, ev.retryEnd(false, "x")],
      ending: null,
    },
    { name: "an agent_settled with no agent_start ends nothing", events: [ev.settled], ending: null },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const view = fold(c.events);
      expect(view.ending).toEqual(c.ending);
      expect(view.retry !== null).toBe(Boolean(c.retry));
    });
  }
});

describe("learnSettles: the prompt's answer says the worker settles", () => {
  it("undoes an ending taken from agent_end, so the run ends at agent_settled", () => {
    const ended = fold([ev.start, ev.end]);
    expect(ended.ending).toEqual({ kind: "ended" });
    const learned = learnSettles(ended);
    expect(learned.ending).toBeNull();
    expect([ev.start, ev.end].reduce((v, e) => foldRun(v, e as RunEvent), learned).ending).toBeNull();
    expect(foldRun(learned, ev.settled as RunEvent).ending).toEqual({ kind: "ended" });
  });

  it("keeps other endings, and is the same view when already known", () => {
    const exited = fold([ev.start, ev.exited]);
    expect(learnSettles(exited).ending).toEqual(exited.ending);
    const settled = fold([ev.settled]);
    expect(learnSettles(settled)).toBe(settled);
  });
});

describe("foldRun: what the run did", () => {
  it("counts turns, tool calls, tokens, the running tools, edited paths and texts", () => {
    const view = fold([
      ev.start,
      ev.turn,
      ev.tool("1", "edit", { path: "a.txt" }),
      ev.tool("2", "bash", { command: "ls" }),
      ev.tool("3", "write", { path: "a.txt" }),
      ev.toolEnd("2"),
      ev.reply("first", "toolUse"),
      ev.toolEnd("3"),
      ev.turn,
      ev.user,
      ev.reply(" done ", "stop"),
    ]);
    expect(view).toMatchObject({
      turns: 2,
      toolCalls: 3,
      finalText: "done",
      tokens: { input: 20, output: 10, total: 30 },
      touched: ["a.txt"],
    });
    expect(view.running.map((t) => t.toolCallId)).toEqual(["1"]);
    expect(currentTool(view)).toBe("edit");
    expect(view.lastAssistant).toEqual({ stopReason: "stop", errorMessage: null, text: " done " });
    expect(view.messages.map((m) => m.role)).toEqual(["assistant", "user", "assistant"]);
  });

  const table: { name: string; events: unknown[]; check: (v: RunView) => unknown; want: unknown }[] = [
    {
      name: "streaming text gathers deltas",
      events: [ev.start, ev.delta("he"), ev.delta("llo")],
      check: (v) => v.streaming,
      want: "hello",
    },
    {
      name: "message_end clears the streaming text",
      events: [ev.start, ev.delta("he"), ev.reply("he")],
      check: (v) => v.streaming,
      want: "",
    },
    {
      name: "agent_end stops every running tool",
      events: [ev.start, ev.tool("1", "bash"), ev.end],
      check: currentTool,
      want: null,
    },
    {
      name: "the worker exiting stops them too",
      events: [ev.start, ev.tool("1", "bash"), ev.exited],
      check: currentTool,
      want: null,
    },
    {
      name: "the last error is the model's",
      events: [ev.start, ev.reply("", "error", "rate limited")],
      check: (v) => v.lastError,
      want: "rate limited",
    },
    {
      name: "or the retries' final error",
      events: [ev.start, ev.end, ev.retryStart(1), ev.retryEnd(false, "gave up")],
      check: (v) => v.lastError,
      want: "gave up",
    },
    {
      name: "a new run's messages start empty",
      events: [ev.start, ev.reply("a"), ev.end, ev.start],
      check: (v) => v.messages.length,
      want: 0,
    },
    {
      name: "tokens and final text last over runs",
      events: [ev.start, ev.reply("a"), ev.end, ev.start, ev.reply("")],
      check: (v) => [v.tokens.total, v.finalText],
      want: [30, "a"],
    },
    { name: "the agent status is kept", events: [ev.status("idle")], check: (v) => v.agentStatus, want: "idle" },
    {
      name: "an event we do not read changes nothing",
      events: [{ type: "queue_update", steering: [], followUp: [] }],
      check: (v) => v === EMPTY_RUN_VIEW,
      want: true,
    },
  ];
  for (const c of table) it(c.name, () => expect(c.check(fold(c.events))).toEqual(c.want));

  it("never changes the view it was given", () => {
    const before = fold([ev.start, ev.tool("1", "edit", { path: "a" })]);
    const copy = structuredClone(before);
    foldRun(before, ev.reply("x") as unknown as RunEvent);
    foldRun(before, ev.end as unknown as RunEvent);
    expect(before).toEqual(copy);
  });
});
