/**
 * The pi-orch socket protocol: one JSON object per line. Clients send requests
 * `{id, type, ...}`; the supervisor answers each with `{id, ok:true, data}` or
 * `{id, ok:false, error:{code, message}}`, and streams `event`/`lagged` messages
 * to subscribers. One schema per message; the types derive from them.
 */
import { Type, type Static, type TSchema } from "typebox";

/** Request ids are chosen by the client and echoed in the response. */
export const RequestId = Type.Union([Type.String(), Type.Number()]);
export type RequestId = Static<typeof RequestId>;

function request<T extends string, P extends Record<string, TSchema>>(type: T, props: P) {
  return Type.Object({ id: RequestId, type: Type.Literal(type), ...props });
}

const AgentRef = Type.String({ minLength: 1 });
const PositiveInt = Type.Integer({ minimum: 1 });
const NonNegativeInt = Type.Integer({ minimum: 0 });

/** `spawn`: start a new agent. */
export const SpawnRequest = request("spawn", {
  name: Type.Optional(Type.String({ minLength: 1 })),
  cwd: Type.Optional(Type.String({ minLength: 1 })),
  provider: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
  restart: Type.Optional(Type.Union([Type.Literal("permanent"), Type.Literal("transient"), Type.Literal("temporary")])),
  policy: Type.Optional(
    Type.Object({
      backoffInitialMs: Type.Optional(PositiveInt),
      backoffMaxMs: Type.Optional(PositiveInt),
      resetAfterMs: Type.Optional(PositiveInt),
      intensity: Type.Optional(NonNegativeInt),
      periodMs: Type.Optional(PositiveInt),
    }),
  ),
  /** argv of a custom worker (the CLI splits `--worker-command "CMD ARGS"`). */
  workerCommand: Type.Optional(Type.Array(Type.String(), { minItems: 1 })),
  extraArgs: Type.Optional(Type.Array(Type.String())),
  env: Type.Optional(Type.Record(Type.String(), Type.String())),
  onStall: Type.Optional(Type.Union([Type.Literal("notify"), Type.Literal("abort"), Type.Literal("restart")])),
  limits: Type.Optional(
    Type.Object({
      maxMemoryMb: Type.Optional(PositiveInt),
      maxTokens: Type.Optional(PositiveInt),
      runTimeoutMs: Type.Optional(PositiveInt),
    }),
  ),
  /** Give the agent its own git worktree on a new branch (default `pi-orch/<name>` from `HEAD`). */
  worktree: Type.Optional(
    Type.Object({
      branch: Type.Optional(Type.String({ minLength: 1 })),
      base: Type.Optional(Type.String({ minLength: 1 })),
    }),
  ),
  prompt: Type.Optional(Type.String()),
  /** Answer once the worker left `starting` (default true). */
  wait: Type.Optional(Type.Boolean()),
});

/** `list`: every agent. */
export const ListRequest = request("list", {});
/** `status`: one agent. */
export const StatusRequest = request("status", { agent: AgentRef });
/** `stop`: one agent (`agent`) or every agent (`all: true`). */
export const StopRequest = request("stop", { agent: Type.Optional(AgentRef), all: Type.Optional(Type.Boolean()) });
/** `restart`: restart by hand, resuming the session; also brings back `failed`/`stopped` agents. */
export const RestartRequest = request("restart", { agent: AgentRef, wait: Type.Optional(Type.Boolean()) });
/**
 * `remove`: forget an agent and remove its worktree; `force` stops a running one first and
 * discards uncommitted worktree changes; `deleteBranch` also deletes the worktree's branch.
 */
export const RemoveRequest = request("remove", {
  agent: AgentRef,
  force: Type.Optional(Type.Boolean()),
  deleteBranch: Type.Optional(Type.Boolean()),
});
/** `rpc`: forward one pi protocol command; `data` is the worker's own response. */
export const RpcRequest = request("rpc", {
  agent: AgentRef,
  command: Type.Object({ type: Type.String() }, { additionalProperties: true }),
  timeoutMs: Type.Optional(PositiveInt),
});
/** `subscribe`: stream events of `agents` (all when absent or empty), replaying `seq > since` first. */
export const SubscribeRequest = request("subscribe", {
  agents: Type.Optional(Type.Array(AgentRef)),
  since: Type.Optional(NonNegativeInt),
});
/** `shutdown`: stop every agent, persist the registry, and end the supervisor. */
export const ShutdownRequest = request("shutdown", {});

/** Every request schema by its `type`. */
export const IpcRequestSchemas = {
  spawn: SpawnRequest,
  list: ListRequest,
  status: StatusRequest,
  stop: StopRequest,
  restart: RestartRequest,
  remove: RemoveRequest,
  rpc: RpcRequest,
  subscribe: SubscribeRequest,
  shutdown: ShutdownRequest,
} as const;

/** A request `type`. */
export type IpcRequestType = keyof typeof IpcRequestSchemas;
/** The request of one `type`. */
export type IpcRequestOf<T extends IpcRequestType> = Static<(typeof IpcRequestSchemas)[T]>;
/** Any request. */
export type IpcRequest = { [K in IpcRequestType]: IpcRequestOf<K> }[IpcRequestType];
/** The fields of a request besides `id` and `type`. */
export type IpcParams<T extends IpcRequestType> = Omit<IpcRequestOf<T>, "id" | "type">;

/** `{id, ok:true, data}` */
export const OkResponse = Type.Object({ id: RequestId, ok: Type.Literal(true), data: Type.Unknown() });
/**
 * `{id, ok:false, error:{code, message}}`; `id` is null when the request could not be read.
 * The socket layer's codes are `bad_json`, `bad_request`, `unknown_type`, `invalid_request`,
 * `line_too_long` and `internal`; the supervisor adds its own (`not_found`, `not_running`, ...).
 */
export const ErrorResponse = Type.Object({
  id: Type.Union([RequestId, Type.Null()]),
  ok: Type.Literal(false),
  error: Type.Object({ code: Type.String(), message: Type.String() }),
});
/** Any response. */
export const IpcResponse = Type.Union([OkResponse, ErrorResponse]);
export type IpcResponse = Static<typeof IpcResponse>;

/** One agent event: `seq` is per agent and increases by one; `at` is when the supervisor received it. */
export const EventMessage = Type.Object({
  type: Type.Literal("event"),
  agent: Type.String(),
  seq: Type.Integer(),
  at: Type.Optional(Type.Number()),
  event: Type.Record(Type.String(), Type.Unknown()),
});
export type EventMessage = Static<typeof EventMessage>;

/** Events `from..to` of `agent` were skipped for this subscriber; it continues from the present. */
export const LaggedMessage = Type.Object({
  type: Type.Literal("lagged"),
  agent: Type.String(),
  from: Type.Integer(),
  to: Type.Integer(),
});
export type LaggedMessage = Static<typeof LaggedMessage>;

/** What a subscribed connection receives besides responses. */
export type IpcStreamMessage = EventMessage | LaggedMessage;

/** File name of the socket inside the pi-orch home. */
export const SOCKET_NAME = "orch.sock";
