/** The diff of a worktree agent for the `d` overlay: a diffstat, then the patch. */
import { diffWorktree } from "../../supervisor/worktrees.js";
import type { AgentView } from "./state.js";

/** The agent's changes against the commit its branch started from (untracked files included). */
export async function worktreeDiff(agent: AgentView): Promise<string> {
  if (!agent.worktree) throw new Error(`agent "${agent.name}" has no worktree`);
  const [stat, patch] = await Promise.all([diffWorktree(agent.worktree, { stat: true }), diffWorktree(agent.worktree)]);
  return [stat.trimEnd(), patch.trimEnd()].filter(Boolean).join("\n\n");
}
