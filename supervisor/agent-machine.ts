/**
 * The agent actor as a table: `transition(config, state, message, now)` returns the next
 * state and the effects to perform, as data (spawn, send a line, stop or kill the worker,
 * start or cancel a timer, emit an event, persist, answer a caller). No process, no
 * timer, no clock of its own: the shell in agent-actor.ts performs the effects and posts
 * every line, exit, timer and answer back as a message, so the whole life of an agent
 * can be stepped through in a test.
 */
import { parseJsonLine, peekLineHead, withWire } from "../shared/jsonl.js";
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
import type { DialogClosedReason, SupervisorEvent } from "../shared/schema/supervisor-events.js";
import { RUNNING_STATUSES, type AgentRecord, type AgentStatus, type WorkerExit } from "../shared/schema/agent.js";
import { judgeStartupExit } from "./config-error.js";
import { OrchError } from "./errors.js";
import { redactArgv } from "./redact.js";
import { checkPresence } from "./presence.js";
import { closeWindow, NO_FLOOD, noteBadLine } from "./protocol-flood.js";
import { decideRestart, describeExit, NO_RESTARTS } from "./restart-policy.js";
import { countRunTokens } from "./run-limits.js";
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
  type PendingRequest,
  type TimerKey,
  type Transition,
} from "./agent-state.js";

/**
 * How long a dialog's request may have taken to reach us. The worker starts its dialog
 * timer before it writes the request and we start ours once we read it, so the worker's
 * fires up to this much earlier: a ping's answer in between is its timeout, not a dismissal.
 */
const DIALOG_TRANSIT_MS = 1_000;

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
 * A line of the current worker: the hot path, every event of every worker comes here.
 * An event the table only logs and publishes (most of a stream: `message_update`,
 * `tool_execution_update`) takes no Step, and no copy of the state while the clock has
 * not moved since the last line (a worker writes its lines in bursts); everything else
 * goes through a Step like any other message.
 */
