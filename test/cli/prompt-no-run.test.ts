/**
 * `prompt --wait` and prompts that start no run: the worker's answer (`data.running`,
 * shared/prompt-answer.ts) settles the wait when no run is going, and only then; pi's
 * answer without data keeps the wait for `agent_end`.
 */
import { describe, expect, it } from "vitest";
import { RunWatcher, silentOnRuns } from "../../cli/commands/prompt-actions.js";
import { readPromptAnswer, readRpcAnswer, type RpcAnswer } from "../../shared/schema/rpc.js";

type Ev = Record<string, unknown>;
/** A worker's answer to a prompt, read at the client's boundary. */
const answer = (data?: unknown): RpcAnswer<"prompt"> =>
  readRpcAnswer("a", "prompt", {
    type: "response",
    command: "prompt",
    success: true,
    ...(data !== undefined ? { data } : {}),
  });
const reply = (text: string): Ev => ({
  type: "message_end",
  message: { role: "assistant", content: [{ type: "text", text }], stopReason: "stop" },
});

describe("readPromptAnswer: no run started (handled)", () => {
  it.each<{ name: string; response: RpcAnswer<"prompt">; noRun: boolean }>([
    { name: "our answer saying no run is going", response: answer({ running: false }), noRun: true },
    { name: "our answer saying a run is going", response: answer({ running: true }), noRun: false },
    { name: "pi's answer, without data", response: answer(), noRun: false },
    { name: "pi 1.x's handled", response: answer({ disposition: "handled" }), noRun: true },
    { name: "pi 1.x's started", response: answer({ disposition: "started" }), noRun: false },
    { name: "pi 1.x's queued", response: answer({ disposition: "queued" }), noRun: false },
    {
      name: "our answer to a command that started a run of its own",
      response: answer({ disposition: "handled", running: true }),
      noRun: false,
    },
    {
      name: "our answer to a command that started none",
      response: answer({ disposition: "handled", running: false }),
      noRun: true,
    },
    {
      name: "a refusal",
      response: { type: "response", command: "prompt", success: false, error: "busy" },
      noRun: false,
    },
  ])("$name: $noRun", ({ response, noRun }) => {
    expect(readPromptAnswer(response).disposition === "handled").toBe(noRun);
  });

  it("refuses data of another shape at the boundary, naming the agent, the command and the field", () => {
    expect(() => answer({ running: "no" })).toThrow(
      /agent "a" answered prompt with data pi-orch cannot read \(\/running: .*\); its worker may speak another version/,
    );
  });
});

describe("silentOnRuns: a /command answered by a worker that does not say whether a run started", () => {
  it.each<{ name: string; text: string; response: RpcAnswer<"prompt">; silent: boolean }>([
    { name: "pi's answer to a /command", text: "/review x", response: answer(), silent: true },
    { name: "pi's answer to a /command after spaces", text: "  /noop", response: answer(), silent: true },
    { name: "our answer to a /command", text: "/noop", response: answer({ running: false }), silent: false },
    {
      name: "pi 1.x's answer to a /command",
      text: "/noop",
      response: answer({ disposition: "handled" }),
      silent: false,
    },
    { name: "pi's answer to plain text (a run always follows)", text: "hello", response: answer(), silent: false },
    {
      name: "a refusal",
      text: "/noop",
      response: { type: "response", command: "prompt", success: false, error: "no" },
      silent: false,
    },
  ])("$name: $silent", ({ text, response, silent }) => {
    expect(silentOnRuns(text, response)).toBe(silent);
  });
});

/** Feed `before` (events ahead of the answer), the answer, then `after`; the outcome and when it settled. */
async function watch(
  before: Ev[],
  response: RpcAnswer<"prompt">,
  after: Ev[],
): Promise<{ settledAt: "answer" | number | null; outcome: Record<string, unknown> }> {
  const w = new RunWatcher(["a"]);
  let settled = false;
  void w.settled.then(() => (settled = true));
  let settledAt: "answer" | number | null = null;
  const feed = async (e: Ev) => {
    w.feed({ type: "event", agent: "a", seq: 1, at: 0, event: e } as never);
    await Promise.resolve();
  };
  for (const e of before) await feed(e);
  w.accepted("a", response);
  await Promise.resolve();
  if (settled) settledAt = "answer";
  for (let i = 0; i < after.length && settledAt === null; i++) {
    await feed(after[i]!);
    if (settled) settledAt = i;
  }
  return { settledAt, outcome: w.outcomes()[0] as unknown as Record<string, unknown> };
}

