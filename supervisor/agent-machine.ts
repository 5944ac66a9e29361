/**
 * The agent actor as a table: `transition(config, state, message, now)` returns the next
 * state and the effects to perform, as data (spawn, send a line, stop or kill the worker,
 * start or cancel a timer, emit an event, persist, answer a caller). No process, no
 * timer, no clock of its own: the shell in agent-actor.ts performs the effects and posts
 * every line, exit, timer and answer back as a message, so the whole life of an agent
 * can be stepped through in a test.
 */
import { scanEventType, scannedToolCallId } from "../shared/event-type.js";
import { parseJsonValue, peekLineHead, withWire } from "../shared/jsonl.js";
import { AGENT_VAR } from "../shared/proc.js";
import {
  answerData,
  answerFields,
  dialogQuestion,
  isDialogMethod,
  RpcPromptAnswerSummary,
  RpcStateSummary,
  type RpcResponse,
} from "../shared/schema/rpc.js";
import { RUNNING_STATUSES, type WorkerExit } from "../shared/schema/agent.js";
import { judgeStartupExit } from "./config-error.js";
import { OrchError } from "./errors.js";
import { redactArgv } from "./redact.js";
import { checkPresence, nextPingInMs, pingTimeLeft } from "./presence.js";
import { NO_FLOOD, noteBadLine } from "./protocol-flood.js";
import { decideRestart, describeExit, NO_RESTARTS } from "./restart-policy.js";
import { buildWorkerArgv } from "./worker-command.js";
import { outcomeOfMessage } from "../shared/activity.js";
import { addMessageUsage, NO_USAGE } from "../shared/usage.js";
import {
  copyState,
  describeStatus,
  notRunningError,
  START_TIMEOUT_LIMIT,
  type AgentEffect,
  type AgentMessage,
  type AgentState,
  type MachineConfig,
  type Mutable,
  type Transition,
} from "./agent-state.js";
import { StepWriter } from "./step-writer.js";
import { closeDialog, closeDismissedDialogs, openDialog } from "./step-dialogs.js";
import { armFloodTimer, onFloodTick, summariseFlood } from "./step-flood.js";
import { abortRun, beginRun, countTokens, endRun, settleRun } from "./step-runs.js";

/** Handle one message. Pure: the state given is not changed. */
export function transition(config: MachineConfig, state: AgentState, message: AgentMessage, now: number): Transition {
  if (message.kind === "line" && message.gen === state.worker?.gen)
    return lineTransition(config, state, message.line, now);
  const step = new Step(config, state, now);
  step.handle(message);
  return { state: step.s, effects: step.effects };
}

/**
 * Worker events the table acts on (runs, tokens, dialogs): only these reach the switch of
 * `onWorkerEvent`, so a case added there without its type here is dead in every path.
 * Any other event is only logged and published.
 */
const EVENTS_ACTED_ON: ReadonlySet<unknown> = new Set([
  "agent_start",
  "agent_end",
  "agent_settled",
  "auto_retry_end",
  "message_end",
  "extension_ui_request",
]);

/**
 * How far behind a forwarded event the times seen (`lastSeenAt`, `lastEventAt`) may stay:
 * a second, or an eighth of the stall timeout when that is shorter, so a streaming agent
 * is never taken for stalled (and a silent one is told stalled at most that much early).
 * Each move is a copy of the whole state; a fleet of slow streamers (1,000 agents, 10
 * events/s each) writes each agent's events 100 ms apart, and moving the times at each
 * of them copied the state for every routed event.
 */
function seenResolutionMs(config: MachineConfig): number {
  return Math.min(1_000, config.timings.stallTimeoutMs / 8);
}

/**
 * A line of the current worker: the hot path, every event of every worker comes here.
 * An event the table only logs and publishes (most of a stream: `message_update`,
 * `tool_execution_update`) takes no Step, and no copy of the state unless the times seen
 * are more than `seenResolutionMs` old; everything else goes through a Step like any
 * other message.
 */
