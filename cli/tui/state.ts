/**
 * The TUI's view of every agent, and the pure reducer that folds the supervisor's
 * stream (events, status changes, agent lists) into it. Streamed text is kept as an
 * open line plus finished lines, so a delta copies one string, not the transcript.
 */
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";
import type { AgentInfo, AgentStatus, WorktreeInfo } from "../../shared/schema/agent.js";
import { dialogQuestion, isDialogMethod, type DialogMethod, type ExtensionUiRequest } from "../../shared/schema/rpc.js";
import { contentText, summarizeArgs } from "../commands/transcript.js";
import { EMPTY_RUN_VIEW, foldRun, type RunEvent, type RunView } from "../events/run-view.js";
import { activityOf, outcomeOfMessage, type Activity } from "../../shared/activity.js";

/** Finished transcript lines kept per agent (the zoom view scrolls through them). */
export const MAX_LINES = 2000;
/** Longest tool result kept in the transcript (the zoom view collapses it further). */
const MAX_RESULT_CHARS = 4000;

/** What one transcript line is, for its colour and for collapsing. */
export type LineKind = "user" | "text" | "thinking" | "tool" | "result" | "error" | "notice";

/** One transcript entry; `text` may hold several lines (a tool result). */
export interface TranscriptLine {
  kind: LineKind;
  text: string;
  /** The open line is a running tool's output so far: its result replaces it. */
  live?: boolean;
}

/** Lines of a running tool's output a pane shows (its last ones), and the longest line kept. */
const LIVE_LINES = 5;
const LIVE_LINE_CHARS = 300;

/** A tool call that started and has not ended. */
export interface RunningTool {
  id: string;
  name: string;
  summary: string;
  startedAt: number;
}

/** An extension dialog waiting for this TUI's answer (`extension_ui_request`). */
export interface DialogRequest {
  id: string;
  method: DialogMethod;
  title: string;
  message?: string;
  options?: string[];
  placeholder?: string;
  prefill?: string;
  /** The worker that asked, when the stream said which: a dialog dies with its worker. */
  pid?: number;
}

/** Everything a pane shows about one agent. */
export interface AgentView {
  name: string;
  status: AgentStatus | "unknown";
  statusReason?: string;
  provider?: string;
  model?: string;
  cwd: string;
  /** The agent's own git worktree, when it was spawned with one. */
  worktree?: WorktreeInfo;
  restarts: number;
  createdAt: number;
  /** Finished lines, oldest first, at most MAX_LINES. */
  lines: TranscriptLine[];
  /** The line being streamed (text or thinking), not yet in `lines`. */
  open: TranscriptLine | null;
  tools: RunningTool[];
  tokens: number;
  /** The agent's run as the one event reader folds it; `tools` and `tokens` come from it. */
  run: RunView;
  lastSeq: number;
  /** The agent's last event when the supervisor last listed it: events up to it are history the list's status already covers. */
  listedSeq: number;
  dialogs: DialogRequest[];
  /** Steers and follow-ups waiting for the worker to deliver them, as its last `queue_update` said. */
  queued: { steering: readonly string[]; followUp: readonly string[] };
  /** The worker's pid as the stream last said (`worker_started`, `agent_status`); null: none runs. */
  streamPid: number | null | undefined;
  /** The worker's pid in the last list that was current; undefined until one was. */
  listedPid: number | null | undefined;
  /** Hidden: it was already stopped or failed when this TUI first saw it (history, not live). */
  hidden: boolean;
}

/** Connection to the supervisor, as the header shows it. */
export interface ConnectionView {
  state: "connecting" | "connected" | "disconnected";
  message?: string;
  since: number;
}

/** The whole TUI state. `order` is creation order; `now` drives spinners and elapsed times. */
export interface TuiState {
  agents: Record<string, AgentView>;
  order: string[];
  connection: ConnectionView;
  now: number;
}

