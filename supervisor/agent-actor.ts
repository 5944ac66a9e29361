/**
 * One actor per worker. It owns the worker process, its status and its pending
 * requests; every change happens in its mailbox, one message at a time. It speaks
 * to the worker only through the pi protocol on stdio, so any pi-compatible
 * program can be a worker.
 */
import { parseJsonLine, peekLineHead } from "../shared/jsonl.js";
import type { RpcCommandEnvelope, RpcResponse } from "../shared/schema/rpc.js";
import type { SupervisorEvent } from "../shared/schema/supervisor-events.js";
import { appendTail, configurationError } from "./config-error.js";
import { OrchError } from "./errors.js";
import type { AgentEventLog, LoggedEvent } from "./event-log.js";
import { Mailbox } from "./mailbox.js";
import { checkPresence } from "./presence.js";
import { redactArgv, redactEnv } from "./redact.js";
import { countRunTokens } from "./run-limits.js";
import { decideRestart, describeExit, NO_RESTARTS, type RestartHistory } from "./restart-policy.js";
import { RUNNING_STATUSES, type AgentInfo, type AgentRecord, type AgentStatus, type WorkerExit } from "../shared/schema/agent.js";
import type { AgentTimings } from "./types.js";
import { closeWindow, DEFAULT_FLOOD_LIMITS, NO_FLOOD, noteBadLine, type FloodLimits, type FloodState } from "./protocol-flood.js";
import { buildWorkerArgv } from "./worker-command.js";
import { spawnWorkerProcess, type WorkerProcess } from "./worker-process.js";

/** What an actor needs from the supervisor that owns it. */
export interface AgentActorOptions {
  record: AgentRecord;
  timings: AgentTimings;
  /** argv used when the agent has no custom worker command. */
  defaultCommand: readonly string[];
  log: AgentEventLog;
  /** Hand a newly logged event to subscribers; `raw` is its JSON as the worker wrote it, when it came from the worker. */
  publish: (entry: LoggedEvent, raw?: string) => void;
  /** The persistent part of the record changed: schedule a registry write. */
  onChange: () => void;
  /** Longest accepted stdout line of the worker, in bytes. */
  maxLineBytes?: number;
  /** Environment every worker gets under the agent's own `env` (e.g. PI_ORCH_HOME). */
  baseEnv?: Record<string, string>;
  /** Nice of the worker's autogroup and process (0: the supervisor's weight). */
  workerNice: number;
  /** Bounds of a worker's non-JSON stdout lines (default DEFAULT_FLOOD_LIMITS). */
  protocolFlood?: FloodLimits;
}

type Pending = {
  resolve: (r: RpcResponse) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout | null;
  callerId: string | undefined;
};

interface Worker {
  gen: number;
  proc: WorkerProcess;
}

type Message =
  | { kind: "start" }
  | { kind: "stop"; done: () => void; reason: string }
  | { kind: "restart" }
  | { kind: "rpc"; command: RpcCommandEnvelope; timeoutMs: number; resolve: Pending["resolve"]; reject: Pending["reject"] }
  | { kind: "line"; gen: number; line: string }
  | { kind: "line_too_long"; gen: number; message: string; head: string }
  | { kind: "disk"; problem: string | null }
  | { kind: "exit"; gen: number; code: number | null; signal: string | null; spawnError: string | null }
  | { kind: "teardown_done"; gen: number }
  | { kind: "start_timeout"; gen: number }
  | { kind: "ping_tick"; gen: number }
  | { kind: "flood_tick"; gen: number }
  | { kind: "ping_timeout"; gen: number; id: string }
  | { kind: "run_timeout"; gen: number; run: number }
  | { kind: "backoff_done"; token: number }
  | { kind: "interrupted"; reason: string }
  | { kind: "kill"; done: () => void }
  | { kind: "rpc_timeout"; id: string; type: string; timeoutMs: number }
  | { kind: "wait"; waiter: Waiter; timeoutMs: number }
  | { kind: "wait_timeout"; waiter: Waiter; timeoutMs: number };

interface Waiter {
  test: (status: AgentStatus) => boolean;
  resolve: (status: AgentStatus) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout | null;
}

/**
 * The actor of one agent. Public methods only post messages; they never touch
 * state directly. Invariant: create one actor per agent and drive it only
 * through these methods.
 */
