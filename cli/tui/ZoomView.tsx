/**
 * One agent full screen: the header, the whole transcript (messages, tool calls, and
 * results collapsed to three lines) scrolled by `scroll` lines from the bottom, and a
 * footer with the input line, the dialog or the key hints.
 */
import { Text } from "ink";
import type { ReactNode } from "react";
import { PaintedLines } from "./PaintedPane.js";
import { PaneFrame } from "./Pane.js";
import { headerSpans, transcriptSpans } from "./pane-rows.js";
import type { Screen } from "./screen.js";
import { queuedLine, type AgentView } from "./state.js";
import type { TuiStore } from "./store.js";
import { tailLines } from "./text.js";
import { SpanRows } from "./SpanRows.js";

/** Lines a tool result keeps in the zoomed transcript. */
const RESULT_LINES = 3;

/** Props of ZoomView. */
export interface ZoomViewProps {
  agent: AgentView;
  width: number;
  height: number;
  now: number;
  /** Lines scrolled up from the bottom (0 follows the stream). */
  scroll: number;
  /** Receives the largest useful `scroll` at this size, so key handlers can clamp. */
  onScrollMax?: (max: number) => void;
  input?: ReactNode;
  /** Rows the input takes (1 unless completions list above it). */
  inputRows?: number;
  /** Lines a tool result keeps (default 3; Ctrl+O expands them). */
  resultLines?: number;
  /** Thinking blocks as one line each (Ctrl+T). */
  hideThinking?: boolean;
  modal?: ReactNode;
  hint: string;
  /** Paint the transcript body on this screen (from this store), the view's top-left corner at `top` rows down. */
  painted?: { store: TuiStore; screen: Screen; top: number };
}

/** The zoomed view. */
export function ZoomView({
  agent,
  width,
  height,
  now,
  scroll,
  onScrollMax,
  input,
  inputRows = 1,
  resultLines = RESULT_LINES,
  hideThinking = false,
  modal,
  hint,
  painted,
}: ZoomViewProps) {
  const inner = Math.max(1, width - 4);
  const header = headerSpans(agent, inner, now);
  const bodyHeight = Math.max(1, height - 2 - header.length - (input ? inputRows : 1));
  const all = tailLines(agent.lines, agent.open, inner, Number.MAX_SAFE_INTEGER, {
    resultLines,
    last: queuedLine(agent),
    hideThinking,
  });
  const max = Math.max(0, all.length - bodyHeight);
  onScrollMax?.(max);
  const offset = Math.min(scroll, max);
  // Painted, the body is blank here; the screen draws it at the border + padding, below the header lines.
  const body = painted ? (
    <PaintedLines
      store={painted.store}
      screen={painted.screen}
      name={agent.name}
      x={2}
      y={painted.top + 1 + header.length}
      width={inner}
      height={bodyHeight}
      fromBottom={offset}
      resultLines={resultLines}
      hideThinking={hideThinking}
    />
  ) : (
    <SpanRows rows={transcriptSpans(all.slice(Math.max(0, all.length - bodyHeight - offset), all.length - offset))} />
  );
  return (
    <PaneFrame width={width} height={height} focused header={header} bodyHeight={bodyHeight} modal={modal}>
      {body}
      {input ?? (
        <Text wrap="truncate" dimColor>
          {offset > 0 ? `↓ ${offset} more below · ` : max > 0 ? `↑ ${max} earlier · ` : ""}
          {hint}
        </Text>
      )}
    </PaneFrame>
  );
}
