/**
 * The agent actor's state and vocabulary: what it knows (AgentState), what it is told
 * (AgentMessage), what its shell does (AgentEffect), and the small readings of a state
 * (its record, its status for a person, the error for a command it cannot take). The
 * table that moves from one state to the next is agent-machine.ts.
 */
import { activityOf, type Activity, type RunOutcome } from "../shared/activity.js";
import type { RpcCommandEnvelope } from "../shared/schema/rpc.js";
import type { AgentRecord, AgentStatus, WorkerExit } from "../shared/schema/agent.js";
import type { StartupFailure } from "./config-error.js";
import { OrchError } from "./errors.js";
import { NO_FLOOD, type FloodLimits, type FloodState } from "./protocol-flood.js";
import { NO_RESTARTS, type RestartHistory } from "./restart-policy.js";
import type { AgentTimings } from "./types.js";

/** What does not change over an agent's life. */
export interface MachineConfig {
  timings: AgentTimings;
  /** argv used when the agent has no custom worker command. */
  defaultCommand: readonly string[];
  /** Environment every worker gets under the agent's own `env`. */
  baseEnv?: Record<string, string>;
  /** Nice the worker is lowered to once it answered its first `get_state`. */
  workerNice: number;
  protocolFlood: FloodLimits;
}

/** A request of ours the worker has not answered yet. */
export type PendingRequest =
  /**
   * A caller's command: `caller` gets the answer, with its own `id` (`callerId`) back.
   * `held`: its timeout passed while the worker waited on a dialog, so it waits for the
   * dialogs to close and then gets its whole `timeoutMs` again.
   */
  | { kind: "call"; caller: number; callerId: unknown; type: string; timeoutMs: number; held?: boolean }
  /** The first `get_state` after a spawn. */
  | { kind: "probe" }
  /**
   * A presence ping. `dialogs`: those open when it was sent, the ones its answer can tell
   * closed (a dialog opened later may be missing from an answer written before it opened).
   */
  | { kind: "ping"; dialogs: ReadonlySet<string> };

/** Someone waiting for a status that `test` accepts. */
export interface StatusWaiter {
  caller: number;
  test: (status: AgentStatus) => boolean;
  timeoutMs: number;
}

/** Everything the actor knows; only `transition` makes a new one. */
export interface AgentState {
  /** The persistent record, except `lastSeenAt` (below: it changes with every line). */
  readonly record: AgentRecord;
  readonly lastSeenAt: number | null;
  /** Generation of the newest worker; messages of older ones are ignored. */
  readonly gen: number;
  /** The current worker process, once spawned and until its exit. */
  readonly worker: {
    gen: number;
    pid: number | undefined;
    startedAt: number;
    file: string;
    args: readonly string[];
  } | null;
  /** Why the event log cannot be written (`disk full: PATH`), kept as the status reason until it can. */
  readonly diskProblem: string | null;
  /** The worker floods non-JSON lines (`protocol errors: ...`), kept as the status reason until a quiet window. */
  readonly protocolProblem: string | null;
  readonly flood: FloodState;
  readonly nextRequest: number;
  readonly pending: ReadonlyMap<string, PendingRequest>;
  readonly restartHistory: RestartHistory;
  /** The last exit before ready, until a worker gets ready (see judgeStartupExit). */
  readonly startupFailure: StartupFailure | null;
  /** Starts in a row that got no answer to get_state in time (reset once a worker is ready). */
  readonly startTimeouts: number;
  readonly backoffToken: number;
  /** Id of the presence ping that is out, if any. */
  readonly ping: string | null;
  /**
   * Ping ticks in a row at which the agent was idle with nothing else going on (no open
   * dialog, no command out, no memory limit to check): each makes the next tick wait
   * longer (presence.ts, `nextPingInMs`). A command or an acted-on event resets it.
   */
  readonly idlePings: number;
  readonly lastEventAt: number;
  readonly run: { n: number; tokens: number; abortReason: string | null } | null;
  readonly runCounter: number;
  /**
   * The current worker says when a run settles (pi 1.x): it sent `agent_settled`, or
   * answered a prompt with a `disposition`. Then a run ends at `agent_settled`, not at
   * `agent_end` (retries, overflow recovery, queued messages may follow one); until then
   * (pi 0.73, older workers) at the last `agent_end` no retry follows.
   */
  readonly settles: boolean;
  /** Set when the supervisor itself ends the worker, so its exit is recorded with the right reason. */
  readonly intendedExit: Omit<WorkerExit, "code" | "signal" | "at"> | null;
  /** Callers of `stop`/`kill` waiting for the teardown. */
  readonly stopWaiters: readonly number[];
  readonly afterStop: "restart" | null;
  readonly stopReason: string;
  readonly waiters: readonly StatusWaiter[];
  /**
   * The current worker's open dialogs (`extension_ui_request` select, confirm, input,
   * editor), id to its question, until answered through us, their own `timeout`, a ping's answer that
   * no longer lists them (dismissed through their signal), or the worker's exit.
   * While one is open no request times out: a command may be waiting on a person.
   */
  readonly dialogs: ReadonlyMap<string, string>;
  /** How the last run ended, for a person (`done`, `failed`); null before the first and while one runs. */
  readonly outcome: RunOutcome | null;
  /** When each open dialog with a `timeout` passes it (machine clock): a close after that is a timeout. */
  readonly dialogDeadlines: ReadonlyMap<string, number>;
}

