/**
 * One actor per worker: the shell around the pure table in agent-machine.ts. Its
 * mailbox hands every message to `transition`, keeps the new state and performs the
 * effects: it spawns and signals the worker process (worker-process.ts), runs the
 * timers, writes the agent's event log, and answers callers. Everything that happens
 * later (a line, an exit, a timer, a teardown's end) comes back as a message. It
 * speaks to the worker only through the pi protocol on stdio, so any pi-compatible
 * program can be a worker.
 */
import { fromWall, steadyNow, toWall } from "../shared/clock.js";
import type { RpcCommandEnvelope, RpcResponse } from "../shared/schema/rpc.js";
import type { AgentInfo, AgentRecord, AgentStatus } from "../shared/schema/agent.js";
import { appendTail } from "./config-error.js";
import type { OrchError } from "./errors.js";
import type { LoggedEvent } from "../shared/event-replay.js";
import type { AgentEventLog } from "./event-log.js";
import { Mailbox } from "./mailbox.js";
import { type CpuWaits, readCpuWaits, waitedBetween, workerLeaves } from "./cpu-wait.js";
import { transition } from "./agent-machine.js";
import {
  activityOfState,
  describeStatus,
  initialState,
  notRunningError,
  recordOf,
  type AgentEffect,
  type AgentMessage,
  type AgentState,
  type MachineConfig,
  type TimerKey,
} from "./agent-state.js";
import { DEFAULT_FLOOD_LIMITS, type FloodLimits } from "./protocol-flood.js";
import { redactArgv, redactEnv } from "./redact.js";
import type { AgentTimings } from "./types.js";
import type { StartGate } from "./start-gate.js";
import { spawnWorkerProcess, type WorkerProcess } from "./worker-process.js";
import type { WorkerLauncher } from "./worker-launcher.js";
import { isOwnWorker, keyVariableNames, splitSecrets } from "./worker-command.js";
import { fleetSandboxPlan, sandboxedCommand, type WorkerCommand } from "./sandboxed-worker.js";
import { SANDBOX_DEFAULT_VAR, sandboxSupport } from "../shared/sandbox.js";
import { piOrchHome } from "../shared/paths.js";
import { workerMallocEnv } from "../shared/malloc-env.js";
import { pidsWithEnv, TOOL_TAG_VAR, WORKER_TAG_VAR } from "../shared/proc.js";

function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone
  }
}

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
  /** The supervisor's home, which a sandboxed worker does not see (default: baseEnv's PI_ORCH_HOME). */
  home?: string;
  /** The key variables the agent was spawned with (`--api-key`, kept in keys.json, not agents.json). */
  keys?: () => Record<string, string> | undefined;
  /** Bounds of a worker's non-JSON stdout lines (default DEFAULT_FLOOD_LIMITS). */
  protocolFlood?: FloodLimits;
  /** Shared by the fleet: a worker is spawned once it has a slot, held until it leaves `starting` (default: no limit). */
  startGate?: StartGate;
  /** Node flags that start our own worker from its startup snapshot, for the environment and args it gets (none: as before). */
  snapshotArgs?: (env: NodeJS.ProcessEnv, args: readonly string[]) => string[];
  /** Starts workers in the fleet's one session (none: each detached in a session of its own). */
  launcher?: WorkerLauncher | null;
}

type SpawnEffect = Extract<AgentEffect, { kind: "spawn" }>;

/** What only the shell handles: a start slot was granted to the spawn of generation `gen`. */
type ShellMessage = { kind: "start_slot"; gen: number };

type Caller = { resolve: (value: never) => void; reject: (err: Error) => void };

/**
 * The actor of one agent. Public methods only post messages; they never touch
 * state directly. Invariant: create one actor per agent and drive it only
 * through these methods.
 */
export class AgentActor {
  private readonly config: MachineConfig;
  private readonly mailbox: Mailbox<AgentMessage | ShellMessage>;
  private state: AgentState;
  /** `info()` of `state` at `lastSeq`, made once for each. */
  private infoOf: { state: AgentState; lastSeq: number; info: AgentInfo } | null = null;
  /** `toRecord()` of `state`, made once per state. */
  private recordOf: { state: AgentState; record: AgentRecord } | null = null;
  /** The newest worker process and its generation (kept after its exit, for the leftovers of its group). */
  private proc: WorkerProcess | null = null;
  private procGen = -1;
  /** The end of the current worker's stderr: the words of a configuration error. */
  private stderrTail = "";
  private readonly timers = new Map<TimerKey, NodeJS.Timeout>();
  /** The CPU waits when the outstanding ping went out, for its deadline (`ping_timeout`). */
  private pingWaits: { id: string; before: CpuWaits } | null = null;
  /** The processes of the current worker whose CPU waits count (cpu-wait.ts), found at its first ping. */
  private waitPids: { gen: number; pids: number[] } | null = null;
  private readonly callers = new Map<number, Caller>();
  private nextCaller = 1;
  /** The spawn the table asked for, waiting for a start slot, and how to stop waiting. */
  private queuedSpawn: { effect: SpawnEffect; cancel: () => void } | null = null;
  /** The generation whose start holds a slot of the gate. */
  private slotGen: number | null = null;
  /** Waiting for the queued spawn to get its slot (or be called off). */
  private slotWaiters: (() => void)[] = [];