function lineTransition(config: MachineConfig, state: AgentState, line: string, now: number): Transition {
  // Most lines of a stream: a valid event object whose type alone is all the table needs,
  // found by a scan that builds nothing (a line it is not sure of is parsed below).
  const type = scanEventType(line);
  if (type !== null && type !== "response" && !EVENTS_ACTED_ON.has(type) && state.record.status !== "stalled")
    return {
      state: seen(config, state, now),
      effects: [{ kind: "forward", type, raw: line, toolCallId: scannedToolCallId() }],
    };
  const value = parseJsonValue(line);
  if (isEventObject(value) && !EVENTS_ACTED_ON.has(value.type) && state.record.status !== "stalled")
    return { state: seen(config, state, now), effects: [{ kind: "emit", event: value, raw: line.trim() }] };
  const step = new Step(config, state, now);
  step.onLine(line, value);
  return { state: step.s, effects: step.effects };
}

/** `state` with the times seen moved to `now` when they are `seenResolutionMs` old, else the very same state. */
function seen(config: MachineConfig, state: AgentState, now: number): AgentState {
  const resolution = seenResolutionMs(config);
  if (state.lastSeenAt !== null && now - state.lastSeenAt < resolution && now - state.lastEventAt < resolution)
    return state;
  const copy = copyState(state);
  copy.lastSeenAt = now;
  copy.lastEventAt = now;
  return copy;
}

/** A JSON object that is not a response: an event. */
function isEventObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    (value as { type?: unknown }).type !== "response"
  );
}

/** One transition in the making: a copy of the state and the effects so far. */
class Step {
  /** The state being changed and the effects so far, with the primitive effects. */
  readonly w: StepWriter;

  constructor(
    private readonly config: MachineConfig,
    state: AgentState,
    private readonly now: number,
  ) {
    this.w = new StepWriter(state, now);
  }

  /** The state being changed. */
  get s(): Mutable<AgentState> {
    return this.w.s;
  }

  /** The effects so far, in order. */
  get effects(): AgentEffect[] {
    return this.w.effects;
  }

