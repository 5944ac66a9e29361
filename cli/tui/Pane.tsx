/**
 * One agent's pane in the grid: its header, the last transcript lines that fit, and
 * at the bottom the input line or the extension dialog when one is open here.
 */
import { Box } from "ink";
import { memo, type ReactNode } from "react";
import { headerSpans, paneBorder, transcriptSpans } from "./pane-rows.js";
import { SpanRows } from "./SpanRows.js";
import { clockMoves, queuedLine, type AgentView } from "./state.js";
import { tailLines } from "./text.js";
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
 * The pane, as pane-rows.ts defines it. Its text is cut to the width already, so it
 * clips only vertically: ink slices every line of a horizontally clipped box, which was
 * most of a frame's cost.
 */
function PaneView({ agent, width, height, focused, now, slotKey, input, modal }: PaneProps) {
  const theme = useTheme();
  const inner = Math.max(1, width - 4);
  const header = headerSpans(agent, inner, now, slotKey);
  const border = paneBorder(focused);
  const bodyHeight = Math.max(0, height - 2 - header.length - (input ? 1 : 0));
  return (
    <Box
      flexDirection="column"
      width={width}
      height={height}
      borderStyle={border.ink}
      borderColor={theme.color(border.color)}
      paddingX={1}
      overflowY="hidden"
    >
      <SpanRows rows={header} />
      {modal ?? (
        <Box flexDirection="column" height={bodyHeight} overflowY="hidden">
          <SpanRows
            rows={transcriptSpans(tailLines(agent.lines, agent.open, inner, bodyHeight, { last: queuedLine(agent) }))}
          />
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
