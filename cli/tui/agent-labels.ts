/** What a pane's second header line names: the agent's model and where it works. Pure but for the home folder. */
import { homedir } from "node:os";
import type { AgentView } from "./state.js";

/** `faux/faux-1`, the model alone, or `default model`. */
export function modelLabel(a: AgentView): string {
  if (a.provider && a.model) return a.model.includes("/") ? a.model : `${a.provider}/${a.model}`;
  return a.model ?? a.provider ?? "default model";
}

/** `⎇ pi-orch/fix` for a worktree agent, else its cwd with `~`. */
export function placeLabel(a: AgentView): string {
  if (a.worktree) return `⎇ ${a.worktree.branch}`;
  const home = homedir();
  return home && a.cwd.startsWith(`${home}/`) ? `~${a.cwd.slice(home.length)}` : a.cwd || "-";
}