  handle(m: AgentMessage): void {
    const s = this.s;
    switch (m.kind) {
      case "start":
        if (s.worker === null && s.record.status !== "backoff" && s.record.status !== "stopping") this.spawnWorker();
        return;
      case "stop":
        return this.onStop(m.caller, m.reason);
      case "kill":
        return this.onKill(m.caller);
      case "interrupted":
        return this.w.emit({ type: "run_interrupted", reason: m.reason });
      case "restart":
        return this.onRestart();
      case "rpc":
        return this.onRpc(m);
      case "disk":
        s.diskProblem = m.problem;
        this.w.setStatus(s.record.status, m.problem ?? undefined);
        return;
      case "spawned":
        if (m.gen === s.gen) this.onSpawned(m);
        return;
      case "line":
        // The current worker's lines take lineTransition; an older worker's are ignored.
        return;
      case "line_too_long": {
        if (m.gen !== s.worker?.gen) return;
        this.w.report({ type: "protocol_error", message: m.message });
        // A dropped end must still end the run, or the agent stays busy forever.
        const head = peekLineHead(m.head).type;
        if (head === "agent_end" || head === "agent_settled") {
          const event =
            head === "agent_end" ? { type: head, messages: [], truncated: true } : { type: head, truncated: true };
          this.onWorkerEvent(event, JSON.stringify(event));
        }
        return;
      }
      case "exit":
        if (m.gen === s.worker?.gen) this.onExit(m);
        return;
      case "teardown_done":
        if (m.gen === s.gen && s.record.status === "stopping") this.onStopped();
        return;
      case "start_timeout":
        if (m.gen === s.worker?.gen && s.record.status === "starting") {
          this.abandon(
            "start_timeout",
            `no answer to get_state within ${formatMs(this.config.timings.startTimeoutMs)} of starting`,
          );
        }
        return;
      case "ping_tick":
        if (m.gen === s.worker?.gen) this.onPingTick(m.rssBytes);
        return;
      case "ping_timeout":
        if (m.gen === s.worker?.gen && s.ping === m.id && RUNNING_STATUSES.has(s.record.status)) {
          const left = pingTimeLeft(this.config.timings.pingDeadlineMs, this.now - m.sentAt, m.waitedMs);
          if (left > 0) {
            this.w.timer("ping_deadline", left, m);
            return;
          }
          s.ping = null;
          const message = `no answer to get_state within ${formatMs(this.config.timings.pingDeadlineMs)}`;
          this.w.setStatus("unresponsive", message);
          this.abandon("unresponsive", message);
        }
        return;
      case "flood_tick":
        if (m.gen === s.worker?.gen) onFloodTick(this.w, this.config.protocolFlood);
        return;
      case "run_timeout":
        if (m.gen === s.worker?.gen && s.run?.n === m.run) {
          abortRun(this.w, "run_timeout", `run timeout of ${formatMs(s.record.limits.runTimeoutMs!)} exceeded`);
        }
        return;
      case "rpc_timeout": {
        const pending = s.pending.get(m.id);
        if (pending?.kind !== "call") return; // answered in the meantime
        if (s.dialogs.size > 0) {
          // The worker waits for a person: the command may be the one that asked.
          this.w.addPending(m.id, { ...pending, held: true });
          this.w.report({ type: "rpc_waiting", command: m.type, timeoutMs: m.timeoutMs, dialogs: s.dialogs.size });
          return;
        }
        this.w.dropPending(m.id);
        const name = s.record.name;
        this.effects.push({
          kind: "reject",
          caller: pending.caller,
          error: new OrchError(
            "timeout",
            `agent "${name}" did not answer ${m.type} within ${formatMs(m.timeoutMs)}; check pi-orch status ${name}. ` +
              `To wait longer give pi-orch rpc --timeout MS, or start the supervisor with PI_ORCH_TIMINGS='{"rpcTimeoutMs":MS}' (the default for every command); while the worker waits on a dialog no command times out`,
          ),
        });
        return;
      }
      case "dialog_timeout":
        if (m.gen === s.worker?.gen) closeDialog(this.w, m.id, "timeout");
        return;
      case "wait":
        if (m.test(s.record.status)) {
          this.effects.push({ kind: "resolve", caller: m.caller, value: s.record.status });
          return;
        }
        s.waiters = [...s.waiters, { caller: m.caller, test: m.test, timeoutMs: m.timeoutMs }];
        this.w.timer(`wait:${m.caller}`, m.timeoutMs, { kind: "wait_timeout", caller: m.caller });
        return;
      case "wait_timeout": {
        const waiter = s.waiters.find((w) => w.caller === m.caller);
        if (!waiter) return; // satisfied in the meantime
        s.waiters = s.waiters.filter((w) => w !== waiter);
        this.effects.push({
          kind: "reject",
          caller: m.caller,
          error: new OrchError(
            "timeout",
            `agent "${s.record.name}" is still ${describeStatus(s)} after ${waiter.timeoutMs} ms`,
          ),
        });
        return;
      }
      case "removed": {
        const waiters = s.waiters;
        s.waiters = [];
        for (const w of waiters) {
          this.w.cancel(`wait:${w.caller}`);
          this.effects.push({
            kind: "reject",
            caller: w.caller,
            error: new OrchError("not_found", `agent "${s.record.name}" was removed`),
          });
        }
        return;
      }
      case "backoff_done":
        if (m.token === s.backoffToken && s.record.status === "backoff") {
          this.w.record({ restarts: s.record.restarts + 1 });
          this.spawnWorker();
        }
        return;
    }
  }