/** What an actor is told. `caller` numbers are the shell's, for the answer. */
export type AgentMessage =
  | { kind: "start" }
  | { kind: "stop"; caller: number; reason: string }
  | { kind: "kill"; caller: number }
  | { kind: "restart" }
  | { kind: "interrupted"; reason: string }
  | { kind: "disk"; problem: string | null }
  | { kind: "rpc"; caller: number; command: RpcCommandEnvelope; timeoutMs: number }
  | { kind: "wait"; caller: number; test: (status: AgentStatus) => boolean; timeoutMs: number }
  | { kind: "removed" }
  /** The shell spawned the worker asked for by a `spawn` effect (pid undefined: the spawn failed; its exit follows). */
  | { kind: "spawned"; gen: number; pid: number | undefined; startedAt: number }
  | { kind: "line"; gen: number; line: string }
  | { kind: "line_too_long"; gen: number; message: string; head: string }
  | {
      kind: "exit";
      gen: number;
      code: number | null;
      signal: string | null;
      spawnError: string | null;
      stderrTail: string;
    }
  | { kind: "teardown_done"; gen: number }
  | { kind: "start_timeout"; gen: number }
  /** `rssBytes` is measured by the shell when the timer asked for it. */
  | { kind: "ping_tick"; gen: number; rssBytes: number | null }
  /**
   * A ping's deadline: `sentAt` when it went out; `waitedMs`, measured by the shell, how
   * long the worker or the supervisor waited for a CPU since (presence.ts, `pingTimeLeft`).
   */
  | { kind: "ping_timeout"; gen: number; id: string; sentAt: number; waitedMs: number }
  | { kind: "flood_tick"; gen: number }
  | { kind: "run_timeout"; gen: number; run: number }
  | { kind: "backoff_done"; token: number }
  | { kind: "rpc_timeout"; id: string; type: string; timeoutMs: number }
  | { kind: "dialog_timeout"; gen: number; id: string }
  | { kind: "wait_timeout"; caller: number };

/** Names of the timers an actor runs; starting one that runs replaces it. */
export type TimerKey =
  | "start"
  | "ping_tick"
  | "ping_deadline"
  | "run"
  | "backoff"
  | "flood"
  | `rpc:${string}`
  | `wait:${number}`
  | `dialog:${string}`;

/** What the shell does, in order. */
export type AgentEffect =
  | {
      kind: "spawn";
      gen: number;
      file: string;
      args: readonly string[];
      cwd: string;
      env: Record<string, string | undefined>;
    }
  | { kind: "send"; gen: number; value: unknown }
  | { kind: "stop_worker"; gen: number; graceMs: number; killGraceMs: number; abort: boolean; notify: boolean }
  | { kind: "kill_worker"; gen: number; notify: boolean }
  | { kind: "kill_leftovers"; gen: number }
  | { kind: "lower_priority"; gen: number; nice: number }
  | { kind: "timer"; key: TimerKey; ms: number; message: AgentMessage; measureRss?: boolean }
  | { kind: "cancel_timer"; key: TimerKey }
  /** Append to the agent's event log and publish; `raw` is the worker's own JSON text. */
  | { kind: "emit"; event: Record<string, unknown>; raw?: string }
  /**
   * The same for a worker event known only by its `type` and its JSON text (checked as
   * JSON, not parsed: shared/event-type.ts): its object is made only if something asks.
   * `toolCallId` as the scan read it ("" none, null not read), for the ring's compaction.
   */
  | { kind: "forward"; type: string; raw: string; toolCallId: string | null }
  | { kind: "stderr"; text: string }
  /** The persistent record changed: schedule a registry write. */
  | { kind: "persist" }
  | { kind: "resolve"; caller: number; value: unknown }
  | { kind: "reject"; caller: number; error: OrchError };

