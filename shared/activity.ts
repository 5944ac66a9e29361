/**
 * What a person wants to know of an agent at a glance: is it working, waiting for them,
 * done, failed or stopped. Derived from the supervisor's status, the dialogs the worker
 * has open and how its last run ended, the way pi 1.6 reports its own program status
 * (working, blocked, done, error, idle). The supervisor answers it in `list`/`status`,
 * the TUI derives it from its own stream with the same function. Pure.
 */
import type { AgentStatus } from "./schema/agent.js";

/** A person's view of one agent. */
export type ActivityState = "starting" | "working" | "waiting" | "done" | "failed" | "stopped" | "idle";

/** An agent's state for a person, with what it is about (the question it asks, the error). */
export interface Activity {
  state: ActivityState;
  /** `waiting`: the open dialog's question; `failed`: the first line of the error; `stopped`: why. */
  message?: string;
}

/** How the last run ended: as pi's program status, the latest assistant message decides. */
export type RunOutcome = { state: "done" } | { state: "failed"; message: string } | { state: "idle"; message?: string };

/** The outcome of a run whose latest assistant message is `message`; null for anything else. */
export function outcomeOfMessage(message: unknown): RunOutcome | null {
  if (typeof message !== "object" || message === null) return null;
  const m = message as { role?: unknown; stopReason?: unknown; errorMessage?: unknown };
  if (m.role !== "assistant") return null;
  if (m.stopReason === "error") return { state: "failed", message: firstLine(m.errorMessage) };
  if (m.stopReason === "aborted") return { state: "idle", message: "aborted" };
  return { state: "done" };
}

function firstLine(text: unknown): string {
  return (typeof text === "string" ? text.split(/\r?\n/, 1)[0]?.trim() : "") || "error";
}

/** What activityOf reads. */
export interface ActivityInput {
  status: AgentStatus | "unknown";
  statusReason?: string | undefined;
  /** Questions of the open dialogs, oldest first; the newest is reported. */
  questions: readonly string[];
  /** How the last run ended; null before the first, or while one runs. */
  outcome: RunOutcome | null;
}

/** The agent's state for a person. */
export function activityOf(a: ActivityInput): Activity {
  const reason = a.statusReason ? { message: a.statusReason } : {};
  switch (a.status) {
    case "stopped":
    case "stopping":
      return { state: "stopped", ...reason };
    case "failed":
      return { state: "failed", ...reason };
    case "starting":
    case "backoff":
    case "unresponsive":
    case "unknown":
      if (a.questions.length === 0) return { state: "starting", ...(a.status === "starting" ? {} : reason) };
  }
  const asks = a.questions.at(-1);
  if (asks !== undefined) return { state: "waiting", message: asks };
  if (a.status === "busy" || a.status === "stalled") return { state: "working" };
  const o = a.outcome;
  if (!o) return { state: "idle" };
  return o.state === "done" ? { state: "done" } : { state: o.state, ...(o.message ? { message: o.message } : {}) };
}

/** How a state reads in a sentence or a table: `waiting for you`. */
export function activityLabel(state: ActivityState): string {
  return state === "waiting" ? "waiting for you" : state;
}

/** Most urgent first: how counts are ordered and which state speaks for a fleet. */
const URGENCY: readonly ActivityState[] = ["waiting", "failed", "working", "starting", "done", "idle", "stopped"];

/** `1 waiting for you · 2 working · 3 done`: the fleet's states, most urgent first. Empty for no agents. */
export function activityCounts(states: readonly ActivityState[]): string {
  const counts = new Map<ActivityState, number>();
  for (const s of states) counts.set(s, (counts.get(s) ?? 0) + 1);
  return URGENCY.filter((s) => counts.has(s))
    .map((s) => `${counts.get(s)} ${activityLabel(s)}`)
    .join(" · ");
}

/** OSC 7501 program status (https://www.superlogical.com/rex/docs/build/program-status), root record. */
export interface ProgramStatus {
  state: "idle" | "working" | "blocked" | "done" | "error";
  message?: string;
}

/**
 * The fleet as one program status: blocked while any agent waits for you (its name and
 * question), else error when one failed, working while one works, done once runs ended,
 * idle before any. Messages name agents and questions, never prompts or model output.
 */
export function fleetProgramStatus(agents: readonly { name: string; activity: Activity }[]): ProgramStatus {
  const first = (state: ActivityState) => agents.find((a) => a.activity.state === state);
  const waiting = first("waiting");
  if (waiting) return { state: "blocked", message: `${waiting.name}: ${waiting.activity.message ?? ""}` };
  const failed = first("failed");
  if (failed)
    return {
      state: "error",
      message: `${failed.name} failed${failed.activity.message ? `: ${failed.activity.message}` : ""}`,
    };
  const working = agents.filter((a) => a.activity.state === "working" || a.activity.state === "starting");
  if (working.length > 0)
    return { state: "working", message: working.length === 1 ? working[0]!.name : `${working.length} agents working` };
  const done = first("done");
  if (done)
    return {
      state: "done",
      message: agents.length === 1 ? done.name : activityCounts(agents.map((a) => a.activity.state)),
    };
  return { state: "idle" };
}

const APP = /^[A-Za-z0-9_.+-]{1,32}$/;
/** The decoded message's limit in bytes (its base64 stays under the protocol's 2732). */
const MAX_MESSAGE_BYTES = 2048;

/** One OSC 7501 report (`clear` ends ours). Control characters in the message are dropped; terminals discard reports holding them. */
export function formatProgramStatus(status: ProgramStatus | { state: "clear" }, app = "pi-orch"): string {
  const pairs = [`state=${status.state}`];
  if (APP.test(app)) pairs.push(`app=${app}`);
  const text =
    "message" in status && status.message ? status.message.replace(/[\x00-\x1f\x7f-\x9f]+/g, " ").trim() : "";
  let message = "";
  let bytes = 0;
  for (const ch of text) {
    bytes += Buffer.byteLength(ch);
    if (bytes > MAX_MESSAGE_BYTES) break;
    message += ch;
  }
  if (message) pairs.push(`msg=${Buffer.from(message).toString("base64")}`);
  return `\x1b]7501;${pairs.join(":")}\x1b\\`;
}

/** The query a terminal that supports program status answers with the same body. */
export const PROGRAM_STATUS_QUERY = "\x1b]7501;?\x1b\\";

/** Whether a sequence read from the terminal is the answer to PROGRAM_STATUS_QUERY. */
export function isProgramStatusReply(sequence: string): boolean {
  return /^\x1b\]7501;\?[^\x07\x1b]*(?:\x07|\x1b\\)$/.test(sequence);
}
