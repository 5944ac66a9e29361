/**
 * A grid pane (and the zoomed transcript's body) the screen paints (see `screen.ts`): ink keeps its box blank and lays it
 * out. The pane listens to the store itself and repaints when its agent (or, while it
 * ticks, the clock) changes, without a React render: ink's frame stays as it was.
 */
import { memo, useLayoutEffect } from "react";
import { paneRows, transcriptRows } from "./pane-rows.js";
import type { Screen } from "./screen.js";
import { clockMoves, type AgentView } from "./state.js";
import type { TuiStore } from "./store.js";
import { tailLines } from "./text.js";
import { useTheme } from "./theme.js";

/** Props of PaintedPane: those of `Pane` without input or dialog, plus where it is on the screen. */
export interface PaintedPaneProps {
  store: TuiStore;
  screen: Screen;
  name: string;
  /** Screen cell of the pane's top-left corner. */
  x: number;
  y: number;
  width: number;
  height: number;
  focused: boolean;
  slotKey?: number;
}

function PaintedPaneView({ store, screen, name, x, y, width, height, focused, slotKey }: PaintedPaneProps) {
  const { enabled: color } = useTheme();
  useLayoutEffect(() => {
    let shown: { agent: AgentView; now: number } | null = null;
    const paint = () => {
      const { agents, now } = store.getState();
      const agent = agents[name];
      if (!agent) return;
      if (shown && shown.agent === agent && (shown.now === now || !clockMoves(agent))) return;
      shown = { agent, now };
      screen.setPane(name, { x, y, rows: paneRows({ agent, width, height, focused, now, slotKey, color }) });
    };
    paint();
    return store.subscribe(paint);
  }, [store, screen, name, x, y, width, height, focused, slotKey, color]);
  useLayoutEffect(() => () => screen.removePane(name), [screen, name]);
  return null;
}

/** The pane; React renders it only when its place, size or focus changes. */
export const PaintedPane = memo(PaintedPaneView);

/** Props of PaintedLines: the zoomed transcript's body, painted at a screen position. */
export interface PaintedLinesProps {
  store: TuiStore;
  screen: Screen;
  name: string;
  x: number;
  y: number;
  width: number;
  height: number;
  /** Lines scrolled up from the bottom, already clamped. */
  fromBottom: number;
  /** Lines a tool result keeps. */
  resultLines: number;
}

function PaintedLinesView({ store, screen, name, x, y, width, height, fromBottom, resultLines }: PaintedLinesProps) {
  const { enabled: color } = useTheme();
  const id = `${name}\0lines`;
  useLayoutEffect(() => {
    let shown: AgentView | null = null;
    const paint = () => {
      const agent = store.getState().agents[name];
      if (!agent || agent === shown) return;
      shown = agent;
      const lines = tailLines(agent.lines, agent.open, width, height, { fromBottom, resultLines });
      const rows = transcriptRows(lines, width, color);
      while (rows.length < height) rows.push(" ".repeat(width));
      screen.setPane(id, { x, y, rows });
    };
    paint();
    return store.subscribe(paint);
  }, [store, screen, id, name, x, y, width, height, fromBottom, resultLines, color]);
  useLayoutEffect(() => () => screen.removePane(id), [screen, id]);
  return null;
}

/** The zoomed transcript's body; React renders it only when its place, size or scroll changes. */
export const PaintedLines = memo(PaintedLinesView);
