/**
 * One agent's pane in the grid: its header, the last transcript lines that fit, and
 * at the bottom the input line or the extension dialog when one is open here.
 */
import { Box } from "ink";
import { memo, type ReactNode } from "react";
import { headerSpans, paneBorder, transcriptSpans, type PaneRowsInput, type Span } from "./pane-rows.js";
import { SpanRows } from "./SpanRows.js";
import { clockMoves, queuedLine } from "./state.js";
import { tailLines } from "./text.js";
import { useTheme } from "./theme.js";

/** Props of Pane: what its rows are made of (pane-rows.ts), and what ink draws in it. */
export interface PaneProps extends Omit<PaneRowsInput, "color"> {
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
  const inner = Math.max(1, width - 4);
  const header = headerSpans(agent, inner, now, slotKey);
  const bodyHeight = Math.max(0, height - 2 - header.length - (input ? 1 : 0));
  return (
    <PaneFrame width={width} height={height} focused={focused} header={header} bodyHeight={bodyHeight} modal={modal}>
      <SpanRows
        rows={transcriptSpans(tailLines(agent.lines, agent.open, inner, bodyHeight, { last: queuedLine(agent) }))}
      />
      {input}
    </PaneFrame>
  );
}

/**
 * The frame of a pane, in the grid or zoomed: the border (double when focused), the header
 * rows, then the dialog if one is open, else the body clipped to `bodyHeight`; `footer`
 * (the input line, or the zoom's hints) below.
 */
export function PaneFrame({
  width,
  height,
  focused,
  header,
  bodyHeight,
  modal,
  children: [body, footer],
}: {
  width: number;
  height: number;
  focused: boolean;
  header: readonly (readonly Span[])[];
  bodyHeight: number;
  modal?: ReactNode;
  children: [ReactNode, ReactNode];
}) {
  const theme = useTheme();
  const border = paneBorder(focused);
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
        <Box flexDirection="column" height={bodyHeight} overflow="hidden">
          {body}
        </Box>
      )}
      {footer}
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