  constructor(private readonly opts: AgentActorOptions) {
    this.config = {
      timings: opts.timings,
      defaultCommand: opts.defaultCommand,
      baseEnv: opts.baseEnv,
      workerNice: opts.workerNice,
      protocolFlood: opts.protocolFlood ?? DEFAULT_FLOOD_LIMITS,
    };
    // The machine measures on the steady clock (shared/clock.ts); the record's times are wall-clock.
    this.state = initialState(recordOnClock(opts.record, fromWall));
    this.mailbox = new Mailbox<AgentMessage | ShellMessage>(
      (m) => (m.kind === "start_slot" ? this.onStartSlot(m.gen) : this.handle(m)),
      (err, m) =>
        this.emit({
          type: "supervisor_error",
          message: `internal error handling ${m.kind}: ${(err as Error).message}`,
        }),
    );
  }

  /** The agent's name. */
  get name(): string {
    return this.state.record.name;
  }

  /** The agent's id. */
  get id(): string {
    return this.state.record.id;
  }

  /** Current status (read-only view for the supervisor). */
  get status(): AgentStatus {
    return this.state.record.status;
  }

  /** The persistent record, for the registry; the same frozen object until the state changes. */
  toRecord(): AgentRecord {
    // A fleet's list and registry writes ask every agent for it many times between its
    // changes; frozen, the registry keeps its JSON line with it too.
    if (this.recordOf?.state !== this.state)
      this.recordOf = { state: this.state, record: Object.freeze(recordOnClock(recordOf(this.state), toWall)) };
    return this.recordOf.record;
  }

  /** Record plus live details, for `list`/`status`; credentials in env and argv are redacted. */
  info(): AgentInfo {
    // A fleet's `list` asks every agent many times between its changes (1,000 agents,
    // listed every few hundred ms while they start: 10 of the supervisor's 85 s busy in a
    // profiled spawn went to making these). What it says follows from the state and the
    // last seq alone, so it is made once for each pair and frozen, being shared.
    const lastSeq = this.opts.log.lastSeq;
    if (this.infoOf?.state === this.state && this.infoOf.lastSeq === lastSeq) return this.infoOf.info;
    const info: AgentInfo = {
      ...this.toRecord(),
      ...this.state.record.reportedModel,
      lastSeq,
      startedAt: toWall(this.state.worker?.startedAt ?? null),
      activity: activityOfState(this.state),
      // The record leaves `off` out (agents from before the sandbox have none); a reader
      // of list --json or status should not have to know that absent means off.
      sandbox: this.state.record.sandbox ?? "off",
    };
    if (info.env) info.env = redactEnv(info.env);
    if (info.extraArgs) info.extraArgs = redactArgv(info.extraArgs);
    if (info.workerCommand) info.workerCommand = redactArgv(info.workerCommand);
    this.infoOf = { state: this.state, lastSeq, info: Object.freeze(info) };
    return info;
  }

  /** `failed after 5 restarts in 60s; last exit: ...`, or just the status. */
  describeStatus(): string {
    return describeStatus(this.state);
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
    return this.ask<void>((caller) => ({ kind: "stop", caller, reason }));
  }

  /** Record in the agent's log that a run was cut off while no supervisor watched (the last one died mid-run). */
  noteInterrupted(reason: string): void {
    this.mailbox.post({ kind: "interrupted", reason });
  }

  /** Immediate SIGKILL of the group (second signal during shutdown); resolves when stopped. */
  kill(): Promise<void> {
    return this.ask<void>((caller) => ({ kind: "kill", caller }));
  }

  /** Manual restart: stop if running, then start with the session resumed; the restart history starts over. */
  restart(): void {
    this.mailbox.post({ kind: "restart" });
  }

