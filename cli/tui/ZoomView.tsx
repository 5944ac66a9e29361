/**
 * One agent full screen: the header, the whole transcript (messages, tool calls, and
 * results collapsed to three lines) scrolled by `scroll` lines from the bottom, and a
 * footer with the input line, the dialog or the key hints.
 */
import { Box, Text } from "ink";
import type { ReactNode } from "react";
import { AgentHeader } from "./AgentHeader.js";
import type { AgentView } from "./state.js";
import { tailLines } from "./text.js";
import { TranscriptLines } from "./TranscriptLines.js";
import { useTheme } from "./theme.js";

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
  modal?: ReactNode;
  hint: string;
}

/** The zoomed view. */
export function ZoomView({ agent, width, height, now, scroll, onScrollMax, input, modal, hint }: ZoomViewProps) {
  const theme = useTheme();
  const inner = Math.max(1, width - 4);
  const header = agent.tools.length > 0 ? 3 : 2;
  const bodyHeight = Math.max(1, height - 2 - header - 1);
  const all = tailLines(agent.lines, agent.open, inner, Number.MAX_SAFE_INTEGER, { resultLines: RESULT_LINES });
  const max = Math.max(0, all.length - bodyHeight);
  onScrollMax?.(max);
  const offset = Math.min(scroll, max);
  const shown = all.slice(Math.max(0, all.length - bodyHeight - offset), all.length - offset);
  return (
    <Box flexDirection="column" width={width} height={height} borderStyle="double" borderColor={theme.color("cyan")} paddingX={1}>
      <AgentHeader agent={agent} width={inner} now={now} />
      {modal ?? (
        <Box flexDirection="column" height={bodyHeight} overflow="hidden">
          <TranscriptLines lines={shown} />
        </Box>
      )}
      {input ?? (
        <Text wrap="truncate" dimColor>
          {offset > 0 ? `↓ ${offset} more below · ` : max > 0 ? `↑ ${max} earlier · ` : ""}
          {hint}
        </Text>
      )}
    </Box>
  );
}
