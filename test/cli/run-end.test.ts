import { describe, expect, it } from "vitest";
import { RunTracker } from "../../cli/run/tracker.js";
import { RunWatcher } from "../../cli/commands/prompt-actions.js";
import { foldRun, EMPTY_RUN_VIEW, learnSettles, type RunEvent, type RunView } from "../../cli/events/run-view.js";
import type { RpcAnswer } from "../../shared/schema/rpc.js";

type Ev = Record<string, unknown>;
const failed = (text: string): Ev => ({
  type: "message_end",
  message: { role: "assistant", content: [], stopReason: "error", errorMessage: text },
});
const answered = (text: string): Ev => ({
  type: "message_end",
  message: { role: "assistant", content: [{ type: "text", text }], stopReason: "stop" },
});
const retryStart = (attempt: number): Ev => ({
  type: "auto_retry_start",
  attempt,
  maxAttempts: 3,
  delayMs: 10,
  errorMessage: "503",
});

/**
 * The worker's event order for each case: pi 0.73.1's order, agent_end with our willRetry
 * (answered without a disposition); pi 1.6's, ending with agent_settled (`settles`: its
 * answer said `disposition: "started"`).
 */
const CASES: { name: string; events: Ev[]; endsAt: number | null; ok?: boolean; text?: string; settles?: boolean }[] = [
  {
    name: "a run without errors ends at its agent_end",
    events: [{ type: "agent_start" }, answered("hi"), { type: "agent_end", messages: [] }],
    endsAt: 2,
    ok: true,
    text: "hi",
  },
  {
    name: "a retried run ends at the retry run's agent_end, not the first",
    events: [
      { type: "agent_start" },
      failed("503"),
      { type: "agent_end", messages: [], willRetry: true },
      retryStart(1),
      { type: "agent_start" },
      answered("second time"),
      { type: "auto_retry_end", success: true, attempt: 1 },
      { type: "agent_end", messages: [] },
    ],
    endsAt: 7,
    ok: true,
    text: "second time",
  },
  {
    // The view still counts a retry pending at the last agent_end, so the report that they ran out ends it.
    name: "retries that run out end at the auto_retry_end after the last agent_end, once",
    events: [
      { type: "agent_start" },
      failed("503"),
      { type: "agent_end", messages: [], willRetry: true },
      retryStart(1),
      { type: "agent_start" },
      failed("503"),
      { type: "agent_end", messages: [] },
      { type: "auto_retry_end", success: false, attempt: 1, finalError: "503" },
    ],
    endsAt: 7,
    ok: false,
  },
  {
    name: "a cancelled retry wait (abort_retry) ends at auto_retry_end",
    events: [
      { type: "agent_start" },
      failed("503"),
      { type: "agent_end", messages: [], willRetry: true },
      retryStart(1),
      { type: "auto_retry_end", success: false, attempt: 1, finalError: "Retry cancelled" },
    ],
    endsAt: 4,
    ok: false,
  },
  {
    name: "pi 1.6: a run ends at agent_settled, not at its agent_end",
    settles: true,
    events: [
      { type: "agent_start" },
      answered("hi"),
      { type: "agent_end", messages: [], willRetry: false },
      { type: "agent_settled", aborted: false },
    ],
    endsAt: 3,
    ok: true,
    text: "hi",
  },
  {
    name: "pi 1.6: a retried run ends at agent_settled after the retry's run",
    settles: true,
    events: [
      { type: "agent_start" },
      failed("503"),
      { type: "agent_end", messages: [], willRetry: true },
      retryStart(1),
      { type: "agent_start" },
      answered("second time"),
      { type: "auto_retry_end", success: true, attempt: 1 },
      { type: "agent_end", messages: [], willRetry: false },
      { type: "agent_settled", aborted: false },
    ],
    endsAt: 8,
    ok: true,
    text: "second time",
  },
  {
    name: "pi 1.6: a queued follow-up's run belongs to the same settled run",
    settles: true,
    events: [
      { type: "agent_start" },
      answered("first"),
      { type: "agent_end", messages: [], willRetry: false },
      { type: "agent_start" },
      answered("then the follow-up"),
      { type: "agent_end", messages: [], willRetry: false },
      { type: "agent_settled", aborted: false },
    ],
    endsAt: 6,
    ok: true,
    text: "first\nthen the follow-up",
  },
];

const answer = (settles?: boolean): RpcAnswer<"prompt"> => ({
  type: "response",
  command: "prompt",
  success: true,
  data: settles ? { disposition: "started" } : undefined,
});

/** The index of the event at which `ended` first says true. */
function firstEnd(events: Ev[], ended: (e: Ev) => boolean): number | null {
  for (let i = 0; i < events.length; i++) if (ended(events[i]!)) return i;
  return null;
}

describe("when a prompt's work is over, with automatic retries in pi's order", () => {
  it.each(CASES)("the run view (cli/events): $name", ({ events, endsAt, settles }) => {
    let view: RunView = settles ? learnSettles(EMPTY_RUN_VIEW) : EMPTY_RUN_VIEW;
    const ends: number[] = [];
    events.forEach((e, i) => {
      const before = view.ending;
      view = foldRun(view, e as RunEvent);
      if (view.ending?.kind === "ended" && view.ending !== before) ends.push(i);
    });
    // Exactly one end, where the case says.
    expect(ends).toEqual(endsAt === null ? [] : [endsAt]);
  });

  it.each(CASES)("RunTracker (pi-orch run): $name", ({ events, endsAt, settles }) => {
    const t = new RunTracker();
    if (settles) t.learnSettles();
    expect(firstEnd(events, (e) => t.apply(e)?.kind === "ended")).toBe(endsAt);
  });

  it.each(CASES)("RunWatcher (prompt --wait): $name", async ({ events, endsAt, ok, text, settles }) => {
    const w = new RunWatcher(["a"]);
    w.accepted("a", answer(settles));
    let settled = false;
    void w.settled.then(() => (settled = true));
    let at: number | null = null;
    for (let i = 0; i < events.length; i++) {
      w.feed({ type: "event", agent: "a", event: events[i] } as never);
      await Promise.resolve();
      if (settled && at === null) at = i;
    }
    expect(at).toBe(endsAt);
    const [outcome] = w.outcomes();
    expect(outcome!.ok).toBe(ok);
    if (text !== undefined) expect(outcome!.text).toBe(text);
  });
});