export class AgentActor {
  private readonly record: AgentRecord;
  private readonly mailbox: Mailbox<Message>;
  private worker: Worker | null = null;
  /** The model the worker last reported in `get_state` (kept after it exits: the last one it ran). */
  private workerModel: { provider: string; model: string } | null = null;
  private gen = 0;
  /** Why the event log cannot be written (`disk full: PATH`), kept as the status reason until it can. */
  private diskProblem: string | null = null;
  /** The worker floods non-JSON lines (`protocol errors: ...`), kept as the status reason until a quiet window. */
  private protocolProblem: string | null = null;
  private flood: FloodState = NO_FLOOD;
  private floodTimer: NodeJS.Timeout | null = null;
  private nextRequest = 1;
  private readonly pending = new Map<string, Pending>();
  private restartHistory: RestartHistory = NO_RESTARTS;
  private backoffTimer: NodeJS.Timeout | null = null;
  private backoffToken = 0;
  private startTimer: NodeJS.Timeout | null = null;
  private pingTimer: NodeJS.Timeout | null = null;
  private ping: { id: string; timer: NodeJS.Timeout } | null = null;
  private lastEventAt = 0;
  private run: { n: number; tokens: number; timer: NodeJS.Timeout | null; abortReason: string | null } | null = null;
  private runCounter = 0;
  /** Set when the supervisor itself ends the worker, so its exit is recorded with the right reason. */
  private intendedExit: Omit<WorkerExit, "code" | "signal" | "at"> | null = null;
  private stopWaiters: (() => void)[] = [];
  private afterStop: "restart" | null = null;
  private stopReason = "stopped by request";
  private waiters: Waiter[] = [];
  /** The end of the current worker's stderr and its program: the words of a configuration error. */
  private stderrTail = "";
  private workerFile = "";

  constructor(private readonly opts: AgentActorOptions) {
    this.record = { ...opts.record };
    this.mailbox = new Mailbox<Message>(
      (m) => this.handle(m),
      (err, m) => this.report({ type: "supervisor_error", message: `internal error handling ${m.kind}: ${(err as Error).message}` }),
    );
  }

  /** The agent's name. */
  get name(): string {
    return this.record.name;
  }

  /** The agent's id. */
  get id(): string {
    return this.record.id;
  }

  /** Current status (read-only view for the supervisor). */
  get status(): AgentStatus {
    return this.record.status;
  }

  /** The persistent record, for the registry. */
  toRecord(): AgentRecord {
    return { ...this.record };
  }

  /** Record plus live details, for `list`/`status`; credentials in env and argv are redacted. */
  info(): AgentInfo {
    const info: AgentInfo = { ...this.record, ...this.workerModel, lastSeq: this.opts.log.lastSeq, startedAt: this.worker?.proc.startedAt ?? null };
    if (info.env) info.env = redactEnv(info.env);
    if (info.extraArgs) info.extraArgs = redactArgv(info.extraArgs);
    if (info.workerCommand) info.workerCommand = redactArgv(info.workerCommand);
    return info;
  }

  /** `failed after 5 restarts in 60s; last exit: ...`, or just the status. */
  describeStatus(): string {
    const { status, statusReason } = this.record;
    if (!statusReason) return status;
    return statusReason.startsWith(status) ? statusReason : `${status}: ${statusReason}`;
  }

  /** Start the worker (from `stopped`, `failed` or a new agent). */
  start(): void {
    this.mailbox.post({ kind: "start" });
  }

  /**
   * Graceful stop; resolves once the worker and its process group are gone. The
   * reason becomes the status reason (`supervisor exited` marks agents to resume).
   */
  stop(reason = "stopped by request"): Promise<void> {
    return new Promise((done) => this.mailbox.post({ kind: "stop", done, reason }));
  }

  /** Record in the agent's log that a run was cut off while no supervisor watched (the last one died mid-run). */
  noteInterrupted(reason: string): void {
    this.mailbox.post({ kind: "interrupted", reason });
  }

  /** Immediate SIGKILL of the group (second signal during shutdown); resolves when stopped. */
  kill(): Promise<void> {
    return new Promise((done) => this.mailbox.post({ kind: "kill", done }));
  }

