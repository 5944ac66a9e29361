/**
 * Events the supervisor itself adds to an agent's stream, next to the worker's own:
 * status changes, worker starts and exits, limits, protocol trouble. They travel in
 * the same envelope and get sequence numbers like the worker's events.
 */
import type { Static } from "typebox";
import * as Type from "typebox/type";
import { AgentStatus, ExitReason } from "./agent.js";

/** The agent moved from `previous` to `status`. */
export const AgentStatusEvent = Type.Object({
  type: Type.Literal("agent_status"),
  status: AgentStatus,
  previous: AgentStatus,
  reason: Type.Optional(Type.String()),
  pid: Type.Union([Type.Integer(), Type.Null()]),
  restarts: Type.Integer({ minimum: 0 }),
});

/** A worker process started; `command` has credentials redacted; `resumed` is the session file it resumes. */
export const WorkerStartedEvent = Type.Object({
  type: Type.Literal("worker_started"),
  pid: Type.Integer(),
  command: Type.Array(Type.String()),
  resumed: Type.Union([Type.String(), Type.Null()]),
});

/** A worker process ended. */
export const WorkerExitedEvent = Type.Object({
  type: Type.Literal("worker_exited"),
  code: Type.Union([Type.Integer(), Type.Null()]),
  signal: Type.Union([Type.String(), Type.Null()]),
  reason: ExitReason,
  message: Type.Optional(Type.String()),
});

/** The worker went away in the middle of a run; the run will not end with `agent_end`. */
export const RunInterruptedEvent = Type.Object({
  type: Type.Literal("run_interrupted"),
  reason: Type.String(),
});

/** A limit (`max_memory`, `max_tokens`, `run_timeout`, `stall`) was crossed and acted on. */
export const LimitExceededEvent = Type.Object({
  type: Type.Literal("limit_exceeded"),
  limit: Type.String(),
  message: Type.String(),
});

/** The worker wrote something that is not the protocol (not JSON, an oversized line). */
export const ProtocolErrorEvent = Type.Object({
  type: Type.Literal("protocol_error"),
  message: Type.String(),
  /** A summary of a flooding worker: how many non-JSON lines were dropped unreported. */
  dropped: Type.Optional(Type.Integer({ minimum: 1 })),
});

/** The supervisor failed handling something for this agent; the agent goes on. */
export const SupervisorErrorEvent = Type.Object({
  type: Type.Literal("supervisor_error"),
  message: Type.String(),
});

/**
 * A forwarded command (`command`, e.g. `prompt` of an extension's `/cmd`) passed its
 * `timeoutMs` while the worker waits on `dialogs` open dialogs: it is not failed, it
 * waits until they are answered (or time out themselves), then gets its timeout again.
 */
export const RpcWaitingEvent = Type.Object({
  type: Type.Literal("rpc_waiting"),
  command: Type.String(),
  timeoutMs: Type.Integer(),
  dialogs: Type.Integer({ minimum: 1 }),
});

/**
 * A dialog (an `extension_ui_request` select, confirm, input or editor) is no longer
 * open, so a client drops it: `answered` through the supervisor (by any client),
 * `timeout` (its own), `dismissed` (the extension aborted its signal; our worker's
 * get_state no longer lists it, pi tells nothing), or `worker_exited`.
 */
export const DialogClosedEvent = Type.Object({
  type: Type.Literal("dialog_closed"),
  id: Type.String(),
  reason: Type.Union([
    Type.Literal("answered"),
    Type.Literal("timeout"),
    Type.Literal("dismissed"),
    Type.Literal("worker_exited"),
  ]),
});
export type DialogClosedReason = Static<typeof DialogClosedEvent>["reason"];

/** Every event the supervisor writes into an agent's stream. */
export const SupervisorEvent = Type.Union([
  AgentStatusEvent,
  WorkerStartedEvent,
  WorkerExitedEvent,
  RunInterruptedEvent,
  LimitExceededEvent,
  ProtocolErrorEvent,
  SupervisorErrorEvent,
  RpcWaitingEvent,
  DialogClosedEvent,
]);
export type SupervisorEvent = Static<typeof SupervisorEvent>;
