/**
 * An agent as the supervisor keeps it and reports it: its status, restart policy,
 * limits and worktree, the row of agents.json (`AgentRecord`) and what `list`/`status`
 * answer (`AgentInfo`). One schema each; the types derive from them.
 */
import type { Static } from "typebox";
import * as Type from "typebox/type";

const PositiveInt = Type.Integer({ minimum: 1 });
const NonNegativeInt = Type.Integer({ minimum: 0 });

/** Lifecycle of one agent. `idle ⇄ busy` is driven by the worker's own `agent_start`/`agent_end`. */
export const AgentStatus = Type.Union([
  Type.Literal("starting"),
  Type.Literal("idle"),
  Type.Literal("busy"),
  Type.Literal("stopping"),
  Type.Literal("stopped"),
  Type.Literal("backoff"),
  Type.Literal("unresponsive"),
  Type.Literal("stalled"),
  Type.Literal("failed"),
]);
export type AgentStatus = Static<typeof AgentStatus>;

/** Tokens and cost so far: per agent in its record, per task in a run report (summed in shared/usage.ts). */
export const Usage = Type.Object({
  input: Type.Number(),
  output: Type.Number(),
  cacheRead: Type.Number(),
  cacheWrite: Type.Number(),
  /** As the worker counted them (`totalTokens`), else input + output + cache. */
  total: Type.Number(),
  /** Dollars, as the worker priced the model (0 for a model without prices, such as faux). */
  cost: Type.Number(),
});
export type Usage = Static<typeof Usage>;

/** States in which a worker process exists and accepts protocol commands. */
export const RUNNING_STATUSES: ReadonlySet<AgentStatus> = new Set(["starting", "idle", "busy", "stalled"]);

/** OTP restart kinds: `permanent` always, `transient` after an abnormal exit, `temporary` never. */
export const RestartKind = Type.Union([
  Type.Literal("permanent"),
  Type.Literal("transient"),
  Type.Literal("temporary"),
]);
export type RestartKind = Static<typeof RestartKind>;

/** Restart policy of one agent, as data (OTP child spec plus backoff). */
export const RestartPolicy = Type.Object({
  restart: RestartKind,
  /** First backoff delay; doubles after every restart that did not stay healthy. */
  backoffInitialMs: PositiveInt,
  backoffMaxMs: PositiveInt,
  /** A worker that ran this long before exiting counts as healthy: backoff starts over. */
  resetAfterMs: PositiveInt,
  /** At most `intensity` automatic restarts within `periodMs`, then `failed`. */
  intensity: NonNegativeInt,
  periodMs: PositiveInt,
});
export type RestartPolicy = Static<typeof RestartPolicy>;

/** Why a worker process ended, as the supervisor saw it. */
export const ExitReason = Type.Union([
  /** the process exited on its own */
  Type.Literal("exit"),
  /** it never started (command not found, ...) */
  Type.Literal("spawn_error"),
  /** it did not answer the first get_state in time */
  Type.Literal("start_timeout"),
  /** it missed a presence deadline and was killed */
  Type.Literal("unresponsive"),
  /** its process tree went over --max-memory and was killed */
  Type.Literal("memory_limit"),
  /** busy without events past the stall timeout, policy `restart` */
  Type.Literal("stalled"),
  /** it flooded non-JSON lines past the limit (see supervisor/protocol-flood.ts) */
  Type.Literal("protocol_errors"),
  /** the supervisor stopped it on request */
  Type.Literal("stopped"),
  /** recorded on load: the previous supervisor went away */
  Type.Literal("supervisor_exited"),
]);
export type ExitReason = Static<typeof ExitReason>;

/** The end of one worker process. */
export const WorkerExit = Type.Object({
  code: Type.Union([Type.Integer(), Type.Null()]),
  signal: Type.Union([Type.String(), Type.Null()]),
  reason: ExitReason,
  /** Human detail: the spawn error, the limit that was crossed, ... */
  message: Type.Optional(Type.String()),
  at: Type.Number(),
});
export type WorkerExit = Static<typeof WorkerExit>;

/** What to do when a busy agent stays silent past the stall timeout. */
export const StallAction = Type.Union([Type.Literal("notify"), Type.Literal("abort"), Type.Literal("restart")]);
export type StallAction = Static<typeof StallAction>;