  /** Manual restart: stop if running, then start with the session resumed; the restart history starts over. */
  restart(): void {
    this.mailbox.post({ kind: "restart" });
  }

  /** Forward one protocol command; resolves with the worker's own response. */
  rpc(command: RpcCommandEnvelope, timeoutMs = this.opts.timings.rpcTimeoutMs): Promise<RpcResponse> {
    return new Promise((resolve, reject) => this.mailbox.post({ kind: "rpc", command, timeoutMs, resolve, reject }));
  }

  /** Resolves with the status once `test` holds (immediately if it already does), or rejects after `timeoutMs`. */
  waitFor(test: (status: AgentStatus) => boolean, timeoutMs: number): Promise<AgentStatus> {
    return new Promise((resolve, reject) => this.mailbox.post({ kind: "wait", waiter: { test, resolve, reject, timer: null }, timeoutMs }));
  }

  /** The agent was removed: everyone still waiting for a status learns it now instead of at their timeout. */
  removed(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) {
      if (w.timer) clearTimeout(w.timer);
      w.reject(new OrchError("not_found", `agent "${this.name}" was removed`));
    }
  }

  /** Error for a command that needs a running worker. */
  notRunningError(): OrchError {
    return new OrchError(
      "not_running",
      `agent "${this.name}" is not running (status: ${this.describeStatus()}); see pi-orch logs ${this.name}` +
        (this.record.status === "stopped" || this.record.status === "failed" ? `, or start it again with pi-orch restart ${this.name}` : ""),
    );
  }

  // ---- message handling (only ever called by the mailbox) ----

  private handle(m: Message): void {
    switch (m.kind) {
      case "start":
        if (this.worker === null && !["backoff", "stopping"].includes(this.record.status)) this.spawnWorker();
        return;
      case "stop":
        return this.onStop(m.done, m.reason);
      case "kill":
        return this.onKill(m.done);
      case "interrupted":
        return this.emit({ type: "run_interrupted", reason: m.reason });
      case "restart":
        return this.onRestart();
      case "rpc":
        return this.onRpc(m);
      case "line":
        if (m.gen === this.worker?.gen) this.onLine(m.line);
        return;
      case "line_too_long": {
        if (m.gen !== this.worker?.gen) return;
        this.report({ type: "protocol_error", message: m.message });
        // A dropped end must still end the run, or the agent stays busy forever.
        const { type } = peekLineHead(m.head);
        if (type === "agent_end") this.onWorkerEvent({ type: "agent_end", messages: [], truncated: true }, '{"type":"agent_end","messages":[],"truncated":true}');
        return;
      }
      case "disk":
        this.diskProblem = m.problem;
        this.setStatus(this.record.status, m.problem ?? undefined);
        return;
      case "exit":
        if (m.gen === this.worker?.gen) this.onExit(m);
        return;
      case "teardown_done":
        if (m.gen === this.gen && this.record.status === "stopping") this.onStopped();
        return;
      case "start_timeout":
        if (m.gen === this.worker?.gen && this.record.status === "starting") {
          this.abandon("start_timeout", `no answer to get_state within ${formatMs(this.opts.timings.startTimeoutMs)} of starting`);
        }
        return;
      case "ping_tick":
        if (m.gen === this.worker?.gen) this.onPingTick();
        return;
      case "flood_tick":
        if (m.gen === this.worker?.gen) this.onFloodTick();
        return;
      case "ping_timeout":
        if (m.gen === this.worker?.gen && this.ping?.id === m.id && RUNNING_STATUSES.has(this.record.status)) {
          this.ping = null;
          const message = `no answer to get_state within ${formatMs(this.opts.timings.pingDeadlineMs)}`;
          this.setStatus("unresponsive", message);
          this.abandon("unresponsive", message);
        }
        return;
      case "run_timeout":
        if (m.gen === this.worker?.gen && this.run?.n === m.run) {
          this.abortRun("run_timeout", `run timeout of ${formatMs(this.record.limits.runTimeoutMs!)} exceeded`);
        }
        return;
      case "rpc_timeout": {
        const pending = this.pending.get(m.id);
        if (!pending) return; // answered in the meantime
        this.pending.delete(m.id);
        pending.reject(
          new OrchError("timeout", `agent "${this.name}" did not answer ${m.type} within ${formatMs(m.timeoutMs)}; check pi-orch status ${this.name}`),
        );
        return;
      }
      case "wait":
        if (m.waiter.test(this.record.status)) return m.waiter.resolve(this.record.status);
        m.waiter.timer = setTimeout(() => this.mailbox.post({ kind: "wait_timeout", waiter: m.waiter, timeoutMs: m.timeoutMs }), m.timeoutMs);
        this.waiters.push(m.waiter);
        return;
      case "wait_timeout":
        if (!this.waiters.includes(m.waiter)) return; // satisfied in the meantime
        this.waiters = this.waiters.filter((w) => w !== m.waiter);
        m.waiter.reject(new OrchError("timeout", `agent "${this.name}" is still ${this.describeStatus()} after ${m.timeoutMs} ms`));
        return;
      case "backoff_done":
        if (m.token === this.backoffToken && this.record.status === "backoff") {
          this.backoffTimer = null;
          this.record.restarts++;
          this.spawnWorker();
        }
        return;
    }
  }

  private spawnWorker(): void {
    const gen = ++this.gen;
    this.intendedExit = null;
    this.flood = NO_FLOOD;
    this.lastEventAt = Date.now();
    this.setStatus("starting");
    const { file, args } = buildWorkerArgv(this.record, this.record.sessionFile, this.opts.defaultCommand);
    this.stderrTail = "";
    this.workerFile = file;
    const proc = spawnWorkerProcess({
      file,
      args,
      cwd: this.record.cwd,
      env: { ...this.opts.baseEnv, ...this.record.env },
      maxLineBytes: this.opts.maxLineBytes,
      abortCommand: () => ({ id: this.requestId("abort"), type: "abort" }),
      onLine: (line) => this.mailbox.post({ kind: "line", gen, line }),
      onLineTooLong: (message, head) => this.mailbox.post({ kind: "line_too_long", gen, message, head }),
      onStderr: (text) => {
        if (this.worker?.gen === gen) this.stderrTail = appendTail(this.stderrTail, text);
        this.opts.log.appendStderr(text);
      },
      onExit: (code, signal, spawnError) => this.mailbox.post({ kind: "exit", gen, code, signal, spawnError }),
    });
    this.worker = { gen, proc };
    this.record.pid = proc.pid ?? null;
    this.opts.onChange();
    if (proc.pid === undefined) return; // the exit message with the spawn error follows
    this.report({ type: "worker_started", pid: proc.pid, command: redactArgv([file, ...args]) ?? [], resumed: this.record.sessionFile });
    const probe = this.requestId("start");
    this.pending.set(probe, {
      resolve: (r) => this.onStartProbe(r),
      reject: () => {},
      timer: null,
      callerId: undefined,
    });
    proc.write({ id: probe, type: "get_state" });
    this.startTimer = setTimeout(() => this.mailbox.post({ kind: "start_timeout", gen }), this.opts.timings.startTimeoutMs);
  }

  private onStartProbe(response: RpcResponse): void {
    if (this.record.status !== "starting" || !this.worker) return;
    clearTimeout(this.startTimer!);
    this.startTimer = null;
    const streaming = this.learnState(response);
    // Lowered once it answered, not at spawn: a start-up is short, and at nice 10 on a
    // saturated machine it could miss the start deadline.
    this.worker.proc.lowerPriority(this.opts.workerNice);
    this.setStatus(streaming ? "busy" : "idle");
    const gen = this.worker.gen;
    this.pingTimer = setInterval(() => this.mailbox.post({ kind: "ping_tick", gen }), this.opts.timings.pingIntervalMs);
  }

  /** Take what matters from a `get_state` answer; returns whether a run is streaming. */
  private learnState(response: RpcResponse): boolean {
    this.record.lastSeenAt = Date.now();
    const data = (response.success ? response.data : undefined) as { sessionFile?: unknown; isStreaming?: unknown; model?: { provider?: unknown; id?: unknown } } | undefined;
    // What the worker resolved (`faux/faux-1` for `--provider faux`), shown by every client; the record keeps what was asked.
    if (typeof data?.model?.provider === "string" && typeof data.model.id === "string") this.workerModel = { provider: data.model.provider, model: data.model.id };
    // Only a new session file is worth a registry write: each one is an fsync on the
    // routing thread, and every agent's ping answer arrives here every few seconds.
    if (typeof data?.sessionFile === "string" && data.sessionFile !== this.record.sessionFile) {
      this.record.sessionFile = data.sessionFile;
      this.opts.onChange();
    }
    return data?.isStreaming === true;
  }

  private onPingTick(): void {
    const worker = this.worker!;
    const now = Date.now();
    const { timings, record } = this.opts;
    // The RSS is read only when a limit needs it: it walks /proc.
    const measure = record.limits.maxMemoryMb !== undefined;
    const actions = checkPresence(
      { status: this.record.status, lastEventAt: this.lastEventAt, pingOutstanding: this.ping !== null, rssBytes: measure ? worker.proc.rssBytes() : null },
      { stallTimeoutMs: timings.stallTimeoutMs, maxMemoryMb: record.limits.maxMemoryMb },
      now,
    );
    for (const action of actions) {
      if (action.kind === "stall") this.onStall(now);
      else if (action.kind === "over_memory") {
        this.report({ type: "limit_exceeded", limit: "max_memory", message: action.message });
        this.abandon("memory_limit", action.message);
      } else this.sendPing(worker);
    }
  }

  private sendPing(worker: Worker): void {
    const { timings } = this.opts;
    const id = this.requestId("ping");
    const gen = worker.gen;
    const timer = setTimeout(() => this.mailbox.post({ kind: "ping_timeout", gen, id }), timings.pingDeadlineMs);
    this.ping = { id, timer };
    this.pending.set(id, {
      resolve: (r) => {
        if (this.ping?.id === id) {
          clearTimeout(this.ping.timer);
          this.ping = null;
        }
        this.learnState(r);
      },
      reject: () => {},
      timer: null,
      callerId: undefined,
    });
    worker.proc.write({ id, type: "get_state" });
  }

  private onStall(now: number): void {
    const silent = formatMs(now - this.lastEventAt);
    this.setStatus("stalled", `busy with no event for ${silent}`);
    const action = this.record.onStall;
    if (action === "abort") this.abortRun("stall", `stalled: no event for ${silent}`);
    else if (action === "restart") {
      this.intendedExit = { reason: "stalled", message: `no event for ${silent} while busy` };
      this.clearWorkerTimers();
      void this.worker!.proc.stop({ graceMs: this.opts.timings.stopGraceMs, killGraceMs: this.opts.timings.killGraceMs, abort: true });
    }
  }

  private onLine(line: string): void {
    this.record.lastSeenAt = Date.now();
    const parsed = parseJsonLine(line);
    if (!parsed.ok || typeof parsed.value !== "object" || parsed.value === null || Array.isArray(parsed.value)) {
      this.onBadLine(line);
      return;
    }
    const value = parsed.value as Record<string, unknown>;
    if (value.type === "response") return this.onResponse(value as RpcResponse);
    this.onWorkerEvent(value, line.trim());
  }

  /** A non-JSON line: reported while few, counted and summarised once a second while the worker floods. */
  private onBadLine(line: string): void {
    const limits = this.opts.protocolFlood ?? DEFAULT_FLOOD_LIMITS;
    const noted = noteBadLine(this.flood, limits, Date.now());
    this.flood = noted.state;
    if (noted.action === "report") {
      const sample = line.length > 200 ? `${line.slice(0, 200)}…` : line;
      this.opts.log.appendStderr(`[pi-orch] non-protocol stdout line: ${sample}\n`);
      this.report({ type: "protocol_error", message: `worker wrote a line that is not a JSON object: ${sample}` });
      return;
    }
    if (noted.floodStarted) {
      this.protocolProblem = `protocol errors: over ${limits.perWindow} non-JSON lines in ${formatMs(limits.windowMs)}`;
      this.opts.log.appendStderr(`[pi-orch] ${this.protocolProblem}; further lines are counted, not logged\n`);
      this.setStatus(this.record.status);
      this.armFloodTimer(limits);
    }
    if (noted.action === "restart" && this.worker) {
      this.summariseFlood();
      this.intendedExit = { reason: "protocol_errors", message: `${this.flood.totalDropped} non-JSON lines dropped` };
      this.clearWorkerTimers();
      void this.worker.proc.stop({ graceMs: this.opts.timings.stopGraceMs, killGraceMs: this.opts.timings.killGraceMs, abort: true });
    }
  }

  private armFloodTimer(limits: FloodLimits): void {
    const gen = this.worker?.gen ?? this.gen;
    const at = (this.flood.windowStart ?? Date.now()) + limits.windowMs;
    this.floodTimer = setTimeout(() => this.mailbox.post({ kind: "flood_tick", gen }), Math.max(0, at - Date.now()));
  }

  private onFloodTick(): void {
    this.floodTimer = null;
    const closed = closeWindow(this.flood, Date.now());
    this.flood = closed.state;
    if (closed.summarise > 0) this.reportDropped(closed.summarise);
    if (!closed.calm) return this.armFloodTimer(this.opts.protocolFlood ?? DEFAULT_FLOOD_LIMITS);
    this.protocolProblem = null;
    this.setStatus(this.record.status);
  }

  /** Summarise what the open window dropped now (the worker ends, or is restarted for it). */
  private summariseFlood(): void {
    if (this.flood.dropped > 0) this.reportDropped(this.flood.dropped);
    this.flood = { ...this.flood, dropped: 0 };
  }

  private reportDropped(dropped: number): void {
    this.report({ type: "protocol_error", message: `dropped ${dropped} non-JSON lines of a flooding worker`, dropped });
  }

  private onResponse(response: RpcResponse): void {
    const id = typeof response.id === "string" ? response.id : undefined;
    const pending = id === undefined ? undefined : this.pending.get(id);
    if (!pending) return; // an answer nobody waits for (timed out, or a worker that does not echo ids)
    this.pending.delete(id!);
    if (pending.timer) clearTimeout(pending.timer);
    const out: RpcResponse = { ...response };
    if (pending.callerId === undefined) delete out.id;
    else out.id = pending.callerId;
    pending.resolve(out);
  }

  private onWorkerEvent(event: Record<string, unknown>, raw: string): void {
    this.lastEventAt = Date.now();
    this.emit(event, raw);
    switch (event.type) {
      case "agent_start":
        this.beginRun();
        if (RUNNING_STATUSES.has(this.record.status)) this.setStatus("busy");
        break;
      case "agent_end": {
        const reason = this.run?.abortReason ?? undefined;
        this.endRun();
        // A run followed by an automatic retry (willRetry) leaves the agent busy until the retry's run ends.
        if (event.willRetry !== true && RUNNING_STATUSES.has(this.record.status)) this.setStatus("idle", reason ? `run aborted: ${reason}` : undefined);
        break;
      }
      case "auto_retry_end":
        // Outside a run and still busy: the retry wait was cancelled, no run follows.
        if (event.success === false && !this.run && this.record.status === "busy") this.setStatus("idle");
        else if (this.record.status === "stalled") this.setStatus("busy");
        break;
      case "message_end":
        this.countTokens(event.message);
        if (this.record.status === "stalled") this.setStatus("busy");
        break;
      default:
        if (this.record.status === "stalled") this.setStatus("busy");
    }
  }

  private beginRun(): void {
    this.endRun();
    const n = ++this.runCounter;
    const limit = this.record.limits.runTimeoutMs;
    const gen = this.worker!.gen;
    const timer = limit === undefined ? null : setTimeout(() => this.mailbox.post({ kind: "run_timeout", gen, run: n }), limit);
    this.run = { n, tokens: 0, timer, abortReason: null };
  }

  private endRun(): void {
    if (this.run?.timer) clearTimeout(this.run.timer);
    this.run = null;
  }

  private countTokens(message: unknown): void {
    if (!this.run) return;
    const { tokens, over } = countRunTokens(this.run, message, this.record.limits.maxTokens);
    this.run.tokens = tokens;
    if (over) this.abortRun("max_tokens", over);
  }

  /** Ask the worker to abort the current run and remember why, once. */
  private abortRun(limit: string, reason: string): void {
    if (!this.run || this.run.abortReason || !this.worker) return;
    this.run.abortReason = reason;
    this.report({ type: "limit_exceeded", limit, message: reason });
    this.worker.proc.write({ id: this.requestId("abort"), type: "abort" });
  }

  /** The supervisor gives up on the current process (hung, over a limit): SIGKILL its group; the exit follows. */
  private abandon(reason: WorkerExit["reason"], message: string): void {
    if (!this.worker) return;
    this.intendedExit = { reason, message };
    this.clearWorkerTimers();
    void this.worker.proc.kill();
  }

  private onExit(m: Extract<Message, { kind: "exit" }>): void {
    const worker = this.worker!;
    const neverReady = this.record.status === "starting";
    const wasRunning = this.run !== null || this.record.status === "busy" || this.record.status === "stalled";
    this.clearWorkerTimers();
    this.endRun();
    this.rejectPending(describeExit({ code: m.code, signal: m.signal, reason: "exit", at: 0 }));
    this.worker = null;
    this.record.pid = null;
    this.summariseFlood();
    if (this.floodTimer) clearTimeout(this.floodTimer);
    this.floodTimer = null;
    this.protocolProblem = null;
    const now = Date.now();
    const stopping = this.record.status === "stopping";
    const intended = stopping ? { reason: "stopped" as const } : this.intendedExit;
    const exit: WorkerExit = {
      code: m.code,
      signal: m.signal,
      reason: intended?.reason ?? (m.spawnError ? "spawn_error" : "exit"),
      message: intended?.message ?? m.spawnError ?? undefined,
      at: now,
    };
    this.intendedExit = null;
    this.record.lastExit = exit;
    this.report({ type: "worker_exited", code: m.code, signal: m.signal, reason: exit.reason, message: exit.message });
    this.opts.onChange();
    if (stopping) return; // the teardown finishes the group and reports
    // A crashed worker's tool children are still in its group; nothing should outlive it.
    worker.proc.killLeftovers();
    if (wasRunning) this.report({ type: "run_interrupted", reason: describeExit(exit) });
    // Spawning again would fail the same way: say the worker's own reason now, no restarts.
    const config = neverReady && !intended ? configurationError({ code: m.code, spawnError: m.spawnError, stderrTail: this.stderrTail, file: this.workerFile }) : null;
    if (config) {
      this.setStatus("failed", config);
      return;
    }
    const decision = decideRestart(this.record.policy, this.restartHistory, exit, now, m.spawnError ? null : worker.proc.startedAt);
    this.restartHistory = decision.history;
    if (decision.action === "restart") {
      this.setStatus("backoff", `${describeExit(exit)}; restarting in ${decision.delayMs} ms`);
      const token = ++this.backoffToken;
      this.backoffTimer = setTimeout(() => this.mailbox.post({ kind: "backoff_done", token }), decision.delayMs);
    } else if (decision.action === "give_up") {
      this.setStatus("failed", `${decision.reason}; last exit: ${describeExit(exit)}`);
    } else {
      this.setStatus("stopped", decision.reason);
    }
  }

  private onStop(done: () => void, reason: string): void {
    const status = this.record.status;
    this.afterStop = null;
    this.stopReason = reason;
    if (status === "stopping") {
      this.stopWaiters.push(done);
      return;
    }
    if (this.worker) {
      this.stopWaiters.push(done);
      this.beginTeardown(status !== "unresponsive");
      return;
    }
    this.cancelBackoff();
    if (status !== "stopped" && status !== "failed") this.setStatus("stopped", reason);
    done();
  }

  private onKill(done: () => void): void {
    this.cancelBackoff();
    if (!this.worker) {
      if (this.record.status !== "stopped" && this.record.status !== "failed") this.setStatus("stopped", "killed by request");
      done();
      return;
    }
    this.stopWaiters.push(done);
    if (this.record.status !== "stopping") this.setStatus("stopping");
    this.clearWorkerTimers();
    const gen = this.gen;
    void this.worker.proc.kill().then(() => this.mailbox.post({ kind: "teardown_done", gen }));
  }

  private beginTeardown(abort: boolean): void {
    const worker = this.worker!;
    this.setStatus("stopping");
    this.clearWorkerTimers();
    const gen = this.gen;
    const { stopGraceMs, killGraceMs } = this.opts.timings;
    void worker.proc.stop({ graceMs: stopGraceMs, killGraceMs, abort }).then(() =>
      this.mailbox.post({ kind: "teardown_done", gen }),
    );
  }

  private onStopped(): void {
    this.setStatus("stopped", this.stopReason);
    this.stopReason = "stopped by request";
    const waiters = this.stopWaiters;
    this.stopWaiters = [];
    for (const done of waiters) done();
    if (this.afterStop === "restart") {
      this.afterStop = null;
      this.spawnWorker();
    }
  }

  private onRestart(): void {
    this.restartHistory = NO_RESTARTS;
    if (this.worker) {
      if (this.record.status !== "stopping") this.beginTeardown(this.record.status !== "unresponsive");
      this.afterStop = "restart";
      this.stopReason = "restarting by request";
      return;
    }
    this.cancelBackoff();
    this.spawnWorker();
  }

  private onRpc(m: Extract<Message, { kind: "rpc" }>): void {
    if (!this.worker || !RUNNING_STATUSES.has(this.record.status)) return m.reject(this.notRunningError());
    const type = m.command.type;
    if (type === "extension_ui_response") {
      // The answer to a dialog: its `id` is the dialog's, and pi workers send no
      // response for it, so it goes out as it is and is acknowledged here.
      this.worker.proc.write(m.command);
      m.resolve({ type: "response", command: type, success: true });
      return;
    }
    const id = this.requestId("rpc");
    const timer = setTimeout(() => this.mailbox.post({ kind: "rpc_timeout", id, type, timeoutMs: m.timeoutMs }), m.timeoutMs);
    // The caller's id is echoed as it came, whatever its type; ours replaces it on the way to the worker.
    this.pending.set(id, { resolve: m.resolve, reject: m.reject, timer, callerId: m.command.id as string | undefined });
    try {
      this.worker.proc.write({ ...m.command, id });
    } catch (err) {
      // Nested too deeply (or otherwise unserialisable): refuse it instead of leaving the caller waiting.
      clearTimeout(timer);
      this.pending.delete(id);
      m.reject(new OrchError("invalid", `${type} command cannot be sent to the worker: ${(err as Error).message}; nest its fields less deeply`));
    }
  }

  // ---- helpers ----

  private requestId(kind: string): string {
    return `orch-${kind}-${this.nextRequest++}`;
  }

  private rejectPending(how: string): void {
    for (const [id, p] of this.pending) {
      if (p.timer) clearTimeout(p.timer);
      p.reject(new OrchError("worker_exited", `agent "${this.name}" worker ${how} before answering; see pi-orch logs ${this.name}`));
      this.pending.delete(id);
    }
  }

  private clearWorkerTimers(): void {
    if (this.startTimer) clearTimeout(this.startTimer);
    if (this.pingTimer) clearInterval(this.pingTimer);
    if (this.ping) clearTimeout(this.ping.timer);
    if (this.run?.timer) clearTimeout(this.run.timer);
    this.startTimer = null;
    this.pingTimer = null;
    this.ping = null;
  }

  private cancelBackoff(): void {
    if (this.backoffTimer) clearTimeout(this.backoffTimer);
    this.backoffTimer = null;
    this.backoffToken++;
  }

  /** The event log's disk refuses writes (`disk full: PATH`), or takes them again (null): shown as the status reason meanwhile. */
  noteDiskProblem(problem: string | null): void {
    this.mailbox.post({ kind: "disk", problem });
  }

  private setStatus(status: AgentStatus, given?: string): void {
    const reason = given ?? this.diskProblem ?? this.protocolProblem ?? undefined;
    const previous = this.record.status;
    if (previous === status && this.record.statusReason === reason) return;
    this.record.status = status;
    this.record.statusReason = reason;
    this.report({
      type: "agent_status",
      status,
      previous,
      ...(reason ? { reason } : {}),
      pid: this.record.pid,
      restarts: this.record.restarts,
    });
    this.opts.onChange();
    const ready = this.waiters.filter((w) => w.test(status));
    if (ready.length > 0) {
      this.waiters = this.waiters.filter((w) => !ready.includes(w));
      for (const w of ready) {
        if (w.timer) clearTimeout(w.timer);
        w.resolve(status);
      }
    }
  }

  /** One of the supervisor's own events (see shared/schema/supervisor-events.ts) into the agent's stream. */
  private report(event: SupervisorEvent): void {
    this.emit(event);
  }

  private emit(event: Record<string, unknown>, raw?: string): void {
    this.opts.publish(this.opts.log.append(event, Date.now(), raw), raw);
  }
}

/** `800 ms`, `10s`: timings in messages, readable at both scales. */
function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10}s`;
}