  /** Forward one protocol command; resolves with the worker's own response. */
  rpc(command: RpcCommandEnvelope, timeoutMs = this.opts.timings.rpcTimeoutMs): Promise<RpcResponse> {
    return this.ask<RpcResponse>((caller) => ({ kind: "rpc", caller, command, timeoutMs }));
  }

  /**
   * Resolves once this agent's worker no longer waits for a start slot: spawned, or its
   * start called off (at once when none waits). A caller that times a start begins after it.
   */
  startSlot(): Promise<void> {
    if (this.queuedSpawn === null) return Promise.resolve();
    return new Promise((r) => this.slotWaiters.push(r));
  }

  /** Resolves with the status once `test` holds (immediately if it already does), or rejects after `timeoutMs`. */
  waitFor(test: (status: AgentStatus) => boolean, timeoutMs: number): Promise<AgentStatus> {
    return this.ask<AgentStatus>((caller) => ({ kind: "wait", caller, test, timeoutMs }));
  }

  /** The agent was removed: everyone still waiting for a status learns it now instead of at their timeout. */
  removed(): void {
    this.mailbox.post({ kind: "removed" });
  }

  /** Error for a command that needs a running worker. */
  notRunningError(): OrchError {
    return notRunningError(this.state);
  }

  /** The event log's disk refuses writes (`disk full: PATH`), or takes them again (null): shown as the status reason meanwhile. */
  noteDiskProblem(problem: string | null): void {
    this.mailbox.post({ kind: "disk", problem });
  }

