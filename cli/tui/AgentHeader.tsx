/**
 * The header lines of an agent, shared by Pane and ZoomView: name, status (with a
 * spinner while busy) and its state for a person, restarts and tokens; then model,
 * branch or cwd; then the question it waits on, or the running tool with its argument
 * summary and elapsed time.
 */
import { Text } from "ink";
import { askLine, modelLabel, placeLabel, statusLabel, usageLabel } from "./agent-labels.js";
import type { AgentView } from "./state.js";
import { formatElapsed, truncate } from "./text.js";
import { useTheme } from "./theme.js";

/** Props of AgentHeader. */
export interface AgentHeaderProps {
  agent: AgentView;
  width: number;
  now: number;
  /** The number key that focuses this pane (1–9), if any. */
  slotKey?: number;
}

/** The header lines. */
export function AgentHeader({ agent: a, width, now, slotKey }: AgentHeaderProps) {
  const theme = useTheme();
  const tokens = usageLabel(a);
  const left = `${slotKey !== undefined ? `${slotKey} ` : ""}${a.name}`;
  const status = statusLabel(a, now);
  const gap = Math.max(1, width - left.length - 2 - status.text.length - tokens.length);
  const tool = a.tools[a.tools.length - 1];
  const asks = askLine(a);
  const meta = `${modelLabel(a)} · ${placeLabel(a)}`;
  return (
    <>
      <Text wrap="truncate">
        <Text bold>{truncate(left, Math.max(4, width - status.text.length - 3))}</Text>
        {"  "}
        <Text color={theme.color(status.color)}>{status.text}</Text>
        {tokens ? " ".repeat(gap) : ""}
        <Text dimColor>{tokens}</Text>
      </Text>
      <Text wrap="truncate" dimColor>
        {truncate(meta, width)}
      </Text>
      {asks ? (
        <Text wrap="truncate" color={theme.color("yellow")}>
          {truncate(asks, width)}
        </Text>
      ) : tool ? (
        <Text wrap="truncate" color={theme.color("magenta")}>
          {truncate(`⏺ ${tool.name} ${tool.summary}`, Math.max(4, width - 8))}{" "}
          <Text dimColor>{formatElapsed(now - tool.startedAt)}</Text>
        </Text>
      ) : null}
    </>
  );
}