describe("RunWatcher: the prompt's answer", () => {
  const run = [{ type: "agent_start" }, reply("hi"), { type: "agent_end", messages: [] }];
  it.each<{
    name: string;
    before: Ev[];
    response: RpcAnswer<"prompt">;
    after: Ev[];
    settledAt: "answer" | number | null;
    outcome: Record<string, unknown>;
  }>([
    {
      name: "no run (a command that only showed something) settles at the answer, ok",
      before: [
        { type: "message_start", message: { role: "custom" } },
        { type: "message_end", message: { role: "custom" } },
      ],
      response: answer({ running: false }),
      after: [],
      settledAt: "answer",
      outcome: { ok: true, stopReason: "no_run", text: "" },
    },
    {
      name: "no run after the command threw settles at the answer, failed with the error",
      before: [{ type: "extension_error", extensionPath: "command:boom", event: "command", error: "it broke" }],
      response: answer({ running: false }),
      after: [],
      settledAt: "answer",
      outcome: { ok: false, stopReason: "error", error: "the command failed: it broke" },
    },
    {
      name: "a run going (sendUserMessage) waits for its agent_end",
      before: [],
      response: answer({ running: true }),
      after: run,
      settledAt: 2,
      outcome: { ok: true, stopReason: "stop", text: "hi" },
    },
    {
      name: "pi's answer without data waits for agent_end as before",
      before: [],
      response: answer(),
      after: run,
      settledAt: 2,
      outcome: { ok: true, text: "hi" },
    },
    {
      name: "an extension error during the run (after the answer) is not the command's",
      before: [],
      response: answer({ running: true }),
      after: [
        { type: "agent_start" },
        { type: "extension_error", error: "a hook broke" },
        reply("fine"),
        { type: "agent_end", messages: [] },
      ],
      settledAt: 3,
      outcome: { ok: true, text: "fine" },
    },
    {
      name: "pi 1.x's handled settles at the answer",
      before: [],
      response: answer({ disposition: "handled" }),
      after: [],
      settledAt: "answer",
      outcome: { ok: true, stopReason: "no_run", text: "" },
    },
    {
      name: "pi 1.x's queued settles at the answer, not waiting for the run it is queued behind",
      before: [{ type: "agent_start" }],
      response: answer({ disposition: "queued" }),
      after: run,
      settledAt: "answer",
      outcome: { ok: true, stopReason: "queued", text: "" },
    },
    {
      name: "pi 1.x's started waits past agent_end (a follow-up run goes on) for agent_settled",
      before: [],
      response: answer({ disposition: "started" }),
      after: [
        { type: "agent_start" },
        reply("first"),
        { type: "agent_end", messages: [], willRetry: false },
        { type: "agent_start" },
        reply("second"),
        { type: "agent_end", messages: [], willRetry: false },
        { type: "agent_settled", aborted: false },
      ],
      settledAt: 6,
      outcome: { ok: true, stopReason: "stop", text: "first\nsecond" },
    },
    {
      name: "pi 1.x's started that an agent_end overtook still waits for agent_settled",
      before: [{ type: "agent_start" }, reply("first"), { type: "agent_end", messages: [], willRetry: false }],
      response: answer({ disposition: "started" }),
      after: [{ type: "agent_start" }, reply("second"), { type: "agent_settled", aborted: false }],
      settledAt: 2,
      outcome: { ok: true, stopReason: "stop", text: "first\nsecond" },
    },
    {
      name: "pi's answer to a command that started no run never settles by itself (its clients wait too)",
      before: [],
      response: answer(),
      after: [],
      settledAt: null,
      outcome: { ok: false, stopReason: "unsettled" },
    },
  ])("$name", async ({ before, response, after, settledAt, outcome }) => {
    const got = await watch(before, response, after);
    expect(got.settledAt).toBe(settledAt);
    expect(got.outcome).toMatchObject(outcome);
  });

  it("a run the command started and finished before its answer settled at its agent_end, with its reply", async () => {
    const got = await watch(run, answer({ running: false }), []);
    expect(got.outcome).toMatchObject({ ok: true, stopReason: "stop", text: "hi" });
  });

  it.each<{ name: string; events: Ev[]; outcome: Record<string, unknown> }>([
    {
      name: "the command's extension_error",
      events: [
        { type: "message_start", message: { role: "custom" } },
        { type: "extension_error", error: "late news" },
        { type: "message_end", message: { role: "custom" } },
      ],
      outcome: { ok: false, stopReason: "error", error: "the command failed: late news" },
    },
    {
      name: "a run the command started and finished",
      events: [{ type: "agent_start" }, reply("from the run"), { type: "agent_end", messages: [] }],
      outcome: { ok: true, text: "from the run" },
    },
  ])(
    "an answer that overtook its events ($name) settles once the stream reaches the agent's seq at the answer",
    async ({ events, outcome }) => {
      const w = new RunWatcher(["a"]);
      let settled = false;
      void w.settled.then(() => (settled = true));
      w.accepted("a", answer({ running: false }), events.length);
      await Promise.resolve();
      expect(settled).toBe(false);
      for (let i = 0; i < events.length; i++) {
        w.feed({ type: "event", agent: "a", seq: i + 1, at: 0, event: events[i] } as never);
        await Promise.resolve();
        expect(settled).toBe(i === events.length - 1);
      }
      expect(w.outcomes()[0]).toMatchObject(outcome);
    },
  );

  it("a gap the supervisor reports (lagged) counts as reached", async () => {
    const w = new RunWatcher(["a"]);
    w.accepted("a", answer({ running: false }), 5);
    w.feed({ type: "lagged", agent: "a", from: 1, to: 5 } as never);
    await w.settled;
    expect(w.outcomes()[0]).toMatchObject({ ok: true, stopReason: "no_run" });
  });

  it("a run that starts before the stream reached the answer's point is waited for", async () => {
    const w = new RunWatcher(["a"]);
    let settled = false;
    void w.settled.then(() => (settled = true));
    w.accepted("a", answer({ running: false }), 1);
    w.feed({ type: "event", agent: "a", seq: 1, at: 0, event: { type: "agent_start" } } as never);
    await Promise.resolve();
    expect(settled).toBe(false);
    w.feed({ type: "event", agent: "a", seq: 2, at: 0, event: reply("late run") } as never);
    w.feed({ type: "event", agent: "a", seq: 3, at: 0, event: { type: "agent_end", messages: [] } } as never);
    await w.settled;
    expect(w.outcomes()[0]).toMatchObject({ ok: true, text: "late run" });
  });
});
