/**
 * Program status (OSC 7501) against pi 1.6.0's own code: its formatter
 * (pi-tui/dist/program-status.js) encodes every report as ours does, and for the same
 * worker events its interactive mode's ProgramStatusReporter goes through the same
 * states as the supervisor's view of an agent (agent table → activity → program status).
 * Messages differ on purpose (pi names its session, we name the agent), so states are
 * compared, and the messages of blocked and error reports.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { activityOfState } from "../../supervisor/agent-state.js";
import { fleetProgramStatus, formatProgramStatus, type ProgramStatus } from "../../shared/activity.js";
import { Driver } from "../support/agent-driver.js";
import { UPSTREAM } from "../support/upstream-oracle.js";

const PI = UPSTREAM["1.6.0"];
const TUI = join(PI.package, "../pi-tui/dist/program-status.js");
const REPORTER = join(PI.package, "dist/modes/interactive/program-status-reporter.js");

type Step =
  | { event: Record<string, unknown> }
  | { dialog: { id: string; method: string; title: string } }
  | { answer: string };

const assistant = (stopReason: string, errorMessage?: string) => ({
  event: { type: "message_end", message: { role: "assistant", content: [], stopReason, errorMessage } },
});
const ev = (type: string, extra: Record<string, unknown> = {}) => ({ event: { type, ...extra } });

const SCRIPTS: Record<string, Step[]> = {
  "a run that ends well": [
    ev("agent_start"),
    assistant("stop"),
    ev("agent_end", { messages: [] }),
    ev("agent_settled"),
  ],
  "a dialog in a run": [
    ev("agent_start"),
    { dialog: { id: "d1", method: "confirm", title: "Deploy?" } },
    { answer: "d1" },
    assistant("stop"),
    ev("agent_end", { messages: [] }),
    ev("agent_settled"),
  ],
  "an error no retry mends": [
    ev("agent_start"),
    assistant("error", "401 invalid x-api-key\nrequest r1"),
    ev("agent_end", { messages: [] }),
    ev("agent_settled"),
  ],
  "an error a retry mends": [
    ev("agent_start"),
    assistant("error", "overloaded"),
    ev("agent_end", { messages: [], willRetry: true }),
    ev("auto_retry_start", { attempt: 1, maxAttempts: 3, delayMs: 2000, errorMessage: "overloaded" }),
    ev("agent_start"),
    assistant("stop"),
    ev("agent_end", { messages: [] }),
    ev("agent_settled"),
  ],
  "an aborted run": [
    ev("agent_start"),
    assistant("aborted"),
    ev("agent_end", { messages: [] }),
    ev("agent_settled", { aborted: true }),
  ],
  "a dialog of a command, with no run": [{ dialog: { id: "d2", method: "input", title: "Name?" } }, { answer: "d2" }],
};

/** The states (and blocked/error messages) one side reports, each change once. */
function changes(reports: ProgramStatus[]): string[] {
  const out: string[] = [];
  for (const r of reports) {
    const text = r.state === "blocked" || r.state === "error" ? `${r.state}: ${r.message}` : r.state;
    if (out.at(-1) !== text) out.push(text);
  }
  return out;
}

describe.skipIf(!PI.installed)("program status against pi 1.6.0 (skipped: test/upstream not installed)", () => {
  it("encodes every report as pi-tui's formatProgramStatus", async () => {
    const upstream = (await import(TUI)) as { formatProgramStatus(s: object): string };
    const statuses: ProgramStatus[] = [
      { state: "idle" },
      { state: "working", message: "fix-login" },
      { state: "blocked", message: "fix-login: Deploy?\nto prod\x07" },
      { state: "done", message: "2 done · 1 idle" },
      { state: "error", message: "b failed: 401 ✗ ünïcode" },
      { state: "done", message: "é".repeat(2000) },
      { state: "working", message: "   " },
    ];
    for (const s of statuses)
      expect(formatProgramStatus(s)).toBe(upstream.formatProgramStatus({ ...s, app: "pi-orch" }));
  });

  it.each(Object.keys(SCRIPTS))("goes through pi's states for %s", async (name) => {
    const { ProgramStatusReporter } = (await import(REPORTER)) as {
      ProgramStatusReporter: new (
        terminal: () => { setProgramStatus(s: ProgramStatus): void },
        session: () => string,
      ) => { handleEvent(e: object): void; setBlocked(source: string, s?: object): void; reset(): void };
    };
    const theirs: ProgramStatus[] = [];
    const reporter = new ProgramStatusReporter(
      () => ({ setProgramStatus: (s) => theirs.push(s) }),
      () => "a",
    );
    reporter.reset();
    const d = new Driver();
    d.toIdle();
    const ours: ProgramStatus[] = [];
    const look = () => ours.push(fleetProgramStatus([{ name: "a", activity: activityOfState(d.state) }]));
    look();
    for (const step of SCRIPTS[name]!) {
      if ("event" in step) {
        reporter.handleEvent(step.event);
        d.line(step.event);
      } else if ("dialog" in step) {
        // pi's interactive mode shows the dialog and reports it blocked with its title.
        reporter.setBlocked(step.dialog.id, { kind: step.dialog.method, message: step.dialog.title });
        d.line({ type: "extension_ui_request", ...step.dialog });
      } else {
        reporter.setBlocked(step.answer, undefined);
        d.send({
          kind: "rpc",
          caller: 1,
          command: { type: "extension_ui_response", id: step.answer, cancelled: true },
          timeoutMs: 300,
        });
      }
      look();
    }
    // Theirs names the dialog by its title, ours by agent and title.
    const normalized = changes(ours).map((c) =>
      c.replace(/^blocked: a: /, "blocked: ").replace(/^error: a failed: /, "error: "),
    );
    expect(normalized).toEqual(changes(theirs));
  });
});
