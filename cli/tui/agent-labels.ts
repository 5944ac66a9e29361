/**
 * What a pane's header says of its agent: its status and its state for a person (first
 * line), its model and where it works (second), what it asks or which tool runs (third).
 * Pure but for the home folder.
 */
import { homedir } from "node:os";
import { activityLabel } from "../../shared/activity.js";
import { formatCost } from "../../shared/usage.js";
import { formatTokens } from "./text.js";
import { agentActivity, type AgentView } from "./state.js";
import { spinner, statusColor } from "./theme.js";

/** `⠋ busy`, `● idle · done`, `● busy · waiting for you`, with the colour it is drawn in. */
export function statusLabel(a: AgentView, now: number): { text: string; color: string } {
  const moving = a.status === "busy" || a.status === "starting" || a.status === "stopping";
  const restarts = a.restarts > 0 ? ` ↻${a.restarts}` : "";
  const { state } = agentActivity(a);
  const said = state === "waiting" || state === "done" || (state === "failed" && a.status !== "failed");
  const color = state === "waiting" ? "yellow" : state === "failed" ? "red" : statusColor(a.status);
  return {
    text: `${moving ? spinner(now) : "●"} ${a.status}${said ? ` · ${activityLabel(state)}` : ""}${restarts}`,
    color,
  };
}

/** `? Deploy to production?`: the question an open dialog asks, when the agent waits for you. */
export function askLine(a: AgentView): string | null {
  const activity = agentActivity(a);
  return activity.state === "waiting" ? `? ${activity.message || "a dialog waits for your answer"}` : null;
}

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

/** `1.6k tok $0.0123`: what the agent's runs used as this view saw them; empty before any. */
export function usageLabel(a: AgentView): string {
  const cost = a.run.tokens.cost;
  return [a.tokens > 0 ? `${formatTokens(a.tokens)} tok` : "", cost > 0 ? formatCost(cost) : ""]
    .filter(Boolean)
    .join(" ");
}
