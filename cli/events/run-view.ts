/**
 * The one reader of an agent's event stream: a pure reducer that folds the worker's events
 * and the supervisor's own into a typed view of the agent's run. `prompt --wait` and `run`
 * read this view instead of each keeping its own.
 */
import type { AgentStatus } from "../../shared/schema/agent.js";
import type { WireEvent } from "../../shared/schema/events.js";
import type { AgentMessage, AssistantMessage } from "../../shared/schema/messages.js";
import type { SupervisorEvent } from "../../shared/schema/supervisor-events.js";

/** Any event an agent's stream carries: the worker's own and the supervisor's. */
export type RunEvent = WireEvent | SupervisorEvent;

/**
 * How the run ended, set by the event that ended it (a later ending event replaces it):
 * the worker's `agent_settled` (pi 1.x), else its last `agent_end` no retry follows, the worker exiting, the supervisor saying the run was
 * interrupted, or the agent leaving the running statuses.
 */
export type RunEnding =
  | { kind: "ended" }
  | { kind: "exited"; reason: string }
  | { kind: "interrupted"; reason: string }
  | { kind: "status"; status: AgentStatus; reason: string | null };

/** A tool call that started and has not ended. */
export interface RunningTool {
  toolCallId: string;
  toolName: string;
  args: unknown;
}

/** The last assistant message's verdict. */
export interface AssistantOutcome {
  stopReason: string;
  errorMessage: string | null;
  /** Its text parts joined, untrimmed. */
  text: string;
}

/** Input, output and total tokens of every assistant message seen, and their cost in dollars as the worker priced it. */
export interface RunTokens {
  input: number;
  output: number;
  total: number;
  cost: number;
}

/** An automatic retry announced by `auto_retry_start` and not yet ended. */
export interface PendingRetry {
  attempt: number;
  maxAttempts: number;
  delayMs: number;
  errorMessage: string;
}

/** What the stream has said about the agent's run so far. */
export interface RunView {
  /** The agent's supervisor status, from the last `agent_status`. */
  agentStatus: AgentStatus | null;
  /** An `agent_start` was seen (the latest run began). */
  started: boolean;
  /** Between `agent_start` and `agent_end`. */
  inRun: boolean;
  /**
   * The worker ends its runs with `agent_settled` (pi 1.x): one was seen, or the prompt's
   * answer had a `disposition` (see learnSettles). Then `agent_end` ends no run.
   */
  settles: boolean;
  /** Set while a retry is pending: the run goes on even after an `agent_end`. */
  retry: PendingRetry | null;
  /** How the run ended; null while it goes on (or before it began). */
  ending: RunEnding | null;
  /** Messages ended since the run's `agent_start` (all of them before the first). */
  messages: readonly AgentMessage[];
  /** Text of the assistant message streaming now. */
  streaming: string;
  /** Tools running now, in start order. */
  running: readonly RunningTool[];
  /** `turn_start`s seen, over every run. */
  turns: number;
  /** `tool_execution_start`s seen, over every run. */
  toolCalls: number;
  tokens: RunTokens;
  /** The last assistant message seen, over every run. */
  lastAssistant: AssistantOutcome | null;
  /** The last non-empty (trimmed) assistant text, over every run. */
  finalText: string;
  /** Paths given to edit/write calls, first-seen order. */
  touched: readonly string[];
  /** The latest error the stream reported (model, retry, interruption, limit, supervisor). */
  lastError: string | null;
  /**
   * The latest `extension_error`'s message: with no run started, the failure of the
   * extension command the prompt ran (its handler threw, or its message was refused).
   */
  extensionError: string | null;
}

/** The view before any event. */
export const EMPTY_RUN_VIEW: RunView = Object.freeze({
  agentStatus: null,
  started: false,
  inRun: false,
  settles: false,
  retry: null,
  ending: null,
  messages: [],
  streaming: "",
  running: [],
  turns: 0,
  toolCalls: 0,
  tokens: { input: 0, output: 0, total: 0, cost: 0 },
  lastAssistant: null,
  finalText: "",
  touched: [],
  lastError: null,
  extensionError: null,
});

/** Statuses that mean a run in progress will not end with `agent_end`. */
const LEAVING_STATUSES: ReadonlySet<string> = new Set(["stopping", "stopped", "failed", "backoff", "unresponsive"]);

/**
 * Fold one event into the view; returns `view` itself when the event changes nothing, so a
 * reader can tell by identity whether (for instance) `ending` was just set.
 */