  private spawnWorker(): void {
    const s = this.s;
    let built: ReturnType<typeof buildWorkerArgv>;
    try {
      built = buildWorkerArgv(s.record, s.record.sessionFile, this.config.defaultCommand);
    } catch (err) {
      // A record the command cannot be built from (one saved before spawn checked it, e.g. a
      // custom command with --api-key and no provider): every start would fail the same way.
      this.w.setStatus("failed", err instanceof Error ? err.message : String(err));
      return;
    }
    const gen = ++s.gen;
    s.intendedExit = null;
    s.settles = false;
    s.flood = NO_FLOOD;
    s.lastEventAt = this.now;
    this.w.setStatus("starting");
    const { file, args, env: keyEnv } = built;
    s.worker = { gen, pid: undefined, startedAt: this.now, file, args };
    // Last effect of this step: the shell answers it with `spawned` before anything else runs.
    this.effects.push({
      kind: "spawn",
      gen,
      file,
      args,
      cwd: s.record.cwd,
      // PI_ORCH_AGENT marks every process of this agent: the CLI refuses to steer the fleet from it.
      env: { ...this.config.baseEnv, ...s.record.env, ...keyEnv, [AGENT_VAR]: s.record.name },
    });
  }

  private onSpawned(m: Extract<AgentMessage, { kind: "spawned" }>): void {
    const s = this.s;
    s.worker = { ...s.worker!, pid: m.pid, startedAt: m.startedAt };
    this.w.record({ pid: m.pid ?? null });
    this.w.persist();
    if (m.pid === undefined) return; // the exit message with the spawn error follows
    const { file, args } = s.worker;
    this.w.report({
      type: "worker_started",
      pid: m.pid,
      command: redactArgv([file, ...args]) ?? [],
      resumed: s.record.sessionFile,
    });
    const probe = this.w.requestId("start");
    this.w.addPending(probe, { kind: "probe" });
    this.w.send({ id: probe, type: "get_state" });
    this.w.timer("start", this.config.timings.startTimeoutMs, { kind: "start_timeout", gen: m.gen });
  }

  private onStartProbe(response: RpcResponse): void {
    const s = this.s;
    if (s.record.status !== "starting" || !s.worker) return;
    this.w.cancel("start");
    s.startupFailure = null;
    s.startTimeouts = 0;
    const streaming = this.learnState(answerFields(RpcStateSummary, response));
    // Lowered once it answered, not at spawn: a start-up is short, and at nice 19 on a
    // saturated machine it could miss the start deadline.
    this.effects.push({ kind: "lower_priority", gen: s.worker.gen, nice: this.config.workerNice });
    this.w.setStatus(streaming ? "busy" : "idle");
    s.idlePings = 0;
    this.armPingTick();
  }

  /** Something is going on: an idle agent's pings, drifted apart, come at the usual interval again. */
  private pingAsUsual(): void {
    const s = this.s;
    if (s.idlePings === 0) return;
    s.idlePings = 0;
    if (s.worker && RUNNING_STATUSES.has(s.record.status)) this.armPingTick();
  }

  private armPingTick(): void {
    const gen = this.s.worker!.gen;
    const measureRss = this.s.record.limits.maxMemoryMb !== undefined;
    this.effects.push({
      kind: "timer",
      key: "ping_tick",
      ms: nextPingInMs(this.config.timings, this.s.idlePings),
      message: { kind: "ping_tick", gen, rssBytes: null },
      measureRss,
    });
  }

  /** Take what matters from a `get_state` answer; returns whether a run is streaming. */
  private learnState(data: RpcStateSummary | undefined): boolean {
    const s = this.s;
    s.lastSeenAt = this.now;
    // What the worker resolved (`faux/faux-1` for `--provider faux`), shown by every client
    // and kept in the registry, so the next supervisor names a stopped agent the same way.
    // Only a new model or session file is worth a registry write: each one is an fsync on
    // the routing thread, and every agent's ping answer arrives here every few seconds.
    const model = data?.model;
    const reported = s.record.reportedModel;
    let changed = false;
    if (model && (reported?.provider !== model.provider || reported.model !== model.id)) {
      this.w.record({ reportedModel: { provider: model.provider, model: model.id } });
      changed = true;
    }
    if (data?.sessionFile !== undefined && data.sessionFile !== s.record.sessionFile) {
      this.w.record({ sessionFile: data.sessionFile });
      changed = true;
    }
    if (changed) this.w.persist();
    return data?.isStreaming === true;
  }

