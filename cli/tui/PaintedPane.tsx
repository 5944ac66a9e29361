/**
 * A grid pane the screen paints (see `screen.ts`): ink keeps its box blank and lays it
 * out. The pane listens to the store itself and repaints when its agent (or, while it
 * ticks, the clock) changes, without a React render: ink's frame stays as it was.
 */
import { memo, useLayoutEffect } from "react";
import { paneRows } from "./pane-rows.js";
import type { Screen } from "./screen.js";
import { clockMoves, type AgentView } from "./state.js";
import type { TuiStore } from "./store.js";
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