/** What the reducer accepts: the stream itself plus what the TUI learns besides it. */
export type TuiAction =
  | IpcStreamMessage
  /** A list from the supervisor; `reconnected`: the first after (re)connecting, which may be a new supervisor. */
  | { type: "agents"; agents: AgentInfo[]; reconnected?: boolean }
  | { type: "connection"; state: ConnectionView["state"]; message?: string; at: number }
  | { type: "dialog_answered"; agent: string; id: string }
  | { type: "notice"; agent: string; text: string; kind?: LineKind }
  /** The agent's whole transcript replaced (a resumed, new or switched session drawn anew). */
  | { type: "transcript"; agent: string; lines: TranscriptLine[] }
  | { type: "tick"; now: number };

/** An empty state at `now`. */
export function initialState(now = Date.now()): TuiState {
  return { agents: {}, order: [], connection: { state: "connecting", since: now }, now };
}

/** The agents that get a pane, in creation order. */
export function visibleAgents(state: TuiState): AgentView[] {
  const out: AgentView[] = [];
  for (const name of state.order) {
    const a = state.agents[name];
    if (a && !a.hidden) out.push(a);
  }
  return out;
}

const NO_QUEUE: AgentView["queued"] = Object.freeze({ steering: [], followUp: [] });

/** `⏳ 2 queued · steer: go left · follow-up: then right`: the line under a pane's transcript; null when nothing waits. */
export function queuedLine(a: AgentView): TranscriptLine | null {
  const { steering, followUp } = a.queued;
  const n = steering.length + followUp.length;
  if (n === 0) return null;
  const items = [...steering.map((t) => `steer: ${t}`), ...followUp.map((t) => `follow-up: ${t}`)];
  return { kind: "notice", text: `⏳ ${n} queued · ${items.join(" · ").replace(/\s+/g, " ")}` };
}

/** The agent's state for a person (working, waiting for you, done, failed...), from what this TUI has seen. */
export function agentActivity(a: AgentView): Activity {
  const last = a.run.lastAssistant;
  return activityOf({
    status: a.status,
    statusReason: a.statusReason,
    questions: a.dialogs.map(dialogQuestion),
    outcome:
      a.run.inRun || !last
        ? null
        : outcomeOfMessage({ role: "assistant", stopReason: last.stopReason, errorMessage: last.errorMessage }),
  });
}

/** Whether a pane's header shows something that moves with the clock (spinner, a tool's elapsed time). */
export function clockMoves(a: AgentView): boolean {
  return a.status === "busy" || a.status === "starting" || a.status === "stopping" || a.tools.length > 0;
}

/** What ink draws itself besides the frame's chrome: these agents in full, and whether it shows the clock. */
export interface InkDrawn {
  agents: ReadonlySet<string>;
  /** Agents ink draws but for the transcript's body (the zoomed one): their streamed text is painted. */
  bodies: ReadonlySet<string>;
  clock: boolean;
  /** Ink draws the header (it counts every agent's state); false: the screen paints it. */
  header: boolean;
}

/** What streaming a delta changes in an agent's view; the rest is what ink shows around a painted body. */
const BODY_ONLY: ReadonlySet<string> = new Set(["open", "run", "lastSeq", "listedSeq"]);

/**
 * Whether ink's part of the screen is the same for `next` as for `prev`: an agent
 * whose pane the screen paints changed only what its pane shows (text, tools, tokens),
 * the zoomed agent only its streamed open line.
 * Then the view keeps `prev` and React and ink skip the frame; the painted pane
 * redraws itself.
 */