  private ask<T>(message: (caller: number) => AgentMessage): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const caller = this.nextCaller++;
      this.callers.set(caller, { resolve: resolve as (value: never) => void, reject });
      this.mailbox.post(message(caller));
    });
  }

  // ---- the shell (only ever called by the mailbox) ----

  private handle(m: AgentMessage): void {
    const { state, effects } = transition(this.config, this.state, m, steadyNow());
    this.state = state;
    for (let i = 0; i < effects.length; i++) this.perform(effects[i]);
    // The slot goes back once the start it was for is over: answered, exited or stopped.
    if (this.slotGen !== null && (state.record.status !== "starting" || state.worker?.gen !== this.slotGen)) {
      this.slotGen = null;
      this.opts.startGate?.release();
    }
  }

  /** Spawn now when a start slot is free (or this agent holds one already), else once one is. */
  private spawnWhenSlotFree(e: SpawnEffect): void {
    const gate = this.opts.startGate;
    if (!gate) return this.spawn(e);
    if (this.slotGen !== null) {
      // A start that follows at once on a failed one (retry_now) takes over its slot.
      this.slotGen = e.gen;
      return this.spawn(e);
    }
    this.queuedSpawn?.cancel();
    this.queuedSpawn = null;
    let asking = true;
    let grantedNow = false;
    const cancel = gate.acquire(() => {
      if (asking) grantedNow = true;
      // Granted by another agent's release, inside its handler: this one spawns in a turn of its own.
      else setImmediate(() => this.mailbox.post({ kind: "start_slot", gen: e.gen }));
    });
    asking = false;
    if (!grantedNow) {
      this.queuedSpawn = { effect: e, cancel };
      return;
    }
    this.slotGen = e.gen;
    this.spawn(e);
  }

  private onStartSlot(gen: number): void {
    const queued = this.queuedSpawn;
    if (queued?.effect.gen !== gen) {
      // Called off (stopped while it waited) after the slot was granted: it goes back.
      this.opts.startGate?.release();
      return;
    }
    this.queuedSpawn = null;
    this.slotGen = gen;
    this.spawn(queued.effect);
    this.slotTaken();
  }

  private slotTaken(): void {
    for (const w of this.slotWaiters.splice(0)) w();
  }

  /**
   * A stop or kill of a worker still waiting for its start slot: it never runs. The table
   * hears what it would of a worker that exited at once, so waiters and status follow
   * the one path. False when `gen` is not waiting.
   */
  private callOffQueuedSpawn(gen: number, notify: boolean): boolean {
    if (this.queuedSpawn?.effect.gen !== gen) return false;
    this.queuedSpawn.cancel();
    this.queuedSpawn = null;
    this.slotTaken();
    this.handle({ kind: "spawned", gen, pid: undefined, startedAt: steadyNow() });
    this.mailbox.post({ kind: "exit", gen, code: null, signal: null, spawnError: null, stderrTail: "" });
    if (notify) this.mailbox.post({ kind: "teardown_done", gen });
    return true;
  }

  private perform(e: AgentEffect): void {
    switch (e.kind) {
      case "emit":
        return this.emit(e.event, e.raw);
      case "forward":
        return this.opts.publish(this.opts.log.forward(e.type, e.raw, Date.now(), e.toolCallId), e.raw);
      case "send":
        if (e.gen === this.procGen) this.proc!.write(e.value);
        return;
      case "persist":
        return this.opts.onChange();
      case "timer": {
        const old = this.timers.get(e.key);
        if (old) clearTimeout(old);
        const m = e.message;
        // A ping's deadline counts only the time its answer could be made and read: the
        // waits for a CPU from the ping on are read when it goes out, and again at the deadline.
        if (m.kind === "ping_timeout" && this.pingWaits?.id !== m.id) {
          if (this.waitPids?.gen !== this.procGen)
            this.waitPids = {
              gen: this.procGen,
              pids: this.proc?.pid === undefined ? [] : workerLeaves(this.proc.pid),
            };
          this.pingWaits = { id: m.id, before: readCpuWaits(this.waitPids.pids) };
        }
        this.timers.set(
          e.key,
          setTimeout(() => {
            this.timers.delete(e.key);
            let message = m;
            if (m.kind === "ping_tick" && e.measureRss) message = { ...m, rssBytes: this.proc?.rssBytes() ?? null };
            else if (m.kind === "ping_timeout" && this.pingWaits?.id === m.id)
              message = {
                ...m,
                waitedMs: waitedBetween(this.pingWaits.before, readCpuWaits(this.waitPids?.pids ?? [])),
              };
            this.mailbox.post(message);
          }, e.ms),
        );
        return;
      }
      case "cancel_timer": {
        const timer = this.timers.get(e.key);
        if (timer) {
          clearTimeout(timer);
          this.timers.delete(e.key);
        }
        return;
      }
      case "resolve":
      case "reject": {
        const caller = this.callers.get(e.caller);
        if (!caller) return;
        this.callers.delete(e.caller);
        if (e.kind === "resolve") caller.resolve(e.value as never);
        else caller.reject(e.error);
        return;
      }
      case "spawn":
        return this.spawnWhenSlotFree(e);
      case "stop_worker": {
        if (this.callOffQueuedSpawn(e.gen, e.notify)) return;
        if (e.gen !== this.procGen) return;
        const { gen, notify } = e;
        void this.proc!.stop({ graceMs: e.graceMs, killGraceMs: e.killGraceMs, abort: e.abort }).then(() => {
          if (notify) this.mailbox.post({ kind: "teardown_done", gen });
        });
        return;
      }
      case "kill_worker": {
        if (this.callOffQueuedSpawn(e.gen, e.notify)) return;
        if (e.gen !== this.procGen) return;
        const { gen, notify } = e;
        void this.proc!.kill().then(() => {
          if (notify) this.mailbox.post({ kind: "teardown_done", gen });
        });
        return;
      }
      case "kill_leftovers":
        if (e.gen === this.procGen) {
          this.proc!.killLeftovers();
          // What left the group (`setsid`, `setpgid`) still carries the worker's tool tag.
          for (const pid of pidsWithEnv(TOOL_TAG_VAR, this.toolTag(e.gen))) killQuietly(pid);
        }
        return;
      case "lower_priority":
        if (e.gen === this.procGen) this.proc!.lowerPriority(e.nice);
        return;
      case "stderr":
        return this.opts.log.appendStderr(e.text);
    }
  }

  /** The tool tag of this agent's worker `generation` (unique per agent and start). */
  private toolTag(generation: number): string {
    return `${this.state.record.id}.${generation}`;
  }

  /** Start the worker the table asked for, and tell the table its pid before anything else. */
  private spawn(e: SpawnEffect): void {
    const gen = e.gen;
    this.stderrTail = "";
    this.procGen = gen;
    // The tag every process of this worker carries, its tools' included: found again after its exit.
    let cmd: WorkerCommand = {
      file: e.file,
      args: e.args,
      cwd: e.cwd,
      // The agent's sandbox is its record's (bwrap around the worker, or none): neither serve's
      // default nor pi's own (on where bwrap works) may make the worker wrap itself.
      env: { ...e.env, ...this.opts.keys?.(), [WORKER_TAG_VAR]: this.toolTag(gen), [SANDBOX_DEFAULT_VAR]: "off" },
    };
    const record = this.state.record;
    const home = this.opts.home ?? this.opts.baseEnv?.PI_ORCH_HOME ?? piOrchHome();
    // Our own worker takes its keys on a private pipe: nothing in its environ for another process to read.
    let secrets: Record<string, string> | undefined;
    const ownWorker = !record.workerCommand?.length && isOwnWorker([e.file, ...e.args]);
    if (ownWorker) {
      const agentDir = record.env?.PI_ORCH_HOME ?? cmd.env.PI_ORCH_HOME ?? home;
      const split = splitSecrets(cmd.env, process.env, keyVariableNames(agentDir));
      // Its malloc settings (shared/malloc-env.ts): the worker takes them out again before its tools start.
      cmd = { ...cmd, env: { ...split.env, ...workerMallocEnv({ ...process.env, ...split.env }) } };
      secrets = split.secrets;
      // Before the bin: node reads the snapshot at its start (the worker inherits this process's environment too).
      if (e.file === process.execPath && e.args[0]?.endsWith(".cjs"))
        cmd = {
          ...cmd,
          args: [...(this.opts.snapshotArgs?.({ ...process.env, ...cmd.env }, cmd.args) ?? []), ...cmd.args],
        };
    }
    if (record.sandbox === "on" || record.sandbox === "strict") {
      let problem: string | null = null;
      const support = sandboxSupport();
      if (!support.ok) problem = `its --sandbox ${record.sandbox} cannot run: ${support.reason}`;
      else {
        try {
          const box = fleetSandboxPlan(record, home, e.cwd, ownWorker);
          // A new session goes into the agent's own folder (a resumed one stays where it is).
          // Only our worker is known to take --session-dir; a custom command gets its args as given.
          cmd = sandboxedCommand(
            ownWorker ? { ...cmd, args: [...cmd.args, "--session-dir", box.sessionDir] } : cmd,
            box.plan,
            support.bwrap,
          );
          // The keys taken out of its key files: on the pipe for ours, in the environment
          // for a custom command (where it reads its keys anyway).
          if (ownWorker) secrets = { ...secrets, ...box.secrets };
          else cmd = { ...cmd, env: { ...cmd.env, ...box.secrets } };
        } catch (err) {
          problem = `could not prepare its sandbox: ${(err as Error).message}`;
        }
      }
      if (problem !== null) {
        // As a worker whose spawn failed: no pid, then its exit with the reason.
        this.proc = {
          pid: undefined,
          startedAt: steadyNow(),
          write: () => undefined,
          stop: async () => undefined,
          kill: async () => undefined,
          killLeftovers: () => undefined,
          spawnedLater: false,
          lowerPriority: () => undefined,
          rssBytes: () => null,
        };
        this.handle({ kind: "spawned", gen, pid: undefined, startedAt: this.proc.startedAt });
        this.mailbox.post({ kind: "exit", gen, code: null, signal: null, spawnError: problem, stderrTail: "" });
        return;
      }
    }
    this.proc = spawnWorkerProcess(
      {
        ...cmd,
        secrets,
        maxLineBytes: this.opts.maxLineBytes,
        // An id the table never hands out: nobody waits for the answer to this abort.
        abortCommand: () => ({ id: `orch-teardown-abort-${gen}`, type: "abort" }),
        onLine: (line) => this.mailbox.post({ kind: "line", gen, line }),
        onLineTooLong: (message, head) => this.mailbox.post({ kind: "line_too_long", gen, message, head }),
        onStderr: (text) => {
          if (this.procGen === gen) this.stderrTail = appendTail(this.stderrTail, text);
          this.opts.log.appendStderr(text);
        },
        // Through the launcher the pid comes later, before any line or exit of the worker.
        onSpawned: (pid) => this.mailbox.post({ kind: "spawned", gen, pid, startedAt: steadyNow() }),
        onExit: (code, signal, spawnError) =>
          this.mailbox.post({
            kind: "exit",
            gen,
            code,
            signal,
            spawnError,
            stderrTail: this.procGen === gen ? this.stderrTail : "",
          }),
      },
      this.opts.launcher,
    );
    if (!this.proc.spawnedLater)
      this.handle({ kind: "spawned", gen, pid: this.proc.pid, startedAt: this.proc.startedAt });
  }

  private emit(event: Record<string, unknown>, raw?: string): void {
    this.opts.publish(this.opts.log.append(event, Date.now(), raw), raw);
  }
}

/** The record with its times (last seen, last exit) moved to another clock's scale. Pure but for `convert`. */
function recordOnClock(record: AgentRecord, convert: (at: number) => number): AgentRecord {
  return {
    ...record,
    lastSeenAt: record.lastSeenAt === null ? null : convert(record.lastSeenAt),
    lastExit: record.lastExit === null ? null : { ...record.lastExit, at: convert(record.lastExit.at) },
  };
}
