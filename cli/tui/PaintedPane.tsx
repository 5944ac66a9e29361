/**
 * A grid pane (and the zoomed transcript's body, and the list overview) the screen paints (see `screen.ts`): ink keeps its box blank and lays it
 * out. The pane listens to the store itself and repaints when its agent (or, while it
 * ticks, the clock) changes, without a React render: ink's frame stays as it was.
 */
import { memo, useLayoutEffect } from "react";
import { fitSpans, listRows, paneRows, transcriptRows } from "./pane-rows.js";
import type { Screen } from "./screen.js";
import { clockMoves, queuedLine, type AgentView } from "./state.js";
import type { TuiStore } from "./store.js";
import { tailLines } from "./text.js";
import { useTheme } from "./theme.js";

/** Where a painted block stands and whose agent it shows. */
interface PaintedPlace {
  store: TuiStore;
  screen: Screen;
  name: string;
  /** Screen cell of the block's top-left corner. */
  x: number;
  y: number;
  width: number;
  height: number;
}

/** What was painted last. */
type Shown = { agent: AgentView; now: number };

/**
 * Paint `rows` of the agent as screen block `id` at the place, again on every store
 * change after which `stale` says the rows shown are out of date, and remove the block on
 * unmount. `deps` are what `rows` and `stale` read besides the agent and the clock.
 */
function usePaintedRows(
  place: PaintedPlace,
  id: string,
  rows: (agent: AgentView, now: number) => string[],
  stale: (shown: Shown, agent: AgentView, now: number) => boolean,
  deps: unknown[],
): void {
  const { store, screen, name, x, y, width, height } = place;
  // biome-ignore lint/correctness/useExhaustiveDependencies: `rows` and `stale` are new every render; what they read is in `deps`, and a new size must repaint
  useLayoutEffect(() => {
    let shown: Shown | null = null;
    const paint = () => {
      const { agents, now } = store.getState();
      const agent = agents[name];
      if (!agent || (shown && !stale(shown, agent, now))) return;
      shown = { agent, now };
      screen.setPane(id, { x, y, rows: rows(agent, now) });
    };
    paint();
    return store.subscribe(paint);
  }, [store, screen, id, name, x, y, width, height, ...deps]);
  useLayoutEffect(() => () => screen.removePane(id), [screen, id]);
}

/** Props of PaintedPane: those of `Pane` without input or dialog, plus where it is on the screen. */
export interface PaintedPaneProps extends PaintedPlace {
  focused: boolean;
  slotKey?: number;
}

function PaintedPaneView(props: PaintedPaneProps) {
  const { name, width, height, focused, slotKey } = props;
  const { enabled: color } = useTheme();
  usePaintedRows(
    props,
    name,
    (agent, now) => paneRows({ agent, width, height, focused, now, slotKey, color }),
    // The same agent is painted again only for its clock (a spinner, a tool's elapsed time).
    (shown, agent, now) => shown.agent !== agent || (shown.now !== now && clockMoves(agent)),
    [focused, slotKey, color],
  );
  return null;
}

/** The pane; React renders it only when its place, size or focus changes. */
export const PaintedPane = memo(PaintedPaneView);

/** Props of PaintedLines: the zoomed transcript's body, painted at a screen position. */
export interface PaintedLinesProps extends PaintedPlace {
  /** Lines scrolled up from the bottom, already clamped. */
  fromBottom: number;
  /** Lines a tool result keeps. */
  resultLines: number;
  /** Thinking blocks as one line each. */
  hideThinking?: boolean;
}

function PaintedLinesView(props: PaintedLinesProps) {
  const { name, width, height, fromBottom, resultLines, hideThinking = false } = props;
  const { enabled: color } = useTheme();
  usePaintedRows(
    props,
    `${name}\0lines`,
    (agent) => {
      const lines = tailLines(agent.lines, agent.open, width, height, {
        fromBottom,
        resultLines,
        last: queuedLine(agent),
        hideThinking,
      });
      const rows = transcriptRows(lines, width, color);
      while (rows.length < height) rows.push(" ".repeat(width));
      return rows;
    },
    (shown, agent) => shown.agent !== agent,
    [fromBottom, resultLines, hideThinking, color],
  );
  return null;
}

/** The zoomed transcript's body; React renders it only when its place, size or scroll changes. */
export const PaintedLines = memo(PaintedLinesView);

/** Props of PaintedList: the list overview's rows for these agents, painted at a screen position. */
export interface PaintedListProps {
  store: TuiStore;
  screen: Screen;
  /** The agents listed, in order (one page). */
  names: readonly string[];
  focus: string | null;
  x: number;
  y: number;
  width: number;
  height: number;
}

function PaintedListView({ store, screen, names, focus, x, y, width, height }: PaintedListProps) {
  const { enabled: color } = useTheme();
  // biome-ignore lint/correctness/useExhaustiveDependencies: `names` is compared by its contents (a new array every render)
  useLayoutEffect(() => {
    let shown: { agents: (AgentView | undefined)[]; now: number } | null = null;
    const paint = () => {
      const { agents: all, now } = store.getState();
      const agents = names.map((n) => all[n]);
      // Repainted when a listed agent changed, or for the clock of one whose row moves with it.
      const stale =
        !shown ||
        agents.some((a, i) => a !== shown!.agents[i]) ||
        (shown.now !== now && agents.some((a) => a !== undefined && clockMoves(a)));
      if (!stale) return;
      shown = { agents, now };
      const rows = listRows(
        agents.filter((a) => a !== undefined),
        width,
        now,
        focus,
      ).map((spans) => fitSpans(spans, width, color));
      screen.setPane(LIST_ID, { x, y, rows: rows.slice(0, height) });
    };
    paint();
    return store.subscribe(paint);
  }, [store, screen, names.join("\0"), focus, x, y, width, height, color]);
  useLayoutEffect(() => () => screen.removePane(LIST_ID), [screen]);
  return null;
}

// Agent names cannot hold a NUL: no pane's id is the list's.
const LIST_ID = "\0list";

/** The list overview; React renders it only when its agents, focus, place or size change. */
export const PaintedList = memo(PaintedListView, (a, b) => {
  const { names: an, ...ar } = a;
  const { names: bn, ...br } = b;
  return an.join("\0") === bn.join("\0") && (Object.keys(ar) as (keyof typeof ar)[]).every((k) => ar[k] === br[k]);
});