export function sameForInk(prev: TuiState, next: TuiState, drawn: InkDrawn): boolean {
  if (prev === next) return true;
  if (prev.order !== next.order || prev.connection !== next.connection) return false;
  if (prev.now !== next.now && drawn.clock) return false;
  if (prev.agents === next.agents) return true;
  for (const name of next.order) {
    const a = prev.agents[name];
    const b = next.agents[name];
    if (a === b) continue;
    if (!a || !b || drawn.agents.has(name)) return false;
    if (drawn.bodies.has(name)) {
      for (const k of Object.keys(b) as (keyof AgentView)[]) if (!BODY_ONLY.has(k) && a[k] !== b[k]) return false;
      continue;
    }
    // What the view reads besides the pane: the footer (dialogs), the diff (worktree), the counts (hidden).
    // Key handlers read the focused agent's status from the store when a key comes.
    if (a.hidden !== b.hidden || a.dialogs !== b.dialogs || a.cwd !== b.cwd) return false;
    // The header counts the agents' states (when ink draws it; a painted header repaints itself).
    if (
      drawn.header &&
      (a.status !== b.status || (a.run !== b.run && agentActivity(a).state !== agentActivity(b).state))
    )
      return false;
    if (a.worktree?.path !== b.worktree?.path || a.worktree?.branch !== b.worktree?.branch) return false;
  }
  return true;
}

const ENDED: ReadonlySet<string> = new Set(["stopped", "failed"]);
/** Statuses in which no worker process runs, so no dialog of one can still be open. */
const NO_WORKER: ReadonlySet<string> = new Set(["stopped", "failed", "backoff"]);

/**
 * The dialogs a listing of the agent leaves open. A worker's dialogs die with it; when
 * the supervisor itself was killed no `dialog_closed` says so, so the list is the only
 * witness: no live worker closes them all, another worker those the old one asked.
 */
function liveDialogs(dialogs: DialogRequest[], status: string, pid: number | null): DialogRequest[] {
  if (dialogs.length === 0) return dialogs;
  if (pid === null || NO_WORKER.has(status)) return [];
  const kept = dialogs.filter((d) => d.pid === undefined || d.pid === pid);
  return kept.length === dialogs.length ? dialogs : kept;
}

function newView(name: string, now: number): AgentView {
  return {
    name,
    status: "unknown",
    cwd: "",
    restarts: 0,
    createdAt: now,
    lines: [],
    open: null,
    tools: [],
    tokens: 0,
    run: EMPTY_RUN_VIEW,
    lastSeq: 0,
    listedSeq: 0,
    dialogs: [],
    queued: NO_QUEUE,
    streamPid: undefined,
    listedPid: undefined,
    hidden: false,
  };
}

/** Fold one action into the state. Never mutates its input. */
export function reduce(state: TuiState, action: TuiAction): TuiState {
  switch (action.type) {
    case "tick":
      return { ...state, now: action.now };
    case "connection":
      return { ...state, connection: { state: action.state, message: action.message, since: action.at } };
    case "agents":
      return mergeAgents(state, action.agents, action.reconnected === true);
    case "dialog_answered": {
      const a = state.agents[action.agent];
      if (!a) return state;
      return put(state, { ...a, dialogs: a.dialogs.filter((d) => d.id !== action.id) });
    }
    case "notice": {
      const a = state.agents[action.agent];
      if (!a) return state;
      return put(state, push(a, { kind: action.kind ?? "notice", text: action.text }));
    }
    case "transcript": {
      const a = state.agents[action.agent];
      if (!a) return state;
      return put(state, { ...a, lines: action.lines.slice(-MAX_LINES), open: null });
    }
    case "lagged": {
      const a = state.agents[action.agent] ?? newView(action.agent, state.now);
      // A new supervisor holds fewer events than this view already showed: nothing was missed.
      if (action.to <= a.lastSeq) return state;
      const from = Math.max(action.from, a.lastSeq + 1);
      const why =
        action.reason === "not_logged"
          ? "lost while the disk was full; no log has them"
          : a.lastSeq === 0
            ? `not held in memory; pi-orch logs ${a.name} has them`
            : "this view fell behind";
      return put(
        state,
        push({ ...a, lastSeq: action.to }, { kind: "notice", text: `… skipped events ${from}-${action.to} (${why})` }),
      );
    }
    case "event": {
      const existing = state.agents[action.agent];
      if (existing && action.seq <= existing.lastSeq) return state; // replayed after a reconnect
      const a = existing ?? newView(action.agent, action.at ?? state.now);
      const next = applyEvent({ ...a, lastSeq: action.seq }, action.event as TuiEvent, action.at ?? state.now);
      // A replayed status the list already counted is older than the list's: an agent that was
      // busy when a killed supervisor died is listed stopped, and must not show busy again.
      // Its dialogs are history too when the list shows their worker gone (a later TUI's replay).
      if (action.seq <= a.listedSeq) {
        const dialogs =
          next.dialogs === a.dialogs || a.listedPid === undefined
            ? next.dialogs
            : liveDialogs(next.dialogs, a.status, a.listedPid);
        return put(state, {
          ...next,
          dialogs,
          status: a.status,
          statusReason: a.statusReason,
          restarts: a.restarts,
          hidden: a.hidden,
        });
      }
      return put(state, next);
    }
  }
}