/** Per-agent limits; each is off when absent. */
export const AgentLimits = Type.Object({
  /** RSS of the worker's whole process group, checked at every ping. */
  maxMemoryMb: Type.Optional(PositiveInt),
  /** Tokens of one run (sum of assistant `usage.totalTokens`); over it the run is aborted. */
  maxTokens: Type.Optional(PositiveInt),
  /** Wall time of one run; over it the run is aborted. */
  runTimeoutMs: Type.Optional(PositiveInt),
});
export type AgentLimits = Static<typeof AgentLimits>;

/** Who made a worktree: a long-lived agent (`spawn --worktree`) or a task of `pi-orch run`. */
export const WorktreeOwner = Type.Union([Type.Literal("agent"), Type.Literal("run")]);
export type WorktreeOwner = Static<typeof WorktreeOwner>;

/**
 * What to do when the worktree's folder or branch is already there: `refuse` (the
 * default), or, when an earlier `run` left it, `reuse` it as it is or `replace` it
 * (its uncommitted changes and its branch go).
 */
export const ExistingWorktree = Type.Union([Type.Literal("refuse"), Type.Literal("reuse"), Type.Literal("replace")]);
export type ExistingWorktree = Static<typeof ExistingWorktree>;

/** What an agent asks for with `spawn --worktree`: everything optional. */
export const WorktreeRequest = Type.Object({
  /** Branch to create (default `pi-orch/<agent name>`). */
  branch: Type.Optional(Type.String({ minLength: 1 })),
  /** Commit-ish the branch starts from (default `HEAD`). */
  base: Type.Optional(Type.String({ minLength: 1 })),
  /** Recorded with the branch, so a later run knows its own leftovers (default `agent`). */
  owner: Type.Optional(WorktreeOwner),
  /** A leftover of an earlier run (same owner `run`) in the way (default `refuse`). */
  existing: Type.Optional(ExistingWorktree),
});
export type WorktreeRequest = Static<typeof WorktreeRequest>;

/** An agent's own git worktree (`spawn --worktree`). */
export const WorktreeInfo = Type.Object({
  /** The worktree folder (`$PI_ORCH_HOME/worktrees/<repo>-<hash>/<agent>`). */
  path: Type.String(),
  /** Branch checked out in it (`pi-orch/<agent>` by default). */
  branch: Type.String(),
  /** Commit the branch started from; `diff` compares against it. */
  base: Type.String(),
  /** Top folder of the repository it belongs to. */
  repo: Type.String(),
});
export type WorktreeInfo = Static<typeof WorktreeInfo>;

/** The agent sandbox (shared/sandbox.ts): `off`, `on` (bubblewrap around the worker) or `strict` (and no network for its commands). */
export const SandboxMode = Type.Union([Type.Literal("off"), Type.Literal("on"), Type.Literal("strict")]);

/** What `spawn` takes (the fields of the `spawn` request besides `id` and `type`). */
export const SpawnOptions = Type.Object({
  /** Agent name; a two-word name is generated when absent. */
  name: Type.Optional(Type.String({ minLength: 1 })),
  /** Working directory of the worker (default: the supervisor's). */
  cwd: Type.Optional(Type.String({ minLength: 1 })),
  provider: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
  /** `transient` by default. */
  restart: Type.Optional(RestartKind),
  /** Other policy fields (backoff, intensity) over the supervisor's defaults. */
  policy: Type.Optional(Type.Partial(Type.Omit(RestartPolicy, ["restart"]))),
  /** argv of a custom worker (the CLI splits `--worker-command "CMD ARGS"`); it must speak the pi protocol on stdio. */
  workerCommand: Type.Optional(Type.Array(Type.String(), { minItems: 1 })),
  extraArgs: Type.Optional(Type.Array(Type.String())),
  /** pi package sources (`npm:x`, `git:host/o/r`, an absolute folder) every worker of the agent loads, as `-e SOURCE`. */
  packages: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  env: Type.Optional(Type.Record(Type.String(), Type.String())),
  onStall: Type.Optional(StallAction),
  limits: Type.Optional(AgentLimits),
  /** Give the agent its own git worktree of the repository around `cwd`, on a new branch (default `pi-orch/<name>` from `HEAD`). */
  worktree: Type.Optional(WorktreeRequest),
  /** The sandbox; absent: the supervisor's default (`PI_ORCH_SANDBOX`, else `on` where bwrap works). */
  sandbox: Type.Optional(SandboxMode),
  /** More folders the sandboxed agent may write to (beside its project, /tmp and the tool caches). */
  sandboxWrite: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  /** A first prompt, sent once the worker is ready. */
  prompt: Type.Optional(Type.String()),
  /** Answer once the worker left `starting` (default true). */
  wait: Type.Optional(Type.Boolean()),
});
export type SpawnOptions = Static<typeof SpawnOptions>;

