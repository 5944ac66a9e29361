/**
 * Types of the supervisor layer: agent states, restart policy as data, what the
 * registry stores per agent and what `list`/`status` report. Nothing here does I/O.
 */

/** Lifecycle of one agent. `idle ⇄ busy` is driven by the worker's own `agent_start`/`agent_end`. */
export type AgentStatus =
  | "starting"
  | "idle"
  | "busy"
  | "stopping"
  | "stopped"
  | "backoff"
  | "unresponsive"
  | "stalled"
  | "failed";

/** States in which a worker process exists and accepts protocol commands. */
export const RUNNING_STATUSES: ReadonlySet<AgentStatus> = new Set(["starting", "idle", "busy", "stalled"]);

/** OTP restart kinds: `permanent` always, `transient` after an abnormal exit, `temporary` never. */
export type RestartKind = "permanent" | "transient" | "temporary";

/** Restart policy of one agent, as data (OTP child spec plus backoff). */
export interface RestartPolicy {
  restart: RestartKind;
  /** First backoff delay; doubles after every restart that did not stay healthy. */
  backoffInitialMs: number;
  backoffMaxMs: number;
  /** A worker that ran this long before exiting counts as healthy: backoff starts over. */
  resetAfterMs: number;
  /** At most `intensity` automatic restarts within `periodMs`, then `failed`. */
  intensity: number;
  periodMs: number;
}

/** The defaults of issue 5: transient, 500 ms doubling to 30 s, reset after 60 s, 5 in 60 s. */
export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  restart: "transient",
  backoffInitialMs: 500,
  backoffMaxMs: 30_000,
  resetAfterMs: 60_000,
  intensity: 5,
  periodMs: 60_000,
};

/** Why a worker process ended, as the supervisor saw it. */
export type ExitReason =
  | "exit" // the process exited on its own
  | "spawn_error" // it never started (command not found, ...)
  | "start_timeout" // it did not answer the first get_state in time
  | "unresponsive" // it missed a presence deadline and was killed
  | "memory_limit" // its process tree went over --max-memory and was killed
  | "stalled" // busy without events past the stall timeout, policy `restart`
  | "stopped" // the supervisor stopped it on request
  | "supervisor_exited"; // recorded on load: the previous supervisor went away

/** The end of one worker process. */
export interface WorkerExit {
  code: number | null;
  signal: string | null;
  reason: ExitReason;
  /** Human detail: the spawn error, the limit that was crossed, ... */
  message?: string;
  at: number;
}

/** What to do when a busy agent stays silent past the stall timeout. */
export type StallAction = "notify" | "abort" | "restart";

/** Per-agent limits; each is off when absent. */
export interface AgentLimits {
  /** RSS of the worker's whole process group, checked at every ping. */
  maxMemoryMb?: number;
  /** Tokens of one run (sum of assistant `usage.totalTokens`); over it the run is aborted. */
  maxTokens?: number;
  /** Wall time of one run; over it the run is aborted. */
  runTimeoutMs?: number;
}

/** Presence and stall timings; tests shorten them. */
export interface AgentTimings {
  /** How often a `get_state` ping is sent. */
  pingIntervalMs: number;
  /** A ping not answered within this is a lost presence: `unresponsive`. */
  pingDeadlineMs: number;
  /** The first `get_state` after a start must be answered within this. */
  startTimeoutMs: number;
  /** A busy agent with no event for this long is `stalled`. */
  stallTimeoutMs: number;
  /** Stop: time between closing stdin and SIGTERM to the group. */
  stopGraceMs: number;
  /** Stop: time between SIGTERM and SIGKILL to the group. */
  killGraceMs: number;
  /** Default timeout of a forwarded rpc command. */
  rpcTimeoutMs: number;
}

/** Defaults of issue 5 (ping 5 s, deadline 10 s, stall 10 min, grace 5 s). */
export const DEFAULT_TIMINGS: AgentTimings = {
  pingIntervalMs: 5_000,
  pingDeadlineMs: 10_000,
  startTimeoutMs: 30_000,
  stallTimeoutMs: 10 * 60_000,
  stopGraceMs: 5_000,
  killGraceMs: 2_000,
  rpcTimeoutMs: 60_000,
};

/** An agent's own git worktree (`spawn --worktree`). */
export interface WorktreeInfo {
  /** The worktree folder (`$PI_ORCH_HOME/worktrees/<repo>-<hash>/<agent>`). */
  path: string;
  /** Branch checked out in it (`pi-orch/<agent>` by default). */
  branch: string;
  /** Commit the branch started from; `diff` compares against it. */
  base: string;
  /** Top folder of the repository it belongs to. */
  repo: string;
}

/** Everything needed to (re)start one agent's worker; persisted in the registry. */
export interface AgentSpec {
  name: string;
  id: string;
  cwd: string;
  provider?: string;
  model?: string;
  policy: RestartPolicy;
  /** argv of a custom worker (`--worker-command`); absent means our own `pi --mode rpc`. */
  workerCommand?: string[];
  /** Extra arguments appended to the worker's argv. */
  extraArgs?: string[];
  /** Extra environment of the worker (on top of the supervisor's). Stored in agents.json. */
  env?: Record<string, string>;
  onStall: StallAction;
  limits: AgentLimits;
  /** Present when the agent works in its own worktree; its cwd is inside it. */
  worktree?: WorktreeInfo;
  createdAt: number;
}

/** One row of agents.json: the spec plus what was last known of the worker. */
export interface AgentRecord extends AgentSpec {
  status: AgentStatus;
  /** Why the agent is in its status, when that is not obvious (`failed after 5 restarts in 60s`). */
  statusReason?: string;
  pid: number | null;
  /** Automatic restarts since the agent was spawned (manual restarts do not count). */
  restarts: number;
  lastExit: WorkerExit | null;
  sessionFile: string | null;
  /** Last time the worker answered anything (ping, response or event). */
  lastSeenAt: number | null;
}

/** What `list`/`status` return: the record plus live details. */
export interface AgentInfo extends AgentRecord {
  /** Sequence number of the agent's last event (0 when none). */
  lastSeq: number;
  /** When the current worker process started. */
  startedAt: number | null;
}
