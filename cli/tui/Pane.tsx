/**
 * One agent's pane in the grid: its header, the last transcript lines that fit, and
 * at the bottom the input line or the extension dialog when one is open here.
 */
import { Box } from "ink";
import type { ReactNode } from "react";
import { AgentHeader } from "./AgentHeader.js";
import type { AgentView } from "./state.js";
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

/** The pane. Focus shows as a double border (visible without colour too). */
export function Pane({ agent, width, height, focused, now, slotKey, input, modal }: PaneProps) {
  const theme = useTheme();
  const inner = Math.max(1, width - 4);
  const header = agent.tools.length > 0 ? 3 : 2;
  const bodyHeight = Math.max(0, height - 2 - header - (input ? 1 : 0));
  return (
    <Box
      flexDirection="column"
      width={width}
      height={height}
      borderStyle={focused ? "double" : "round"}
      borderColor={theme.color(focused ? "cyan" : "gray")}
      paddingX={1}
      overflow="hidden"
    >
      <AgentHeader agent={agent} width={inner} now={now} slotKey={slotKey} />
      {modal ?? (
        <Box flexDirection="column" height={bodyHeight} overflow="hidden">
          <TranscriptLines lines={tailLines(agent.lines, agent.open, inner, bodyHeight)} />
        </Box>
      )}
      {input}
    </Box>
  );
}