/** What an agent's stream carries that the TUI reads: the run's events and extension dialogs. */
type TuiEvent = RunEvent | ExtensionUiRequest;

function put(state: TuiState, view: AgentView): TuiState {
  const known = view.name in state.agents;
  return {
    ...state,
    agents: { ...state.agents, [view.name]: view },
    order: known ? state.order : [...state.order, view.name],
  };
}

/**
 * Upsert the listed agents and drop those the supervisor no longer has. A list is a
 * snapshot: when events newer than it were already applied, their status stands.
 */
function mergeAgents(state: TuiState, infos: AgentInfo[], reconnected: boolean): TuiState {
  const agents: Record<string, AgentView> = {};
  for (const info of infos) {
    const old = state.agents[info.name];
    const base = old ?? { ...newView(info.name, info.createdAt), hidden: ENDED.has(info.status) };
    // A new supervisor may number events from its own log: forget what was seen past it.
    const lastSeq = reconnected && info.lastSeq < base.lastSeq ? info.lastSeq : base.lastSeq;
    const current = !old || reconnected || info.lastSeq >= base.lastSeq;
    let dialogs = current ? liveDialogs(base.dialogs, info.status, info.pid) : base.dialogs;
    // A new supervisor runs a new worker: dialogs whose asker the stream never named were the old one's.
    if (reconnected && old?.listedPid != null && old.listedPid !== info.pid && dialogs.some((d) => d.pid === undefined))
      dialogs = dialogs.filter((d) => d.pid !== undefined);
    agents[info.name] = {
      ...base,
      status: current ? info.status : base.status,
      statusReason: current ? info.statusReason : base.statusReason,
      restarts: current ? info.restarts : base.restarts,
      provider: base.provider ?? info.provider,
      model: base.model ?? info.model,
      cwd: info.worktree?.path ?? info.cwd,
      worktree: info.worktree,
      createdAt: info.createdAt,
      lastSeq,
      listedSeq: current ? info.lastSeq : base.listedSeq,
      listedPid: current ? info.pid : base.listedPid,
      dialogs,
      hidden: base.hidden && ENDED.has(info.status),
    };
  }
  const order = Object.values(agents)
    .sort((x, y) => x.createdAt - y.createdAt || x.name.localeCompare(y.name))
    .map((a) => a.name);
  // The same order stays the same array: the periodic list then redraws only what changed.
  const same = order.length === state.order.length && order.every((n, i) => n === state.order[i]);
  return { ...state, agents, order: same ? state.order : order };
}

/** Append a finished line, keeping at most MAX_LINES. */
function push(a: AgentView, line: TranscriptLine): AgentView {
  const lines =
    a.lines.length >= MAX_LINES ? [...a.lines.slice(a.lines.length - MAX_LINES + 1), line] : [...a.lines, line];
  return { ...a, lines };
}

/** Finish the open streamed line, if any; a running tool's live output is dropped (its result follows). */
function close(a: AgentView): AgentView {
  if (!a.open) return a;
  const open = a.open;
  const closed = { ...a, open: null };
  return open.text === "" || open.live ? closed : push(closed, open);
}