const AgentSpecFields = {
  name: Type.String({ minLength: 1 }),
  id: Type.String({ minLength: 1 }),
  cwd: Type.String({ minLength: 1 }),
  provider: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
  policy: RestartPolicy,
  /** argv of a custom worker (`--worker-command`); absent means our own `pi --mode rpc`. */
  workerCommand: Type.Optional(Type.Array(Type.String(), { minItems: 1 })),
  /** Extra arguments appended to the worker's argv. */
  extraArgs: Type.Optional(Type.Array(Type.String())),
  /** pi package sources its workers load (`-e SOURCE` each, before the extra arguments). */
  packages: Type.Optional(Type.Array(Type.String())),
  /** Extra environment of the worker (on top of the supervisor's). Stored in agents.json. */
  env: Type.Optional(Type.Record(Type.String(), Type.String())),
  onStall: StallAction,
  limits: AgentLimits,
  /** Present when the agent works in its own worktree; its cwd is inside it. */
  worktree: Type.Optional(WorktreeInfo),
  /** The sandbox its workers run in, decided at spawn (absent: `off`, as agents spawned before there was one). */
  sandbox: Type.Optional(SandboxMode),
  /** More folders its sandbox lets it write to. */
  sandboxWrite: Type.Optional(Type.Array(Type.String())),
  createdAt: Type.Number(),
};

const AgentRecordFields = {
  ...AgentSpecFields,
  status: AgentStatus,
  /** Why the agent is in its status, when that is not obvious (`failed after 5 restarts in 60s`). */
  statusReason: Type.Optional(Type.String()),
  pid: Type.Union([Type.Integer(), Type.Null()]),
  /** Automatic restarts since the agent was spawned (manual restarts do not count). */
  restarts: NonNegativeInt,
  lastExit: Type.Union([WorkerExit, Type.Null()]),
  sessionFile: Type.Union([Type.String(), Type.Null()]),
  /** Last time the worker answered anything (ping, response or event). */
  lastSeenAt: Type.Union([Type.Number(), Type.Null()]),
  /**
   * The model the worker last reported in `get_state` (`faux`/`faux-1` for `--provider
   * faux`): kept after it exits and across supervisors, so a stopped agent is named as
   * it ran. `provider`/`model` above stay what was asked, so a restart asks the same.
   */
  reportedModel: Type.Optional(Type.Object({ provider: Type.String(), model: Type.String() })),
  /** Tokens and cost of every assistant message the agent's workers reported (absent until the first). */
  usage: Type.Optional(Usage),
};

/** One row of agents.json: everything needed to (re)start the agent plus what was last known of its worker. */
export const AgentRecord = Type.Object(AgentRecordFields);
export type AgentRecord = Static<typeof AgentRecord>;

/** What names an agent: what a reader of agents.json that only resolves names needs of each record. */
export const AgentRef = Type.Pick(AgentRecord, ["name", "id"]);
export type AgentRef = Static<typeof AgentRef>;

/** What `list`/`status` return: the record plus live details. */
export const AgentInfo = Type.Object({
  ...AgentRecordFields,
  /** Sequence number of the agent's last event (0 when none). */
  lastSeq: NonNegativeInt,
  /** When the current worker process started. */
  startedAt: Type.Union([Type.Number(), Type.Null()]),
  /** Its state for a person (shared/activity.ts): working, waiting for you (with the question), done, failed... */
  activity: Type.Optional(
    Type.Object({
      state: Type.Union([
        Type.Literal("starting"),
        Type.Literal("working"),
        Type.Literal("waiting"),
        Type.Literal("done"),
        Type.Literal("failed"),
        Type.Literal("stopped"),
        Type.Literal("idle"),
      ]),
      message: Type.Optional(Type.String()),
    }),
  ),
});
export type AgentInfo = Static<typeof AgentInfo>;
