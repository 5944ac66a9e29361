/** How many files each worktree agent changed, for `list` (git runs for each, in parallel). */
import type { AgentInfo } from "../../shared/schema/agent.js";

/** Agent name → number of changed files; null when the worktree cannot be read (deleted by hand). */
export async function worktreeChangeCounts(agents: readonly AgentInfo[]): Promise<Map<string, number | null>> {
  if (!agents.some((a) => a.worktree)) return new Map();
  // Only a fleet with worktrees runs git: the worktree module and execa (~25 ms to load) wait for one.
  const { changedFiles } = await import("../../supervisor/worktrees.js");
  const entries = await Promise.all(
    agents
      .filter((a) => a.worktree)
      .map(async (a): Promise<[string, number | null]> => {
        try {
          return [a.name, (await changedFiles(a.worktree!)).length];
        } catch {
          return [a.name, null];
        }
      }),
  );
  return new Map(entries);
}
