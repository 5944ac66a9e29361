/** The grid's top line: title, agent count, their states, their cost, the page, and the link to the supervisor. */
import { Text } from "ink";
import { activityCounts } from "../../shared/activity.js";
import { formatCost } from "../../shared/usage.js";
import { agentActivity, visibleAgents, type TuiState } from "./state.js";
import { formatElapsed, truncate } from "./text.js";
import { useTheme } from "./theme.js";

/** Props of TuiHeader. */
export interface TuiHeaderProps {
  state: TuiState;
  title: string;
  agents: number;
  page: number;
  pages: number;
  width: number;
  /** How to bring the supervisor back while it is unreachable. */
  hint?: string;
}

/** Title, agent count, their states (`1 waiting for you · 2 working`), their cost, page and the connection to the supervisor. */
export function TuiHeader({ state, title, agents, page, pages, width, hint }: TuiHeaderProps) {
  const theme = useTheme();
  const c = state.connection;
  const link =
    c.state === "connected"
      ? { text: "● connected", color: "green" }
      : c.state === "connecting"
        ? { text: "○ connecting…", color: "yellow" }
        : {
            text: `✖ supervisor unreachable for ${formatElapsed(state.now - c.since)}${c.message ? ` (${c.message})` : ""}: reconnecting…${hint ? ` (${hint})` : ""}`,
            color: "red",
          };
  const shown = visibleAgents(state);
  const states = activityCounts(shown.map((a) => agentActivity(a).state));
  const cost = shown.reduce((n, a) => n + a.run.tokens.cost, 0);
  const left = `${title} · ${agents} agent${agents === 1 ? "" : "s"}${states ? ` · ${states}` : ""}${cost > 0 ? ` · ${formatCost(cost)}` : ""}${pages > 1 ? ` · page ${page + 1}/${pages} (PgUp/PgDn)` : ""}`;
  return (
    <Text wrap="truncate">
      <Text bold>{left}</Text>
      {"  "}
      <Text color={theme.color(link.color)}>{truncate(link.text, Math.max(10, width - left.length - 2))}</Text>
    </Text>
  );
}