/** The result of one message. */
export interface Transition {
  state: AgentState;
  effects: AgentEffect[];
}

/** Starts in a row with no answer to get_state before an agent is failed. */
export const START_TIMEOUT_LIMIT = 3;

/** A new agent's state, from its record. */
export function initialState(record: AgentRecord): AgentState {
  return {
    record: { ...record },
    lastSeenAt: record.lastSeenAt,
    gen: 0,
    worker: null,
    diskProblem: null,
    protocolProblem: null,
    flood: NO_FLOOD,
    nextRequest: 1,
    pending: new Map(),
    restartHistory: NO_RESTARTS,
    startupFailure: null,
    startTimeouts: 0,
    backoffToken: 0,
    ping: null,
    idlePings: 0,
    lastEventAt: 0,
    run: null,
    runCounter: 0,
    settles: false,
    intendedExit: null,
    stopWaiters: [],
    afterStop: null,
    stopReason: "stopped by request",
    waiters: [],
    dialogs: new Map(),
    outcome: null,
    dialogDeadlines: new Map(),
  };
}

/** The persistent record, whole. */
export function recordOf(state: AgentState): AgentRecord {
  return { ...state.record, lastSeenAt: state.lastSeenAt };
}

/** `failed after 5 restarts in 60s; last exit: ...`, or just the status. */
export function describeStatus(state: AgentState): string {
  const { status, statusReason } = state.record;
  if (!statusReason) return status;
  return statusReason.startsWith(status) ? statusReason : `${status}: ${statusReason}`;
}

/** Error for a command that needs a running worker. */
export function notRunningError(state: AgentState): OrchError {
  const { name, status } = state.record;
  return new OrchError(
    "not_running",
    `agent "${name}" is not running (status: ${describeStatus(state)}); see pi-orch logs ${name}` +
      (status === "stopped" || status === "failed" ? `, or start it again with pi-orch restart ${name}` : ""),
  );
}

/** `T` with its fields writable: a Step changes its copy of the state in place. */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** The agent's state for a person: its status, the question of its newest open dialog, how its last run ended. */
export function activityOfState(s: AgentState): Activity {
  return activityOf({
    status: s.record.status,
    statusReason: s.record.statusReason,
    questions: [...s.dialogs.values()],
    outcome: s.outcome,
  });
}

/**
 * A copy of `s` to change, field by field. Not `{ ...s }`: V8 clones a literal fast, but
 * a clone of a clone takes its slow path (~0.3 us here for these 21 fields), and every
 * state after the first is a clone, so the spread cost that on each of a worker's lines.
 * The return type makes a required field left out of this list a compile error.
 */
export function copyState(s: AgentState): Mutable<AgentState> {
  return {
    record: s.record,
    lastSeenAt: s.lastSeenAt,
    gen: s.gen,
    worker: s.worker,
    diskProblem: s.diskProblem,
    protocolProblem: s.protocolProblem,
    flood: s.flood,
    nextRequest: s.nextRequest,
    pending: s.pending,
    restartHistory: s.restartHistory,
    startupFailure: s.startupFailure,
    startTimeouts: s.startTimeouts,
    backoffToken: s.backoffToken,
    ping: s.ping,
    idlePings: s.idlePings,
    lastEventAt: s.lastEventAt,
    run: s.run,
    runCounter: s.runCounter,
    settles: s.settles,
    intendedExit: s.intendedExit,
    stopWaiters: s.stopWaiters,
    afterStop: s.afterStop,
    stopReason: s.stopReason,
    waiters: s.waiters,
    dialogs: s.dialogs,
    outcome: s.outcome,
    dialogDeadlines: s.dialogDeadlines,
  };
}
