/**
 * What to do about a project whose `.pi/` files were skipped for want of trust. A fleet
 * agent's worker (its environment names the agent) is started by `pi-orch spawn`, which
 * has no `--trust`: the way there is `spawn --approve`. Pure.
 */
import { AGENT_VAR } from "../../shared/proc.js";

/** `run with --trust to allow it, …`, or the `pi-orch spawn --approve` advice for a fleet agent. */
export function trustHint(env: NodeJS.ProcessEnv): string {
  const agent = env[AGENT_VAR];
  return agent
    ? `to allow it, spawn the agent again with pi-orch spawn --approve (pi-orch rm ${agent} first)`
    : "run with --trust to allow it, or --approve for this run only";
}
