/**
 * Presence, as a pure decision: at each ping tick, from what the actor knows of its
 * worker, what to do now (mark it stalled, kill it over its memory limit, send a
 * ping). No process, no timer: the actor reads the RSS and applies the answer.
 */
import type { AgentStatus } from "../shared/schema/agent.js";

/** What the actor knows at a ping tick. */
export interface PresenceState {
  status: AgentStatus;
  /** When the worker last wrote an event. */
  lastEventAt: number;
  /** A ping is out and its deadline still runs. */
  pingOutstanding: boolean;
  /** RSS of the worker's process group; null when unknown or not measured (no memory limit). */
  rssBytes: number | null;
}

/** The limits presence enforces. */
export interface PresenceLimits {
  stallTimeoutMs: number;
  maxMemoryMb?: number;
}

/** One thing to do, in the order given. */
export type PresenceAction =
  | { kind: "stall"; silentMs: number }
  | { kind: "over_memory"; message: string }
  | { kind: "ping" };

/**
 * Decide a ping tick. A busy agent silent past the stall timeout stalls; a group over
 * its memory limit is killed (nothing else follows); otherwise a ping goes out unless
 * one is outstanding, whose deadline then decides.
 */
export function checkPresence(state: PresenceState, limits: PresenceLimits, now: number): PresenceAction[] {
  const actions: PresenceAction[] = [];
  const silentMs = now - state.lastEventAt;
  if (state.status === "busy" && silentMs >= limits.stallTimeoutMs) actions.push({ kind: "stall", silentMs });
  const maxMb = limits.maxMemoryMb;
  if (maxMb !== undefined && state.rssBytes !== null && state.rssBytes > maxMb * 1024 * 1024) {
    actions.push({
      kind: "over_memory",
      message: `process tree RSS ${Math.round(state.rssBytes / 1024 / 1024)} MB is over the ${maxMb} MB limit`,
    });
    return actions;
  }
  if (!state.pingOutstanding) actions.push({ kind: "ping" });
  return actions;
}