/** The tail of a running tool's output so far as the open line (bounded in lines and width). */
function liveOutput(a: AgentView, partial: unknown): AgentView {
  const text = contentText((partial as { content?: unknown } | undefined)?.content).trimEnd();
  if (text === "") return a;
  const tail = text
    .split("\n")
    .slice(-LIVE_LINES)
    .map((l) => (l.length > LIVE_LINE_CHARS ? `${l.slice(0, LIVE_LINE_CHARS)}…` : l))
    .join("\n");
  const base = a.open && !a.open.live ? close(a) : a;
  return { ...base, open: { kind: "result", text: tail, live: true } };
}

/** Add streamed text of `kind`: complete lines move to `lines`, the rest stays open. */
function stream(a: AgentView, kind: "text" | "thinking", delta: string): AgentView {
  let view = a.open && a.open.kind !== kind ? close(a) : a;
  const text = (view.open?.text ?? "") + delta;
  const parts = text.split("\n");
  const rest = parts.pop()!;
  if (parts.length > 0) {
    view = { ...view, open: null };
    for (const p of parts) view = push(view, { kind, text: p });
  }
  return { ...view, open: { kind, text: rest } };
}

/** Fold the event into the run view, then take the running tools and tokens from it. */
function applyEvent(a: AgentView, e: TuiEvent, at: number): AgentView {
  if (e.type === "extension_ui_request") return dialogOrNotice(a, e);
  if (e.type === "queue_update") return { ...a, queued: { steering: e.steering, followUp: e.followUp } };
  // Queued messages die with their worker.
  if (e.type === "worker_exited" && a.queued !== NO_QUEUE) a = { ...a, queued: NO_QUEUE };
  if (e.type === "worker_started" || e.type === "agent_status") a = pidOf(a, e.pid);
  // Answered elsewhere (another client), timed out, dismissed by its extension, or gone with the worker.
  if (e.type === "dialog_closed")
    return a.dialogs.some((d) => d.id === e.id) ? { ...a, dialogs: a.dialogs.filter((d) => d.id !== e.id) } : a;
  const run = foldRun(a.run, e);
  const lines = run === a.run ? a : { ...a, run, tokens: run.tokens.total, tools: toolsOf(a.tools, run, at) };
  return transcribe(lines, e);
}

/** The view's running tools, keeping the summary and start time of those already shown. */
function toolsOf(shown: RunningTool[], run: RunView, at: number): RunningTool[] {
  if (run.running.length === 0) return shown.length === 0 ? shown : [];
  return run.running.map(
    (t) =>
      shown.find((s) => s.id === t.toolCallId) ?? {
        id: t.toolCallId,
        name: t.toolName,
        summary: summarizeArgs(t.toolName, t.args),
        startedAt: at,
      },
  );
}

