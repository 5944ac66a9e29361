/**
 * The node flags a supervisor is started with when pi-orch starts it (a command's
 * auto-start, `pi-orch demo`). A young generation of at most 2 MB per semi-space
 * (node's default grows to 16 MB) keeps each scavenge short: the supervisor holds
 * every agent's recent events for `since` replays, so most of what it allocates
 * survives a scavenge, and a pause grows with what survived since the last one. At
 * 10,000 events/s the default made 2–3 scavenges a second of 1–4 ms each, and a pause
 * lands in the routing latency of every event that arrives meanwhile; with 2 MB there
 * are about 13 a second of ~0.5 ms (median), for ~10 % more of the supervisor's CPU.
 */

/** The flags used when `PI_ORCH_SUPERVISOR_NODE_FLAGS` is not set. */
export const DEFAULT_SUPERVISOR_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=2"];

/**
 * Node flags for a supervisor pi-orch starts: `PI_ORCH_SUPERVISOR_NODE_FLAGS` (flags
 * separated by spaces; empty for node's defaults) when set, else the default. Pure.
 */
export function supervisorNodeFlags(env: NodeJS.ProcessEnv = process.env): string[] {
  const text = env.PI_ORCH_SUPERVISOR_NODE_FLAGS;
  if (text === undefined) return [...DEFAULT_SUPERVISOR_NODE_FLAGS];
  return text.split(/\s+/).filter((flag) => flag !== "");
}
