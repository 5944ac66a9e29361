/**
 * A grid pane the screen paints (see `screen.ts`): ink keeps its box blank and lays it
 * out; the pane's rows are made once per change of what it shows and handed to the screen.
 */
import { memo, useLayoutEffect, useMemo } from "react";
import { paneRows } from "./pane-rows.js";
import type { Screen } from "./screen.js";
import { clockMoves, type AgentView } from "./state.js";
import { useTheme } from "./theme.js";

/** Props of PaintedPane: those of `Pane` without input or dialog, plus where it is on the screen. */
export interface PaintedPaneProps {
  screen: Screen;
  agent: AgentView;
  /** Screen cell of the pane's top-left corner. */
  x: number;
  y: number;
  width: number;
  height: number;
  focused: boolean;
  now: number;
  slotKey?: number;
}

function PaintedPaneView({ screen, agent, x, y, width, height, focused, now, slotKey }: PaintedPaneProps) {
  const { enabled: color } = useTheme();
  const rows = useMemo(() => paneRows({ agent, width, height, focused, now, slotKey, color }), [agent, width, height, focused, now, slotKey, color]);
  useLayoutEffect(() => screen.setPane(agent.name, { x, y, rows }), [screen, agent.name, x, y, rows]);
  useLayoutEffect(() => () => screen.removePane(agent.name), [screen, agent.name]);
  return null;
}

/** The pane, repainted only when its agent, place, size or focus changed, or its clock moves. */
export const PaintedPane = memo(
  PaintedPaneView,
  (a, b) =>
    a.screen === b.screen &&
    a.agent === b.agent &&
    a.x === b.x &&
    a.y === b.y &&
    a.width === b.width &&
    a.height === b.height &&
    a.focused === b.focused &&
    a.slotKey === b.slotKey &&
    (a.now === b.now || !clockMoves(b.agent)),
);