function lineTransition(config: MachineConfig, state: AgentState, line: string, now: number): Transition {
  const parsed = parseJsonLine(line);
  const value = parsed.ok ? parsed.value : undefined;
  if (isEventObject(value) && !EVENTS_ACTED_ON.has(value.type) && state.record.status !== "stalled") {
    let next = state;
    if (state.lastSeenAt !== now || state.lastEventAt !== now) {
      const copy = copyState(state);
      copy.lastSeenAt = now;
      copy.lastEventAt = now;
      next = copy;
    }
    return { state: next, effects: [{ kind: "emit", event: value, raw: line.trim() }] };
  }
  const step = new Step(config, state, now);
  step.onLine(line, value);
  return { state: step.s, effects: step.effects };
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
  readonly s: Mutable<AgentState>;
  readonly effects: AgentEffect[] = [];

  constructor(
    private readonly config: MachineConfig,
    state: AgentState,
    private readonly now: number,
  ) {
    this.s = copyState(state);
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
        return this.emit({ type: "run_interrupted", reason: m.reason });
      case "restart":
        return this.onRestart();
      case "rpc":
        return this.onRpc(m);
      case "disk":
        s.diskProblem = m.problem;
        this.setStatus(s.record.status, m.problem ?? undefined);
        return;
      case "spawned":
        if (m.gen === s.gen) this.onSpawned(m);
        return;
      case "line":
        // The current worker's lines take lineTransition; an older worker's are ignored.
        return;
      case "line_too_long": {
        if (m.gen !== s.worker?.gen) return;
        this.report({ type: "protocol_error", message: m.message });
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
          s.ping = null;
          const message = `no answer to get_state within ${formatMs(this.config.timings.pingDeadlineMs)}`;
          this.setStatus("unresponsive", message);
          this.abandon("unresponsive", message);
        }
        return;
      case "flood_tick":
        if (m.gen === s.worker?.gen) this.onFloodTick();
        return;
      case "run_timeout":
        if (m.gen === s.worker?.gen && s.run?.n === m.run) {
          this.abortRun("run_timeout", `run timeout of ${formatMs(s.record.limits.runTimeoutMs!)} exceeded`);
        }
        return;
      case "rpc_timeout": {
        const pending = s.pending.get(m.id);
        if (pending?.kind !== "call") return; // answered in the meantime
        if (s.dialogs.size > 0) {
          // The worker waits for a person: the command may be the one that asked.
          this.addPending(m.id, { ...pending, held: true });
          this.report({ type: "rpc_waiting", command: m.type, timeoutMs: m.timeoutMs, dialogs: s.dialogs.size });
          return;
        }
        this.dropPending(m.id);
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
        if (m.gen === s.worker?.gen) this.closeDialog(m.id, "timeout");
        return;
      case "wait":
        if (m.test(s.record.status)) {
          this.effects.push({ kind: "resolve", caller: m.caller, value: s.record.status });
          return;
        }
        s.waiters = [...s.waiters, { caller: m.caller, test: m.test, timeoutMs: m.timeoutMs }];
        this.timer(`wait:${m.caller}`, m.timeoutMs, { kind: "wait_timeout", caller: m.caller });
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
          this.cancel(`wait:${w.caller}`);
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
          this.record({ restarts: s.record.restarts + 1 });
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
      this.setStatus("failed", err instanceof Error ? err.message : String(err));
      return;
    }
    const gen = ++s.gen;
    s.intendedExit = null;
    s.settles = false;
    s.flood = NO_FLOOD;
    s.lastEventAt = this.now;
    this.setStatus("starting");
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
    this.record({ pid: m.pid ?? null });
    this.persist();
    if (m.pid === undefined) return; // the exit message with the spawn error follows
    const { file, args } = s.worker;
    this.report({
      type: "worker_started",
      pid: m.pid,
      command: redactArgv([file, ...args]) ?? [],
      resumed: s.record.sessionFile,
    });
    const probe = this.requestId("start");
    this.addPending(probe, { kind: "probe" });
    this.send({ id: probe, type: "get_state" });
    this.timer("start", this.config.timings.startTimeoutMs, { kind: "start_timeout", gen: m.gen });
  }

  private onStartProbe(response: RpcResponse): void {
    const s = this.s;
    if (s.record.status !== "starting" || !s.worker) return;
    this.cancel("start");
    s.startupFailure = null;
    s.startTimeouts = 0;
    const streaming = this.learnState(answerFields(RpcStateSummary, response));
    // Lowered once it answered, not at spawn: a start-up is short, and at nice 10 on a
    // saturated machine it could miss the start deadline.
    this.effects.push({ kind: "lower_priority", gen: s.worker.gen, nice: this.config.workerNice });
    this.setStatus(streaming ? "busy" : "idle");
    this.armPingTick();
  }

  private armPingTick(): void {
    const gen = this.s.worker!.gen;
    const measureRss = this.s.record.limits.maxMemoryMb !== undefined;
    this.effects.push({
      kind: "timer",
      key: "ping_tick",
      ms: this.config.timings.pingIntervalMs,
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
      this.record({ reportedModel: { provider: model.provider, model: model.id } });
      changed = true;
    }
    if (data?.sessionFile !== undefined && data.sessionFile !== s.record.sessionFile) {
      this.record({ sessionFile: data.sessionFile });
      changed = true;
    }
    if (changed) this.persist();
    return data?.isStreaming === true;
  }

  private onPingTick(rssBytes: number | null): void {
    const s = this.s;
    const { timings } = this.config;
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
        this.report({ type: "limit_exceeded", limit: "max_memory", message: action.message });
        this.abandon("memory_limit", action.message);
      } else this.sendPing();
    }
  }

  private sendPing(): void {
    const s = this.s;
    const id = this.requestId("ping");
    s.ping = id;
    this.addPending(id, { kind: "ping", dialogs: new Set(s.dialogs.keys()) });
    this.timer("ping_deadline", this.config.timings.pingDeadlineMs, { kind: "ping_timeout", gen: s.worker!.gen, id });
    this.send({ id, type: "get_state" });
  }

  private openDialog(id: string, question: string, timeout: unknown): void {
    const s = this.s;
    s.dialogs = new Map(s.dialogs).set(id, question);
    // As the worker does: a dialog with a timeout resolves to its default when it passes.
    if (typeof timeout === "number" && timeout > 0) {
      this.timer(`dialog:${id}`, timeout, { kind: "dialog_timeout", gen: s.worker!.gen, id });
      s.dialogDeadlines = new Map(s.dialogDeadlines).set(id, this.now + timeout);
    }
  }

  /**
   * Close the dialogs of `asked` that a ping's answer no longer lists open: an extension
   * dismissed them through their AbortSignal, which pi tells no client. Only our worker's
   * `get_state` lists `openDialogs`; from another pi, such a dialog closes with the worker.
   */
  private closeDismissedDialogs(data: RpcStateSummary | undefined, asked: ReadonlySet<string>): void {
    const open = data?.openDialogs;
    if (!open || asked.size === 0) return;
    const s = this.s;
    for (const id of asked)
      if (!open.includes(id))
        this.closeDialog(
          id,
          this.now + DIALOG_TRANSIT_MS >= (s.dialogDeadlines.get(id) ?? Infinity) ? "timeout" : "dismissed",
        );
  }

  /**
   * A dialog closed (the stream is told, so clients drop it); once none is open, requests
   * held for them get their whole timeout again.
   */
  private closeDialog(id: string, reason: DialogClosedReason): void {
    const s = this.s;
    if (!s.dialogs.has(id)) return;
    const dialogs = new Map(s.dialogs);
    dialogs.delete(id);
    s.dialogs = dialogs;
    if (s.dialogDeadlines.has(id)) {
      const deadlines = new Map(s.dialogDeadlines);
      deadlines.delete(id);
      s.dialogDeadlines = deadlines;
    }
    this.cancel(`dialog:${id}`);
    this.report({ type: "dialog_closed", id, reason });
    // The wait for a person is not silence: a stall is counted from the answer on.
    s.lastEventAt = this.now;
    if (dialogs.size > 0) return;
    for (const [rid, p] of s.pending) {
      if (p.kind !== "call" || !p.held) continue;
      this.addPending(rid, { ...p, held: false });
      this.timer(`rpc:${rid}`, p.timeoutMs, { kind: "rpc_timeout", id: rid, type: p.type, timeoutMs: p.timeoutMs });
    }
  }

  private onStall(): void {
    const s = this.s;
    const silent = formatMs(this.now - s.lastEventAt);
    this.setStatus("stalled", `busy with no event for ${silent}`);
    const action = s.record.onStall;
    if (action === "abort") this.abortRun("stall", `stalled: no event for ${silent}`);
    else if (action === "restart")
      this.giveUpGracefully({ reason: "stalled", message: `no event for ${silent} while busy` });
  }

  /** End the current worker gracefully for a reason of ours; its exit follows and restarts it by policy. */
  private giveUpGracefully(intended: Omit<WorkerExit, "code" | "signal" | "at">): void {
    const s = this.s;
    s.intendedExit = intended;
    this.clearWorkerTimers();
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
      this.report({ type: "protocol_error", message: `worker wrote a line that is not a JSON object: ${sample}` });
      return;
    }
    if (noted.floodStarted) {
      s.protocolProblem = `protocol errors: over ${limits.perWindow} non-JSON lines in ${formatMs(limits.windowMs)}`;
      this.effects.push({
        kind: "stderr",
        text: `[pi-orch] ${s.protocolProblem}; further lines are counted, not logged\n`,
      });
      this.setStatus(s.record.status);
      this.armFloodTimer();
    }
    if (noted.action === "restart" && s.worker) {
      this.summariseFlood();
      this.giveUpGracefully({ reason: "protocol_errors", message: `${s.flood.totalDropped} non-JSON lines dropped` });
    }
  }

  private armFloodTimer(): void {
    const s = this.s;
    const at = (s.flood.windowStart ?? this.now) + this.config.protocolFlood.windowMs;
    this.timer("flood", Math.max(0, at - this.now), { kind: "flood_tick", gen: s.worker?.gen ?? s.gen });
  }

  private onFloodTick(): void {
    const s = this.s;
    const closed = closeWindow(s.flood, this.now);
    s.flood = closed.state;
    if (closed.summarise > 0) this.reportDropped(closed.summarise);
    if (!closed.calm) return this.armFloodTimer();
    s.protocolProblem = null;
    this.setStatus(s.record.status);
  }

  /** Summarise what the open window dropped now (the worker ends, or is restarted for it). */
  private summariseFlood(): void {
    const s = this.s;
    if (s.flood.dropped > 0) this.reportDropped(s.flood.dropped);
    s.flood = { ...s.flood, dropped: 0 };
  }

  private reportDropped(dropped: number): void {
    this.report({ type: "protocol_error", message: `dropped ${dropped} non-JSON lines of a flooding worker`, dropped });
  }

  private onResponse(response: RpcResponse): void {
    const s = this.s;
    const id = typeof response.id === "string" ? response.id : undefined;
    const pending = id === undefined ? undefined : s.pending.get(id);
    if (!pending) return; // an answer nobody waits for (timed out, or a worker that does not echo ids)
    this.dropPending(id!);
    if (pending.kind === "probe") return this.onStartProbe(response);
    if (pending.kind === "ping") {
      if (s.ping === id) {
        this.cancel("ping_deadline");
        s.ping = null;
      }
      const state = answerFields(RpcStateSummary, response);
      this.learnState(state);
      this.closeDismissedDialogs(state, pending.dialogs);
      return;
    }
    this.cancel(`rpc:${id}`);
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
    this.emit(event, raw);
    const status = s.record.status;
    if (!EVENTS_ACTED_ON.has(event.type)) {
      if (status === "stalled") this.setStatus("busy");
      return;
    }
    switch (event.type) {
      case "agent_start":
        // With a worker that settles, a retry or a queued message goes on with the same run.
        if (!s.settles || !s.run) this.beginRun();
        if (RUNNING_STATUSES.has(status)) this.setStatus("busy");
        break;
      case "agent_end":
        // The run goes on after it when the worker settles (until agent_settled) or says a retry follows.
        if (!s.settles && event.willRetry !== true) this.settleRun(status);
        break;
      case "agent_settled":
        s.settles = true;
        this.settleRun(status);
        break;
      case "auto_retry_end":
        // Outside a run and still busy: the retry wait was cancelled, no run follows.
        if (event.success === false && !s.run && status === "busy") this.setStatus("idle");
        else if (status === "stalled") this.setStatus("busy");
        break;
      case "message_end": {
        // Kept in the record, written with its next change (a run's end): not a write per message.
        const outcome = s.run ? outcomeOfMessage(event.message) : null;
        if (outcome) s.outcome = outcome;
        const usage = addMessageUsage(s.record.usage ?? NO_USAGE, event.message);
        if (usage !== (s.record.usage ?? NO_USAGE)) this.record({ usage });
        this.countTokens(event.message);
        if (s.record.status === "stalled") this.setStatus("busy");
        break;
      }
      case "extension_ui_request":
        if (isDialogMethod(event.method) && typeof event.id === "string")
          this.openDialog(event.id, dialogQuestion(event), event.timeout);
        if (status === "stalled") this.setStatus("busy");
        break;
    }
  }

  /** The run is over: the agent is idle, with the reason if it was aborted. */
  private settleRun(status: AgentStatus): void {
    const reason = this.s.run?.abortReason ?? undefined;
    if (reason) this.s.outcome = { state: "idle", message: `aborted: ${reason}` };
    this.endRun();
    if (RUNNING_STATUSES.has(status)) this.setStatus("idle", reason ? `run aborted: ${reason}` : undefined);
  }

  private beginRun(): void {
    const s = this.s;
    this.endRun();
    const n = ++s.runCounter;
    s.outcome = null;
    const limit = s.record.limits.runTimeoutMs;
    if (limit !== undefined) this.timer("run", limit, { kind: "run_timeout", gen: s.worker!.gen, run: n });
    s.run = { n, tokens: 0, abortReason: null };
  }

  private endRun(): void {
    if (this.s.run && this.s.record.limits.runTimeoutMs !== undefined) this.cancel("run");
    this.s.run = null;
  }

  private countTokens(message: unknown): void {
    const s = this.s;
    if (!s.run) return;
    const { tokens, over } = countRunTokens(s.run, message, s.record.limits.maxTokens);
    if (tokens !== s.run.tokens) s.run = { ...s.run, tokens };
    if (over) this.abortRun("max_tokens", over);
  }

  /** Ask the worker to abort the current run and remember why, once. */
  private abortRun(limit: string, reason: string): void {
    const s = this.s;
    if (!s.run || s.run.abortReason || !s.worker) return;
    s.run = { ...s.run, abortReason: reason };
    this.report({ type: "limit_exceeded", limit, message: reason });
    this.send({ id: this.requestId("abort"), type: "abort" });
  }

  /** The supervisor gives up on the current process (hung, over a limit): SIGKILL its group; the exit follows. */
  private abandon(reason: WorkerExit["reason"], message: string): void {
    const s = this.s;
    if (!s.worker) return;
    s.intendedExit = { reason, message };
    this.clearWorkerTimers();
    this.effects.push({ kind: "kill_worker", gen: s.worker.gen, notify: false });
  }

  private onExit(m: Extract<AgentMessage, { kind: "exit" }>): void {
    const s = this.s;
    const worker = s.worker!;
    const neverReady = s.record.status === "starting";
    const wasRunning = s.run !== null || s.record.status === "busy" || s.record.status === "stalled";
    this.clearWorkerTimers();
    if (s.run) s.outcome = { state: "failed", message: "its worker exited during the run" };
    this.endRun();
    this.rejectPending(describeExit({ code: m.code, signal: m.signal, reason: "exit", at: 0 }));
    for (const id of s.dialogs.keys()) {
      this.cancel(`dialog:${id}`);
      this.report({ type: "dialog_closed", id, reason: "worker_exited" });
    }
    s.dialogDeadlines = new Map();
    s.dialogs = new Map();
    s.worker = null;
    this.record({ pid: null });
    this.summariseFlood();
    this.cancel("flood");
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
    this.record({ lastExit: exit });
    this.report({ type: "worker_exited", code: m.code, signal: m.signal, reason: exit.reason, message: exit.message });
    this.persist();
    if (stopping) return; // the teardown finishes the group and reports
    // A crashed worker's tool children are still in its group; nothing should outlive it.
    this.effects.push({ kind: "kill_leftovers", gen: worker.gen });
    if (wasRunning) this.report({ type: "run_interrupted", reason: describeExit(exit) });
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
      this.setStatus("failed", verdict.reason);
      return;
    }
    if (verdict) s.startupFailure = verdict.remember;
    // Each such start takes the whole start deadline, so the restart intensity (N in a
    // period) would never trip on them: a worker that never answers would cycle forever.
    if (neverReady && exit.reason === "start_timeout" && ++s.startTimeouts >= START_TIMEOUT_LIMIT) {
      this.setStatus(
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
      this.record({ restarts: s.record.restarts + 1 });
      this.spawnWorker();
    } else if (decision.action === "restart") {
      this.setStatus("backoff", `${describeExit(exit)}; restarting in ${decision.delayMs} ms`);
      const token = ++s.backoffToken;
      this.timer("backoff", decision.delayMs, { kind: "backoff_done", token });
    } else if (decision.action === "give_up") {
      this.setStatus("failed", `${decision.reason}; last exit: ${describeExit(exit)}`);
    } else {
      this.setStatus("stopped", decision.reason);
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
    this.cancelBackoff();
    if (status !== "stopped" && status !== "failed") this.setStatus("stopped", reason);
    this.effects.push({ kind: "resolve", caller, value: undefined });
  }

  private onKill(caller: number): void {
    const s = this.s;
    this.cancelBackoff();
    if (!s.worker) {
      if (s.record.status !== "stopped" && s.record.status !== "failed") this.setStatus("stopped", "killed by request");
      this.effects.push({ kind: "resolve", caller, value: undefined });
      return;
    }
    s.stopWaiters = [...s.stopWaiters, caller];
    if (s.record.status !== "stopping") this.setStatus("stopping");
    this.clearWorkerTimers();
    this.effects.push({ kind: "kill_worker", gen: s.gen, notify: true });
  }

  private beginTeardown(abort: boolean): void {
    this.setStatus("stopping");
    this.clearWorkerTimers();
    const { stopGraceMs, killGraceMs } = this.config.timings;
    this.effects.push({ kind: "stop_worker", gen: this.s.gen, graceMs: stopGraceMs, killGraceMs, abort, notify: true });
  }

  private onStopped(): void {
    const s = this.s;
    this.setStatus("stopped", s.stopReason);
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
    this.cancelBackoff();
    this.spawnWorker();
  }

  private onRpc(m: Extract<AgentMessage, { kind: "rpc" }>): void {
    const s = this.s;
    if (!s.worker || !RUNNING_STATUSES.has(s.record.status)) {
      this.effects.push({ kind: "reject", caller: m.caller, error: notRunningError(s) });
      return;
    }
    const type = m.command.type;
    if (type === "extension_ui_response") {
      // The answer to a dialog: its `id` is the dialog's, and pi workers send no
      // response for it, so it goes out as it is and is acknowledged here.
      this.send(m.command);
      if (typeof m.command.id === "string") this.closeDialog(m.command.id, "answered");
      this.effects.push({
        kind: "resolve",
        caller: m.caller,
        value: { type: "response", command: type, success: true },
      });
      return;
    }
    const id = this.requestId("rpc");
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
    this.addPending(id, { kind: "call", caller: m.caller, callerId: m.command.id, type, timeoutMs: m.timeoutMs });
    this.timer(`rpc:${id}`, m.timeoutMs, { kind: "rpc_timeout", id, type, timeoutMs: m.timeoutMs });
    this.send(withWire(value, text));
  }

  // ---- helpers ----

  private record(patch: Partial<AgentRecord>): void {
    this.s.record = { ...this.s.record, ...patch };
  }

  private requestId(kind: string): string {
    return `orch-${kind}-${this.s.nextRequest++}`;
  }

  private addPending(id: string, request: PendingRequest): void {
    const pending = new Map(this.s.pending);
    pending.set(id, request);
    this.s.pending = pending;
  }

  private dropPending(id: string): void {
    const pending = new Map(this.s.pending);
    pending.delete(id);
    this.s.pending = pending;
  }

  private rejectPending(how: string): void {
    const s = this.s;
    for (const [id, p] of s.pending) {
      if (p.kind !== "call") continue;
      this.cancel(`rpc:${id}`);
      const error = new OrchError(
        "worker_exited",
        `agent "${s.record.name}" worker ${how} before answering; see pi-orch logs ${s.record.name}`,
      );
      this.effects.push({ kind: "reject", caller: p.caller, error });
    }
    if (s.pending.size > 0) s.pending = new Map();
  }

  private clearWorkerTimers(): void {
    this.cancel("start");
    this.cancel("ping_tick");
    this.cancel("ping_deadline");
    this.cancel("run");
    this.s.ping = null;
  }

  private cancelBackoff(): void {
    this.cancel("backoff");
    this.s.backoffToken++;
  }

  private send(value: unknown): void {
    this.effects.push({ kind: "send", gen: this.s.worker!.gen, value });
  }

  private timer(key: TimerKey, ms: number, message: AgentMessage): void {
    this.effects.push({ kind: "timer", key, ms, message });
  }

  private cancel(key: TimerKey): void {
    this.effects.push({ kind: "cancel_timer", key });
  }

  private persist(): void {
    this.effects.push({ kind: "persist" });
  }

  private setStatus(status: AgentStatus, given?: string): void {
    const s = this.s;
    const reason = given ?? s.diskProblem ?? s.protocolProblem ?? undefined;
    const previous = s.record.status;
    if (previous === status && s.record.statusReason === reason) return;
    this.record({ status, statusReason: reason });
    this.report({
      type: "agent_status",
      status,
      previous,
      ...(reason ? { reason } : {}),
      pid: s.record.pid,
      restarts: s.record.restarts,
    });
    this.persist();
    if (s.waiters.length === 0) return;
    const ready = s.waiters.filter((w) => w.test(status));
    if (ready.length === 0) return;
    s.waiters = s.waiters.filter((w) => !ready.includes(w));
    for (const w of ready) {
      this.cancel(`wait:${w.caller}`);
      this.effects.push({ kind: "resolve", caller: w.caller, value: status });
    }
  }

  /** One of the supervisor's own events (see shared/schema/supervisor-events.ts) into the agent's stream. */
  private report(event: SupervisorEvent): void {
    this.emit(event);
  }

  private emit(event: Record<string, unknown>, raw?: string): void {
    this.effects.push(raw === undefined ? { kind: "emit", event } : { kind: "emit", event, raw });
  }
}

/** `800 ms`, `10s`: timings in messages, readable at both scales. */
function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10}s`;
}
