import { describe, expect, it } from "vitest";
import {
  activityCounts,
  activityOf,
  fleetProgramStatus,
  formatProgramStatus,
  isProgramStatusReply,
  outcomeOfMessage,
  type ActivityInput,
} from "../../shared/activity.js";

const input = (over: Partial<ActivityInput>): ActivityInput => ({
  status: "idle",
  questions: [],
  outcome: null,
  ...over,
});

describe("an agent's state for a person", () => {
  it.each([
    [{ status: "starting" }, { state: "starting" }],
    [
      { status: "backoff", statusReason: "restarting in 2s" },
      { state: "starting", message: "restarting in 2s" },
    ],
    [{ status: "idle" }, { state: "idle" }],
    [{ status: "busy" }, { state: "working" }],
    [{ status: "stalled" }, { state: "working" }],
    [
      { status: "busy", questions: ["Allow rm?", "Deploy?"] },
      { state: "waiting", message: "Deploy?" },
    ],
    // A dialog an extension opens from a command, with no run: still waiting for you.
    [
      { status: "idle", questions: ["Name?"], outcome: { state: "done" } },
      { state: "waiting", message: "Name?" },
    ],
    [{ status: "idle", outcome: { state: "done" } }, { state: "done" }],
    [
      { status: "idle", outcome: { state: "failed", message: "429" } },
      { state: "failed", message: "429" },
    ],
    [
      { status: "idle", outcome: { state: "idle", message: "aborted" } },
      { state: "idle", message: "aborted" },
    ],
    [
      { status: "failed", statusReason: "failed after 5 restarts" },
      { state: "failed", message: "failed after 5 restarts" },
    ],
    [{ status: "stopped", questions: ["gone?"] }, { state: "stopped" }],
    [{ status: "stopping" }, { state: "stopped" }],
  ] as [Partial<ActivityInput>, unknown][])("%j is %j", (over, expected) => {
    expect(activityOf(input(over))).toEqual(expected);
  });

  it("takes a run's outcome from its latest assistant message, as pi's program status does", () => {
    expect(outcomeOfMessage({ role: "assistant", stopReason: "stop" })).toEqual({ state: "done" });
    expect(outcomeOfMessage({ role: "assistant", stopReason: "toolUse" })).toEqual({ state: "done" });
    expect(
      outcomeOfMessage({ role: "assistant", stopReason: "error", errorMessage: "overloaded\nretry later" }),
    ).toEqual({
      state: "failed",
      message: "overloaded",
    });
    expect(outcomeOfMessage({ role: "assistant", stopReason: "error" })).toEqual({ state: "failed", message: "error" });
    expect(outcomeOfMessage({ role: "assistant", stopReason: "aborted" })).toEqual({
      state: "idle",
      message: "aborted",
    });
    expect(outcomeOfMessage({ role: "user", content: "hi" })).toBeNull();
    expect(outcomeOfMessage(null)).toBeNull();
  });

  it("counts a fleet's states most urgent first", () => {
    expect(activityCounts(["done", "working", "waiting", "done", "stopped"])).toBe(
      "1 waiting for you · 1 working · 2 done · 1 stopped",
    );
    expect(activityCounts([])).toBe("");
  });
});

describe("the fleet's program status (OSC 7501)", () => {
  const agent = (name: string, state: string, message?: string) => ({
    name,
    activity: { state, ...(message ? { message } : {}) } as never,
  });

  it("is blocked while one waits for you, then error, working, done, idle", () => {
    expect(
      fleetProgramStatus([agent("a", "working"), agent("b", "waiting", "Deploy?"), agent("c", "failed", "x")]),
    ).toEqual({
      state: "blocked",
      message: "b: Deploy?",
    });
    expect(fleetProgramStatus([agent("a", "working"), agent("c", "failed", "401")])).toEqual({
      state: "error",
      message: "c failed: 401",
    });
    expect(fleetProgramStatus([agent("a", "working"), agent("b", "done")])).toEqual({ state: "working", message: "a" });
    expect(fleetProgramStatus([agent("a", "working"), agent("b", "starting")])).toEqual({
      state: "working",
      message: "2 agents working",
    });
    expect(fleetProgramStatus([agent("a", "done")])).toEqual({ state: "done", message: "a" });
    expect(fleetProgramStatus([agent("a", "done"), agent("b", "idle")])).toEqual({
      state: "done",
      message: "1 done · 1 idle",
    });
    expect(fleetProgramStatus([agent("a", "idle"), agent("b", "stopped")])).toEqual({ state: "idle" });
    expect(fleetProgramStatus([])).toEqual({ state: "idle" });
  });

  it("encodes the message in base64 without control characters, and caps it at 2048 bytes", () => {
    expect(formatProgramStatus({ state: "blocked", message: "a: Go\x1b[31m on?\n" })).toBe(
      `\x1b]7501;state=blocked:app=pi-orch:msg=${Buffer.from("a: Go [31m on?").toString("base64")}\x1b\\`,
    );
    expect(formatProgramStatus({ state: "idle" })).toBe("\x1b]7501;state=idle:app=pi-orch\x1b\\");
    expect(formatProgramStatus({ state: "clear" })).toBe("\x1b]7501;state=clear:app=pi-orch\x1b\\");
    const long = formatProgramStatus({ state: "done", message: "é".repeat(2000) });
    const msg = /msg=([^\x1b]*)/.exec(long)![1]!;
    expect(Buffer.from(msg, "base64").toString()).toBe("é".repeat(1024));
  });

  it("knows the terminal's answer to its query", () => {
    expect(isProgramStatusReply("\x1b]7501;?\x1b\\")).toBe(true);
    expect(isProgramStatusReply("\x1b]7501;?v=1\x07")).toBe(true);
    expect(isProgramStatusReply("\x1b]11;rgb:0000/0000/0000\x07")).toBe(false);
  });
});