  private onPingTick(rssBytes: number | null): void {
    const s = this.s;
    const { timings } = this.config;
    // Nothing going on: the next tick may wait longer. A memory limit is checked at the usual pace.
    const quiet =
      s.record.status === "idle" &&
      s.dialogs.size === 0 &&
      s.record.limits.maxMemoryMb === undefined &&
      ![...s.pending.values()].some((p) => p.kind === "call");
    s.idlePings = quiet ? s.idlePings + 1 : 0;
    this.armPingTick();
    const actions = checkPresence(
      // A busy agent waiting on a dialog is waiting for a person, not stalled.
      {
        status: s.record.status,
        lastEventAt: s.dialogs.size > 0 ? this.now : s.lastEventAt,
        pingOutstanding: s.ping !== null,
        rssBytes,
      },
      { stallTimeoutMs: timings.stallTimeoutMs, maxMemoryMb: s.record.limits.maxMemoryMb },
      this.now,
    );
    for (const action of actions) {
      if (!s.worker) return; // an action above gave the worker up
      if (action.kind === "stall") this.onStall();
      else if (action.kind === "over_memory") {
        this.w.report({ type: "limit_exceeded", limit: "max_memory", message: action.message });
        this.abandon("memory_limit", action.message);
      } else this.sendPing();
    }
  }

  private sendPing(): void {
    const s = this.s;
    const id = this.w.requestId("ping");
    s.ping = id;
    this.w.addPending(id, { kind: "ping", dialogs: new Set(s.dialogs.keys()) });
    this.w.timer("ping_deadline", this.config.timings.pingDeadlineMs, {
      kind: "ping_timeout",
      gen: s.worker!.gen,
      id,
      sentAt: this.now,
      waitedMs: 0,
    });
    this.w.send({ id, type: "get_state" });
  }

  private onStall(): void {
    const s = this.s;
    const silent = formatMs(this.now - s.lastEventAt);
    this.w.setStatus("stalled", `busy with no event for ${silent}`);
    const action = s.record.onStall;
    if (action === "abort") abortRun(this.w, "stall", `stalled: no event for ${silent}`);
    else if (action === "restart")
      this.giveUpGracefully({ reason: "stalled", message: `no event for ${silent} while busy` });
  }

  /** End the current worker gracefully for a reason of ours; its exit follows and restarts it by policy. */
  private giveUpGracefully(intended: Omit<WorkerExit, "code" | "signal" | "at">): void {
    const s = this.s;
    s.intendedExit = intended;
    this.w.clearWorkerTimers();
    const { stopGraceMs, killGraceMs } = this.config.timings;
    this.effects.push({
      kind: "stop_worker",
      gen: s.worker!.gen,
      graceMs: stopGraceMs,
      killGraceMs,
      abort: true,
      notify: false,
    });
  }

