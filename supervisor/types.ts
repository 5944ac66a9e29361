/**
 * The supervisor's own settings: restart-policy defaults and the presence, stall and
 * teardown timings. The agent's wire shapes (status, record, info) are schemas in
 * shared/schema/agent.ts. Nothing here does I/O.
 */
import type { RestartPolicy } from "../shared/schema/agent.js";

/** The defaults: transient, 500 ms doubling to 30 s, reset after 60 s, 5 in 60 s. */
export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  restart: "transient",
  backoffInitialMs: 500,
  backoffMaxMs: 30_000,
  resetAfterMs: 60_000,
  intensity: 5,
  periodMs: 60_000,
};

/** Presence and stall timings; tests shorten them. */
export interface AgentTimings {
  /** How often a `get_state` ping is sent. */
  pingIntervalMs: number;
  /**
   * The longest wait between pings of an agent that stays idle: the interval doubles at
   * each idle tick up to this. Unset: six ping intervals (30 s by default).
   */
  idlePingMaxMs?: number;
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

/** Defaults: ping 5 s, deadline 10 s, stall 10 min, grace 5 s. */
export const DEFAULT_TIMINGS: AgentTimings = {
  pingIntervalMs: 5_000,
  pingDeadlineMs: 10_000,
  startTimeoutMs: 30_000,
  stallTimeoutMs: 10 * 60_000,
  stopGraceMs: 5_000,
  killGraceMs: 2_000,
  rpcTimeoutMs: 60_000,
};
