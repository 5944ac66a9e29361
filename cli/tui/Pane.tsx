/**
 * One agent's pane in the grid: its header, the last transcript lines that fit, and
 * at the bottom the input line or the extension dialog when one is open here.
 */
import { Box } from "ink";
import { memo, type ReactNode } from "react";
import { AgentHeader } from "./AgentHeader.js";
import { headerLineCount } from "./agent-labels.js";
import { clockMoves, queuedLine, type AgentView } from "./state.js";
import { tailLines } from "./text.js";
import { TranscriptLines } from "./TranscriptLines.js";
import { useTheme } from "./theme.js";

/** Props of Pane. */
export interface PaneProps {
  agent: AgentView;
  width: number;
  height: number;
  focused: boolean;
  now: number;
  slotKey?: number;
  /** The input line (prompt/steer/follow-up), drawn at the bottom. */
  input?: ReactNode;
  /** A dialog modal, drawn instead of the transcript. */
  modal?: ReactNode;
}

/**
 * The pane. Focus shows as a double border (visible without colour too). Its text is
 * cut to the width already, so it clips only vertically: ink slices every line of a
 * horizontally clipped box, which was most of a frame's cost.
 */
function PaneView({ agent, width, height, focused, now, slotKey, input, modal }: PaneProps) {
  const theme = useTheme();
  const inner = Math.max(1, width - 4);
  const header = headerLineCount(agent);
  const bodyHeight = Math.max(0, height - 2 - header - (input ? 1 : 0));
  return (
    <Box
      flexDirection="column"
      width={width}
      height={height}
      borderStyle={focused ? "double" : "round"}
      borderColor={theme.color(focused ? "cyan" : "gray")}
      paddingX={1}
      overflowY="hidden"
    >
      <AgentHeader agent={agent} width={inner} now={now} slotKey={slotKey} />
      {modal ?? (
        <Box flexDirection="column" height={bodyHeight} overflowY="hidden">
          <TranscriptLines lines={tailLines(agent.lines, agent.open, inner, bodyHeight, { last: queuedLine(agent) })} />
        </Box>
      )}
      {input}
    </Box>
  );
}

/** The pane, redrawn only when its agent, size, focus, input or dialog changed, or its clock moves. */
export const Pane = memo(
  PaneView,
  (a, b) =>
    a.agent === b.agent &&
    a.width === b.width &&
    a.height === b.height &&
    a.focused === b.focused &&
    a.slotKey === b.slotKey &&
    a.input === b.input &&
    a.modal === b.modal &&
    (a.now === b.now || !clockMoves(b.agent)),
);
