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

/** Times `pingIntervalMs` an idle agent's pings may drift apart to, unless `idlePingMaxMs` says. */
const IDLE_PING_STRETCH = 6;

/**
 * Milliseconds to the next ping tick, after `idlePings` ticks in a row found the agent
 * idle with nothing going on: `pingIntervalMs` while it works (or was just busy), then
 * doubling, up to `idlePingMaxMs` (six intervals when unset: 5, 10, 20, 30, 30 s by
 * default). A ping is a wake-up of the worker and of the supervisor, about a millisecond
 * of CPU on each side; a fleet of a thousand idle agents at one ping per 5 s spent half
 * a core on them. A hung idle worker is still found, a little later; one a command goes
 * to is pinged at the usual interval again from that command on.
 */
export function nextPingInMs(timings: { pingIntervalMs: number; idlePingMaxMs?: number }, idlePings: number): number {
  const base = timings.pingIntervalMs;
  if (idlePings <= 0) return base;
  const max = Math.max(base, timings.idlePingMaxMs ?? base * IDLE_PING_STRETCH);
  return Math.min(base * 2 ** Math.min(idlePings, 30), max);
}

/**
 * How far past its deadline, in wall time, a ping may be judged at the latest, as a
 * multiple of the deadline, however long the worker or the supervisor waited for a CPU.
 */
const PING_STRETCH_LIMIT = 6;

/**
 * Milliseconds a ping that went out `elapsedMs` ago still has before its worker is
 * unresponsive (0: now). The deadline counts only the time the answer could have been
 * made and read: time the worker or the supervisor spent waiting for a CPU
 * (`waitedMs`, the longer of the two) is not the worker's fault. On a saturated machine
 * a fleet of agents at a low CPU weight can wait seconds for a core, and a supervisor
 * behind a thousand busy autogroups longer; counting that time killed agents that were
 * only waiting their turn. A hung worker (blocked, or spinning with the CPU it gets)
 * still runs out, at the latest `PING_STRETCH_LIMIT` deadlines after the ping.
 */
export function pingTimeLeft(deadlineMs: number, elapsedMs: number, waitedMs: number): number {
  const running = Math.max(0, elapsedMs - Math.max(0, waitedMs));
  return Math.max(0, Math.min(deadlineMs - running, deadlineMs * PING_STRETCH_LIMIT - elapsedMs));
}
