/**
 * The pi-orch socket protocol: one JSON object per line. Clients send requests
 * `{id, type, ...}`; the supervisor answers each with `{id, ok:true, data}` or
 * `{id, ok:false, error:{code, message}}`, and streams `event`/`lagged` messages
 * to subscribers. One schema per message, and one per response's `data`; the types
 * derive from them.
 */
import type { Static, TSchema } from "typebox";
import * as Type from "typebox/type";
import { AgentInfo, SpawnOptions } from "./agent.js";
import { RpcCommandEnvelope, RpcResponse } from "./rpc.js";

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
export const SpawnRequest = request("spawn", SpawnOptions.properties);
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
/**
 * `rpc`: forward one pi protocol command; `data` is the worker's own response. Only the
 * envelope of the command is checked here; the worker checks the command.
 */
export const RpcRequest = request("rpc", {
  agent: AgentRef,
  command: RpcCommandEnvelope,
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

/** What `subscribe` answers: the agents followed (null: every agent) and each one's last `seq` at that moment. */
export const SubscribeResult = Type.Object({
  agents: Type.Union([Type.Array(Type.String()), Type.Null()]),
  lastSeq: Type.Record(Type.String(), NonNegativeInt),
});
export type SubscribeResult = Static<typeof SubscribeResult>;

/** What `shutdown` answers: the agents that were stopped. */
export const ShutdownResult = Type.Object({ stopped: Type.Array(Type.String()) });
export type ShutdownResult = Static<typeof ShutdownResult>;

/**
 * The `data` of a successful response, by request `type`. `stop` answers one AgentInfo for
 * `agent`, every agent for `all`; `remove` answers the agent as it was removed.
 */
export const IpcResultSchemas = {
  spawn: AgentInfo,
  list: Type.Array(AgentInfo),
  status: AgentInfo,
  stop: Type.Union([AgentInfo, Type.Array(AgentInfo)]),
  restart: AgentInfo,
  remove: AgentInfo,
  rpc: RpcResponse,
  subscribe: SubscribeResult,
  shutdown: ShutdownResult,
} as const satisfies Record<IpcRequestType, TSchema>;

/** The `data` of a successful response to a request of `type`. */
export type IpcResultOf<T extends IpcRequestType> = Static<(typeof IpcResultSchemas)[T]>;

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

/**
 * One agent event in its envelope: `seq` is per agent and increases by one; `at` is when
 * the supervisor received it (in-process agents of the TUI leave it out). `event` is the worker's event (see events.ts) or one of the
 * supervisor's own (see supervisor-events.ts); a worker newer than our schema may send others.
 */
export const EventMessage = Type.Object({
  type: Type.Literal("event"),
  agent: Type.String(),
  seq: Type.Integer(),
  at: Type.Optional(Type.Number()),
  event: Type.Record(Type.String(), Type.Unknown()),
});
export type EventMessage = Static<typeof EventMessage>;

/**
 * Events `from..to` (inclusive) of `agent` were skipped for this subscriber; it continues
 * from the present. With `reason: "not_logged"` no one has them: their log lines never
 * reached the disk (dropped from the bounded backlog while the disk refused writes).
 * Without it, this subscriber fell behind, or (before its first event) the history is
 * no longer held.
 */
export const LaggedMessage = Type.Object({
  type: Type.Literal("lagged"),
  agent: Type.String(),
  from: Type.Integer(),
  to: Type.Integer(),
  reason: Type.Optional(Type.Literal("not_logged")),
});
export type LaggedMessage = Static<typeof LaggedMessage>;

/** What a subscribed connection receives besides responses. */
export const IpcStreamMessage = Type.Union([EventMessage, LaggedMessage]);
export type IpcStreamMessage = Static<typeof IpcStreamMessage>;
