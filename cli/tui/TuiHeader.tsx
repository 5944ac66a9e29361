/** The grid's top line: title, agent count, their states, their cost, the page, and the link to the supervisor. */
import { Text } from "ink";
import { memo, useLayoutEffect } from "react";
import { activityCounts } from "../../shared/activity.js";
import { formatCost } from "../../shared/usage.js";
import { fitSpans, type Span } from "./pane-rows.js";
import type { Screen } from "./screen.js";
import { agentActivity, visibleAgents, type TuiState } from "./state.js";
import type { TuiStore } from "./store.js";
import { formatElapsed, truncate } from "./text.js";
import { useTheme } from "./theme.js";

/** Props of TuiHeader. */
export interface TuiHeaderProps {
  state: TuiState;
  title: string;
  page: number;
  pages: number;
  width: number;
  /** How to bring the supervisor back while it is unreachable. */
  hint?: string;
}

/** What the header says for `state`: the bold left part and the link's text and colour. */
function headerParts(state: TuiState, title: string, page: number, pages: number, width: number, hint?: string) {
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
  const agents = shown.length;
  const states = activityCounts(shown.map((a) => agentActivity(a).state));
  const cost = shown.reduce((n, a) => n + a.run.tokens.cost, 0);
  const left = `${title} · ${agents} agent${agents === 1 ? "" : "s"}${states ? ` · ${states}` : ""}${cost > 0 ? ` · ${formatCost(cost)}` : ""}${pages > 1 ? ` · page ${page + 1}/${pages} (PgUp/PgDn)` : ""}`;
  return { left, link: { text: truncate(link.text, Math.max(10, width - left.length - 2)), color: link.color } };
}

/** Title, agent count, their states (`1 waiting for you · 2 working`), their cost, page and the connection to the supervisor. */
export function TuiHeader({ state, title, page, pages, width, hint }: TuiHeaderProps) {
  const theme = useTheme();
  const { left, link } = headerParts(state, title, page, pages, width, hint);
  return (
    <Text wrap="truncate">
      <Text bold>{left}</Text>
      {"  "}
      <Text color={theme.color(link.color)}>{link.text}</Text>
    </Text>
  );
}

/** Props of PaintedHeader: those of TuiHeader but the state, which it reads from the store itself. */
export interface PaintedHeaderProps extends Omit<TuiHeaderProps, "state"> {
  store: TuiStore;
  screen: Screen;
}

// Agent names cannot hold a NUL: no pane's id is the header's.
const HEADER_ID = "\0header";

function PaintedHeaderView({ store, screen, title, page, pages, width, hint }: PaintedHeaderProps) {
  const { enabled: color } = useTheme();
  // With many agents their states change often (each start, tool and end): the screen
  // repaints the header row then, not React and ink the whole frame.
  useLayoutEffect(() => {
    let shown: TuiState | null = null;
    let row = "";
    const paint = () => {
      const state = store.getState();
      const outage = state.connection.state === "disconnected";
      if (
        shown &&
        shown.agents === state.agents &&
        shown.order === state.order &&
        shown.connection === state.connection &&
        (shown.now === state.now || !outage)
      )
        return;
      shown = state;
      const { left, link } = headerParts(state, title, page, pages, width, hint);
      const spans: Span[] = [[left, { bold: true }], ["  "], [link.text, { color: link.color }]];
      const next = fitSpans(spans, width, color);
      if (next === row) return;
      row = next;
      screen.setPane(HEADER_ID, { x: 0, y: 0, rows: [row] });
    };
    paint();
    return store.subscribe(paint);
  }, [store, screen, title, page, pages, width, hint, color]);
  useLayoutEffect(() => () => screen.removePane(HEADER_ID), [screen]);
  return null;
}

/** The header painted by the screen; React renders it only when its title, page or width change. */
export const PaintedHeader = memo(PaintedHeaderView);
