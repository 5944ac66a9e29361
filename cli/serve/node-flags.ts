/**
 * The node flags a supervisor is started with when pi-orch starts it (a command's
 * auto-start, `pi-orch demo`). A young generation of at most 2 MB per semi-space
 * (node's default grows to 16 MB) keeps each scavenge short: the supervisor holds
 * every agent's recent events for `since` replays, so most of what it allocates
 * survives a scavenge, and a pause grows with what survived since the last one. At
 * 10,000 events/s the default made 2–3 scavenges a second of 1–4 ms each, and a pause
 * lands in the routing latency of every event that arrives meanwhile; with 2 MB there
 * are about 13 a second of ~0.5 ms (median), for ~10 % more of the supervisor's CPU.
 * And each scavenge on the main thread alone: a parallel one hands parts of the work to
 * V8's helper threads and waits for all of them, so on a machine whose other cores are
 * busy (the agents' workers, other sessions) one helper that is preempted holds the
 * routing up until it runs again. At 20,000 events/s, 2 cores, other sessions keeping
 * 1.3 of them busy, p99 over the bare relay's in 9 interleaved rounds: median 0.90×
 * without parallel scavenges against 2.3× with them, lower in 8 of the 9 rounds, for the
 * same CPU (bench/supervisor.ts; issue 30).
 */

/** The flags used when `PI_ORCH_SUPERVISOR_NODE_FLAGS` is not set. */
export const DEFAULT_SUPERVISOR_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=2", "--no-parallel-scavenge"];

/**
 * Node flags for a supervisor pi-orch starts: `PI_ORCH_SUPERVISOR_NODE_FLAGS` (flags
 * separated by spaces; empty for node's defaults) when set, else the default. Pure.
 */
export function supervisorNodeFlags(env: NodeJS.ProcessEnv = process.env): string[] {
  const text = env.PI_ORCH_SUPERVISOR_NODE_FLAGS;
  if (text === undefined) return [...DEFAULT_SUPERVISOR_NODE_FLAGS];
  return text.split(/\s+/).filter((flag) => flag !== "");
}

/**
 * Why `PI_ORCH_SUPERVISOR_NODE_FLAGS` cannot be given to node, or null. A word without
 * a leading `-` would be node's script (`2`), or the value of a flag written with a
 * space (`--max-semi-space-size 2`), which shifts pi-orch's own arguments into node's
 * and fails with a message about something else; refused before anything starts. Pure.
 */
export function nodeFlagsProblem(env: NodeJS.ProcessEnv = process.env): string | null {
  const stray = supervisorNodeFlags(env).find((flag) => !flag.startsWith("-"));
  if (stray === undefined) return null;
  return (
    `PI_ORCH_SUPERVISOR_NODE_FLAGS=${JSON.stringify(env.PI_ORCH_SUPERVISOR_NODE_FLAGS)} has ${JSON.stringify(stray)}, which is not a node flag: ` +
    `write each flag with its leading "-" and its value after "=" (--max-semi-space-size=2), or unset the variable for the default`
  );
}

/**
 * What to add to the message of a supervisor that exited before it answered: the
 * flags it was started with came from the variable, which is the likely cause ("" when
 * the variable is not set). Pure.
 */
export function nodeFlagsHint(env: NodeJS.ProcessEnv = process.env): string {
  const text = env.PI_ORCH_SUPERVISOR_NODE_FLAGS;
  if (text === undefined) return "";
  return `; it was started with node flags from PI_ORCH_SUPERVISOR_NODE_FLAGS=${JSON.stringify(text)}: fix or unset it`;
}