/** The transcript lines the event adds. */
function transcribe(a: AgentView, e: RunEvent): AgentView {
  switch (e.type) {
    case "agent_status": {
      const next = {
        ...a,
        status: e.status,
        statusReason: typeof e.reason === "string" ? e.reason : undefined,
        restarts: typeof e.restarts === "number" ? e.restarts : a.restarts,
        hidden: a.hidden && ENDED.has(e.status),
      };
      // idle ⇄ busy is every prompt, and a new agent starts from stopped: only the rarer transitions earn a line.
      const routine =
        ((e.status === "busy" || e.status === "idle") &&
          (e.previous === "busy" || e.previous === "idle" || e.previous === "starting")) ||
        (e.status === "starting" && e.previous === "stopped" && a.lines.length === 0);
      if (routine) return next;
      return push(close(next), {
        kind: e.status === "failed" ? "error" : "notice",
        text: `· ${e.previous} → ${e.status}${e.reason ? ` (${e.reason})` : ""}`,
      });
    }
    case "message_start": {
      const m = e.message;
      if (m?.role === "user") return push(close(a), { kind: "user", text: `> ${contentText(m.content)}` });
      if (m?.role === "assistant") return { ...a, provider: m.provider ?? a.provider, model: m.model ?? a.model };
      return a;
    }
    case "message_update": {
      const d = e.assistantMessageEvent;
      if (d?.type === "text_delta") return stream(a, "text", String(d.delta));
      if (d?.type === "thinking_delta") return stream(a, "thinking", String(d.delta));
      if (d?.type === "text_end" || d?.type === "thinking_end") return close(a);
      return a;
    }
    case "message_end": {
      const m = e.message;
      if (m?.role !== "assistant") return a;
      let next: AgentView = close(a);
      if (m.stopReason === "error")
        next = push(next, { kind: "error", text: `error: ${m.errorMessage ?? "the model request failed"}` });
      if (m.stopReason === "aborted") next = push(next, { kind: "notice", text: "aborted" });
      return next;
    }
    case "tool_execution_start": {
      const summary = summarizeArgs(e.toolName, e.args);
      return push(close(a), { kind: "tool", text: `⏺ ${String(e.toolName)}(${summary})` });
    }
    case "tool_execution_update":
      return liveOutput(a, e.partialResult);
    case "tool_execution_end": {
      const text = contentText(e.result?.content).trimEnd();
      const kept = text.length > MAX_RESULT_CHARS ? `${text.slice(0, MAX_RESULT_CHARS)}\n…` : text;
      const base = a.open?.live ? { ...a, open: null } : a;
      return push(base, { kind: e.isError ? "error" : "result", text: kept || "(no output)" });
    }
    case "agent_end":
      return close(a);
    case "worker_exited":
      return push(close(a), {
        kind: "notice",
        text: `· worker exited (${e.reason}${e.code != null ? `, code ${e.code}` : ""}${e.signal ? `, ${e.signal}` : ""})`,
      });
    case "run_interrupted":
      return push(close(a), { kind: "error", text: `! run interrupted: ${e.reason}` });
    case "limit_exceeded":
      return push(close(a), { kind: "error", text: `! limit exceeded (${e.limit}): ${e.message}` });
    case "protocol_error":
    case "supervisor_error":
      return push(close(a), { kind: "error", text: `! ${e.type.replace("_", " ")}: ${e.message ?? ""}` });
    case "extension_error":
      return push(close(a), { kind: "error", text: `! extension error: ${e.error ?? ""}` });
    case "auto_retry_start":
      return push(close(a), {
        kind: "notice",
        text: `· retrying (attempt ${e.attempt ?? "?"}): ${e.errorMessage ?? ""}`,
      });
    default:
      return a;
  }
}

/** The view with the worker pid an event names (a number, or null: no worker). */
function pidOf(a: AgentView, pid: unknown): AgentView {
  const next = typeof pid === "number" ? pid : pid === null ? null : a.streamPid;
  return next === a.streamPid ? a : { ...a, streamPid: next };
}

function dialogOrNotice(a: AgentView, e: ExtensionUiRequest): AgentView {
  const method = e.method;
  if (method === "notify")
    return push(close(a), { kind: e.notifyType === "error" ? "error" : "notice", text: `· ${e.message ?? ""}` });
  if (!isDialogMethod(method)) return a;
  const dialog: DialogRequest = {
    id: String(e.id),
    method,
    title: String(e.title ?? ""),
    ...(typeof e.message === "string" ? { message: e.message } : {}),
    ...(Array.isArray(e.options) ? { options: e.options.map(String) } : {}),
    ...(typeof e.placeholder === "string" ? { placeholder: e.placeholder } : {}),
    ...(typeof e.prefill === "string" ? { prefill: e.prefill } : {}),
    ...(typeof a.streamPid === "number" ? { pid: a.streamPid } : {}),
  };
  return { ...a, dialogs: [...a.dialogs, dialog] };
}