export function foldRun(view: RunView, event: RunEvent): RunView {
  switch (event.type) {
    case "agent_start":
      // A worker that settles goes on with the same run after an agent_end (a follow-up, a retry).
      if (view.settles && view.started && view.ending === null) return { ...view, inRun: true, streaming: "" };
      return { ...view, started: true, inRun: true, ending: null, messages: [], streaming: "" };
    case "turn_start":
      return { ...view, turns: view.turns + 1 };
    case "message_start":
      return view.streaming === "" ? view : { ...view, streaming: "" };
    case "message_update": {
      const delta = event.assistantMessageEvent;
      return delta?.type === "text_delta" ? { ...view, streaming: view.streaming + String(delta.delta) } : view;
    }
    case "message_end":
      return onMessageEnd(view, event.message);
    case "tool_execution_start": {
      const toolCalls = view.toolCalls + 1;
      const toolName = String(event.toolName ?? "tool");
      const tool: RunningTool = { toolCallId: String(event.toolCallId ?? toolCalls), toolName, args: event.args };
      const i = view.running.findIndex((t) => t.toolCallId === tool.toolCallId);
      const running = i < 0 ? [...view.running, tool] : view.running.map((t, j) => (j === i ? tool : t));
      const path = (event.args as { path?: unknown } | undefined)?.path;
      const touched =
        (toolName === "edit" || toolName === "write") && typeof path === "string" && !view.touched.includes(path)
          ? [...view.touched, path]
          : view.touched;
      return { ...view, toolCalls, running, touched };
    }
    case "tool_execution_end": {
      const running = view.running.filter((t) => t.toolCallId !== String(event.toolCallId));
      return running.length === view.running.length ? view : { ...view, running };
    }
    case "agent_end": {
      const base = { ...view, inRun: false, running: [], streaming: "" };
      // With a retry to follow (pi's order: agent_end, auto_retry_start, a new run; our
      // worker says willRetry on that agent_end), it closes one attempt, not the run; a
      // worker that settles says when the run is over with agent_settled.
      return view.started && !view.retry && !view.settles && event.willRetry !== true
        ? { ...base, ending: { kind: "ended" } }
        : base;
    }
    case "agent_settled": {
      const base = { ...view, settles: true, inRun: false, running: [], streaming: "", retry: null };
      if (!view.started || view.ending?.kind === "ended") return base;
      return { ...base, ending: { kind: "ended" } };
    }
    case "auto_retry_start":
      return {
        ...view,
        ending: null,
        retry: {
          attempt: event.attempt,
          maxAttempts: event.maxAttempts,
          delayMs: event.delayMs,
          errorMessage: event.errorMessage,
        },
      };
    case "auto_retry_end": {
      if (event.success) return { ...view, retry: null };
      const failed = { ...view, retry: null, lastError: event.finalError ?? view.lastError };
      // A retry wait cancelled after the last attempt's agent_end ends the run; retries that
      // ran out come after an agent_end that already ended it. Inside a run (the older
      // order), its own agent_end still follows.
      if (view.ending?.kind === "ended") return { ...failed, ending: view.ending };
      return view.started && !view.inRun && !view.settles ? { ...failed, ending: { kind: "ended" } } : failed;
    }
    case "worker_exited":
      return {
        ...view,
        inRun: false,
        running: [],
        ending: { kind: "exited", reason: `the worker exited (${describeWorkerExit(event)})` },
      };
    case "run_interrupted":
      return {
        ...view,
        inRun: false,
        running: [],
        lastError: event.reason,
        ending: { kind: "interrupted", reason: event.reason },
      };
    case "agent_status": {
      const next = { ...view, agentStatus: event.status };
      return LEAVING_STATUSES.has(event.status)
        ? { ...next, ending: { kind: "status", status: event.status, reason: event.reason ?? null } }
        : next;
    }
    case "limit_exceeded":
    case "supervisor_error":
      return { ...view, lastError: event.message };
    case "extension_error":
      return { ...view, extensionError: String(event.error ?? "unknown error") };
    default:
      return view;
  }
}

/**
 * The worker said (a `disposition` in its prompt answer) that it ends runs with
 * `agent_settled`: an ending taken from an `agent_end` before that was known is undone,
 * the run goes on until it settles. Pure; `view` itself when nothing changes.
 */
export function learnSettles(view: RunView): RunView {
  if (view.settles) return view;
  return { ...view, settles: true, ending: view.ending?.kind === "ended" ? null : view.ending };
}

/** The tool a progress line shows: the latest started of those still running. */
export function currentTool(view: RunView): string | null {
  return view.running.at(-1)?.toolName ?? null;
}

/** The text parts of a message's content joined (images and tool calls leave nothing). */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter(
      (c): c is { type: "text"; text: string } =>
        (c as { type?: unknown })?.type === "text" && typeof (c as { text?: unknown }).text === "string",
    )
    .map((c) => c.text)
    .join("");
}

function onMessageEnd(view: RunView, message: AgentMessage): RunView {
  const messages = [...view.messages, message];
  if (message?.role !== "assistant") return { ...view, messages, streaming: "" };
  const m = message as Partial<AssistantMessage>;
  const usage = (m.usage ?? {}) as Partial<Record<string, unknown>>;
  const input = num(usage.input);
  const output = num(usage.output);
  const tokens = {
    input: view.tokens.input + input,
    output: view.tokens.output + output,
    total: view.tokens.total + (typeof usage.totalTokens === "number" ? usage.totalTokens : input + output),
    cost: view.tokens.cost + num((usage.cost as { total?: unknown } | undefined)?.total),
  };
  const text = textOf(m.content);
  const errorMessage = typeof m.errorMessage === "string" ? m.errorMessage : null;
  const lastAssistant: AssistantOutcome = {
    stopReason: typeof m.stopReason === "string" ? m.stopReason : "stop",
    errorMessage,
    text,
  };
  const trimmed = text.trim();
  return {
    ...view,
    messages,
    streaming: "",
    tokens,
    lastAssistant,
    finalText: trimmed !== "" ? trimmed : view.finalText,
    lastError: errorMessage ?? view.lastError,
  };
}

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

function describeWorkerExit(event: { code?: unknown; signal?: unknown; message?: unknown; reason?: unknown }): string {
  const parts = [
    typeof event.code === "number" ? `code ${event.code}` : null,
    typeof event.signal === "string" ? `signal ${event.signal}` : null,
    typeof event.message === "string" ? event.message : null,
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(", ") : String(event.reason ?? "unknown reason");
}
