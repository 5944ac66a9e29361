/**
 * The writing half of one transition of the agent table (agent-machine.ts): a copy of the
 * state to change and the effects so far, with the primitive moves every handler makes
 * (record a field, send a line, start or cancel a timer, emit, set the status and answer
 * those waiting for it, reject the requests a gone worker will not answer). Pure: it only
 * changes its copy and appends effects.
 */
import type { SupervisorEvent } from "../shared/schema/supervisor-events.js";
import type { AgentRecord, AgentStatus } from "../shared/schema/agent.js";
import { OrchError } from "./errors.js";
import {
  copyState,
  type AgentEffect,
  type AgentMessage,
  type AgentState,
  type Mutable,
  type PendingRequest,
  type TimerKey,
} from "./agent-state.js";

/** A copy of the state being changed and the effects so far. */
export class StepWriter {
  readonly s: Mutable<AgentState>;
  readonly effects: AgentEffect[] = [];

  /** `now` is the machine clock of the message being handled. */
  constructor(
    state: AgentState,
    readonly now: number,
  ) {
    this.s = copyState(state);
  }

  /** Change fields of the persistent record (a registry write needs `persist`). */
  record(patch: Partial<AgentRecord>): void {
    this.s.record = { ...this.s.record, ...patch };
  }

  /** A fresh id for a request of ours to the worker (`orch-ping-7`). */
  requestId(kind: string): string {
    return `orch-${kind}-${this.s.nextRequest++}`;
  }

  /** Remember a request the worker has yet to answer. */
  addPending(id: string, request: PendingRequest): void {
    const pending = new Map(this.s.pending);
    pending.set(id, request);
    this.s.pending = pending;
  }

  /** Forget an answered or timed-out request. */
  dropPending(id: string): void {
    const pending = new Map(this.s.pending);
    pending.delete(id);
    this.s.pending = pending;
  }

  /** Refuse every caller still waiting for the worker, which `how` ended (`exited`), and forget the requests. */
  rejectPending(how: string): void {
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

  /** Cancel the timers of a worker that is gone: start, presence, run limit. */
  clearWorkerTimers(): void {
    this.cancel("start");
    this.cancel("ping_tick");
    this.cancel("ping_deadline");
    this.cancel("run");
    this.s.ping = null;
  }

  /** Cancel a restart's backoff wait; a `backoff_done` already on its way is ignored by its token. */
  cancelBackoff(): void {
    this.cancel("backoff");
    this.s.backoffToken++;
  }

  /** A line to the current worker's stdin. */
  send(value: unknown): void {
    this.effects.push({ kind: "send", gen: this.s.worker!.gen, value });
  }

  /** Start (or restart) the timer `key`; `message` comes back when it fires. */
  timer(key: TimerKey, ms: number, message: AgentMessage): void {
    this.effects.push({ kind: "timer", key, ms, message });
  }

  /** Cancel the timer `key`, if it runs. */
  cancel(key: TimerKey): void {
    this.effects.push({ kind: "cancel_timer", key });
  }

  /** Schedule a registry write of the record. */
  persist(): void {
    this.effects.push({ kind: "persist" });
  }

  /**
   * Set the status (the reason: `given`, else a disk or protocol problem), tell the stream,
   * persist, and answer those waiting for a status it satisfies.
   */
  setStatus(status: AgentStatus, given?: string): void {
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
  report(event: SupervisorEvent): void {
    this.emit(event);
  }

  /** An event into the agent's stream; `raw` is the worker's own JSON text. */
  emit(event: Record<string, unknown>, raw?: string): void {
    this.effects.push(raw === undefined ? { kind: "emit", event } : { kind: "emit", event, raw });
  }
}