  /** A line of the current worker that lineTransition did not take; `value` is its JSON (undefined: not JSON). */
  onLine(line: string, value: unknown): void {
    this.s.lastSeenAt = this.now;
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      this.onBadLine(line);
      return;
    }
    const object = value as Record<string, unknown>;
    if (object.type === "response") return this.onResponse(object as RpcResponse);
    this.onWorkerEvent(object, line.trim());
  }

  /** A non-JSON line: reported while few, counted and summarised once a second while the worker floods. */
  private onBadLine(line: string): void {
    const s = this.s;
    const limits = this.config.protocolFlood;
    const noted = noteBadLine(s.flood, limits, this.now);
    s.flood = noted.state;
    if (noted.action === "report") {
      const sample = line.length > 200 ? `${line.slice(0, 200)}…` : line;
      this.effects.push({ kind: "stderr", text: `[pi-orch] non-protocol stdout line: ${sample}\n` });
      this.w.report({ type: "protocol_error", message: `worker wrote a line that is not a JSON object: ${sample}` });
      return;
    }
    if (noted.floodStarted) {
      s.protocolProblem = `protocol errors: over ${limits.perWindow} non-JSON lines in ${formatMs(limits.windowMs)}`;
      this.effects.push({
        kind: "stderr",
        text: `[pi-orch] ${s.protocolProblem}; further lines are counted, not logged\n`,
      });
      this.w.setStatus(s.record.status);
      armFloodTimer(this.w, this.config.protocolFlood);
    }
    if (noted.action === "restart" && s.worker) {
      summariseFlood(this.w);
      this.giveUpGracefully({ reason: "protocol_errors", message: `${s.flood.totalDropped} non-JSON lines dropped` });
    }
  }

  private onResponse(response: RpcResponse): void {
    const s = this.s;
    const id = typeof response.id === "string" ? response.id : undefined;
    const pending = id === undefined ? undefined : s.pending.get(id);
    if (!pending) return; // an answer nobody waits for (timed out, or a worker that does not echo ids)
    this.w.dropPending(id!);
    if (pending.kind === "probe") return this.onStartProbe(response);
    if (pending.kind === "ping") {
      if (s.ping === id) {
        this.w.cancel("ping_deadline");
        s.ping = null;
      }
      const state = answerFields(RpcStateSummary, response);
      this.learnState(state);
      closeDismissedDialogs(this.w, state, pending.dialogs);
      return;
    }
    this.w.cancel(`rpc:${id}`);
    // pi 1.x says what became of a prompt, steer or follow-up: such a worker settles its runs.
    if (typeof answerData(RpcPromptAnswerSummary, response)?.disposition === "string") s.settles = true;
    const out: RpcResponse = { ...response };
    if (pending.callerId === undefined) delete out.id;
    else out.id = pending.callerId as string;
    this.effects.push({ kind: "resolve", caller: pending.caller, value: out });
  }

  private onWorkerEvent(event: Record<string, unknown>, raw: string): void {
    const s = this.s;
    s.lastEventAt = this.now;
    this.pingAsUsual();
    this.w.emit(event, raw);
    const status = s.record.status;
    if (!EVENTS_ACTED_ON.has(event.type)) {
      if (status === "stalled") this.w.setStatus("busy");
      return;
    }
    switch (event.type) {
      case "agent_start":
        // With a worker that settles, a retry or a queued message goes on with the same run.
        if (!s.settles || !s.run) beginRun(this.w);
        if (RUNNING_STATUSES.has(status)) this.w.setStatus("busy");
        break;
      case "agent_end":
        // The run goes on after it when the worker settles (until agent_settled) or says a retry follows.
        if (!s.settles && event.willRetry !== true) settleRun(this.w, status);
        break;
      case "agent_settled":
        s.settles = true;
        settleRun(this.w, status);
        break;
      case "auto_retry_end":
        // Outside a run and still busy: the retry wait was cancelled, no run follows.
        if (event.success === false && !s.run && status === "busy") this.w.setStatus("idle");
        else if (status === "stalled") this.w.setStatus("busy");
        break;
      case "message_end": {
        // Kept in the record, written with its next change (a run's end): not a write per message.
        const outcome = s.run ? outcomeOfMessage(event.message) : null;
        if (outcome) s.outcome = outcome;
        const usage = addMessageUsage(s.record.usage ?? NO_USAGE, event.message);
        if (usage !== (s.record.usage ?? NO_USAGE)) this.w.record({ usage });
        countTokens(this.w, event.message);
        if (s.record.status === "stalled") this.w.setStatus("busy");
        break;
      }
      case "extension_ui_request":
        if (isDialogMethod(event.method) && typeof event.id === "string")
          openDialog(this.w, event.id, dialogQuestion(event), event.timeout);
        if (status === "stalled") this.w.setStatus("busy");
        break;
    }
  }

  /** The supervisor gives up on the current process (hung, over a limit): SIGKILL its group; the exit follows. */
  private abandon(reason: WorkerExit["reason"], message: string): void {
    const s = this.s;
    if (!s.worker) return;
    s.intendedExit = { reason, message };
    this.w.clearWorkerTimers();
    this.effects.push({ kind: "kill_worker", gen: s.worker.gen, notify: false });
  }

  private onExit(m: Extract<AgentMessage, { kind: "exit" }>): void {
    const s = this.s;
    const worker = s.worker!;
    const neverReady = s.record.status === "starting";
    const wasRunning = s.run !== null || s.record.status === "busy" || s.record.status === "stalled";
    this.w.clearWorkerTimers();
    if (s.run) s.outcome = { state: "failed", message: "its worker exited during the run" };
    endRun(this.w);
    this.w.rejectPending(describeExit({ code: m.code, signal: m.signal, reason: "exit", at: 0 }));
    for (const id of s.dialogs.keys()) {
      this.w.cancel(`dialog:${id}`);
      this.w.report({ type: "dialog_closed", id, reason: "worker_exited" });
    }
    s.dialogDeadlines = new Map();
    s.dialogs = new Map();
    s.worker = null;
    this.w.record({ pid: null });
    summariseFlood(this.w);
    this.w.cancel("flood");
    s.protocolProblem = null;
    const stopping = s.record.status === "stopping";
    const intended = stopping ? { reason: "stopped" as const } : s.intendedExit;
    const exit: WorkerExit = {
      code: m.code,
      signal: m.signal,
      reason: intended?.reason ?? (m.spawnError ? "spawn_error" : "exit"),
      message: intended?.message ?? m.spawnError ?? undefined,
      at: this.now,
    };
    s.intendedExit = null;
    this.w.record({ lastExit: exit });
    this.w.report({
      type: "worker_exited",
      code: m.code,
      signal: m.signal,
      reason: exit.reason,
      message: exit.message,
    });
    this.w.persist();
    if (stopping) return; // the teardown finishes the group and reports
    // A crashed worker's tool children are still in its group; nothing should outlive it.
    this.effects.push({ kind: "kill_leftovers", gen: worker.gen });
    if (wasRunning) this.w.report({ type: "run_interrupted", reason: describeExit(exit) });
    // Spawning again would fail the same way: say the worker's own reason now, no restarts.
    const verdict =
      neverReady && !intended
        ? judgeStartupExit(s.startupFailure, {
            code: m.code,
            signal: m.signal,
            spawnError: m.spawnError,
            stderrTail: m.stderrTail,
            file: worker.file,
          })
        : null;
    if (verdict?.kind === "config_error") {
      this.w.setStatus("failed", verdict.reason);
      return;
    }
    if (verdict) s.startupFailure = verdict.remember;
    // Each such start takes the whole start deadline, so the restart intensity (N in a
    // period) would never trip on them: a worker that never answers would cycle forever.
    if (neverReady && exit.reason === "start_timeout" && ++s.startTimeouts >= START_TIMEOUT_LIMIT) {
      this.w.setStatus(
        "failed",
        `its worker never answered get_state: ${s.startTimeouts} starts in a row, each given ` +
          `${formatMs(this.config.timings.startTimeoutMs)}; see its stderr (pi-orch logs ${s.record.name} --stderr)`,
      );
      return;
    }
    const decision = decideRestart(
      s.record.policy,
      s.restartHistory,
      exit,
      this.now,
      m.spawnError ? null : worker.startedAt,
    );
    s.restartHistory = decision.history;
    if (decision.action === "restart" && verdict?.kind === "retry_now") {
      // Still starting, as far as a caller waiting for the start can tell: only this start tells.
      this.w.record({ restarts: s.record.restarts + 1 });
      this.spawnWorker();
    } else if (decision.action === "restart") {
      this.w.setStatus("backoff", `${describeExit(exit)}; restarting in ${decision.delayMs} ms`);
      const token = ++s.backoffToken;
      this.w.timer("backoff", decision.delayMs, { kind: "backoff_done", token });
    } else if (decision.action === "give_up") {
      this.w.setStatus("failed", `${decision.reason}; last exit: ${describeExit(exit)}`);
    } else {
      this.w.setStatus("stopped", decision.reason);
    }
  }

  private onStop(caller: number, reason: string): void {
    const s = this.s;
    const status = s.record.status;
    s.afterStop = null;
    s.stopReason = reason;
    if (status === "stopping") {
      s.stopWaiters = [...s.stopWaiters, caller];
      return;
    }
    if (s.worker) {
      s.stopWaiters = [...s.stopWaiters, caller];
      this.beginTeardown(status !== "unresponsive");
      return;
    }
    this.w.cancelBackoff();
    if (status !== "stopped" && status !== "failed") this.w.setStatus("stopped", reason);
    this.effects.push({ kind: "resolve", caller, value: undefined });
  }

  private onKill(caller: number): void {
    const s = this.s;
    this.w.cancelBackoff();
    if (!s.worker) {
      if (s.record.status !== "stopped" && s.record.status !== "failed")
        this.w.setStatus("stopped", "killed by request");
      this.effects.push({ kind: "resolve", caller, value: undefined });
      return;
    }
    s.stopWaiters = [...s.stopWaiters, caller];
    if (s.record.status !== "stopping") this.w.setStatus("stopping");
    this.w.clearWorkerTimers();
    this.effects.push({ kind: "kill_worker", gen: s.gen, notify: true });
  }

  private beginTeardown(abort: boolean): void {
    this.w.setStatus("stopping");
    this.w.clearWorkerTimers();
    const { stopGraceMs, killGraceMs } = this.config.timings;
    this.effects.push({ kind: "stop_worker", gen: this.s.gen, graceMs: stopGraceMs, killGraceMs, abort, notify: true });
  }

  private onStopped(): void {
    const s = this.s;
    this.w.setStatus("stopped", s.stopReason);
    s.stopReason = "stopped by request";
    const waiters = s.stopWaiters;
    s.stopWaiters = [];
    for (const caller of waiters) this.effects.push({ kind: "resolve", caller, value: undefined });
    if (s.afterStop === "restart") {
      s.afterStop = null;
      this.spawnWorker();
    }
  }

  private onRestart(): void {
    const s = this.s;
    s.restartHistory = NO_RESTARTS;
    s.startupFailure = null;
    s.startTimeouts = 0;
    if (s.worker) {
      if (s.record.status !== "stopping") this.beginTeardown(s.record.status !== "unresponsive");
      s.afterStop = "restart";
      s.stopReason = "restarting by request";
      return;
    }
    this.w.cancelBackoff();
    this.spawnWorker();
  }

  private onRpc(m: Extract<AgentMessage, { kind: "rpc" }>): void {
    const s = this.s;
    if (!s.worker || !RUNNING_STATUSES.has(s.record.status)) {
      this.effects.push({ kind: "reject", caller: m.caller, error: notRunningError(s) });
      return;
    }
    this.pingAsUsual();
    const type = m.command.type;
    if (type === "extension_ui_response") {
      // The answer to a dialog: its `id` is the dialog's, and pi workers send no
      // response for it, so it goes out as it is and is acknowledged here.
      this.w.send(m.command);
      if (typeof m.command.id === "string") closeDialog(this.w, m.command.id, "answered");
      this.effects.push({
        kind: "resolve",
        caller: m.caller,
        value: { type: "response", command: type, success: true },
      });
      return;
    }
    const id = this.w.requestId("rpc");
    // The caller's id is echoed as it came, whatever its type; ours replaces it on the way to the worker.
    const value = { ...m.command, id };
    let text: string;
    try {
      text = JSON.stringify(value);
    } catch (err) {
      // Nested too deeply (or otherwise unserialisable): refuse it instead of leaving the caller waiting.
      const error = new OrchError(
        "invalid",
        `${type} command cannot be sent to the worker: ${(err as Error).message}; nest its fields less deeply`,
      );
      this.effects.push({ kind: "reject", caller: m.caller, error });
      return;
    }
    this.w.addPending(id, { kind: "call", caller: m.caller, callerId: m.command.id, type, timeoutMs: m.timeoutMs });
    this.w.timer(`rpc:${id}`, m.timeoutMs, { kind: "rpc_timeout", id, type, timeoutMs: m.timeoutMs });
    this.w.send(withWire(value, text));
  }
}

/** `800 ms`, `10s`: timings in messages, readable at both scales. */
function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10}s`;
}
