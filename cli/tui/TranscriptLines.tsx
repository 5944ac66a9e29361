/** Drawn transcript lines, each in its kind's colour (used by Pane and ZoomView). */
import { Text } from "ink";
import type { DrawnLine } from "./text.js";
import { lineColor, useTheme } from "./theme.js";

const DIM: ReadonlySet<string> = new Set(["thinking", "result", "notice"]);

/** Props of TranscriptLines. */
export interface TranscriptLinesProps {
  lines: DrawnLine[];
}

/** The lines, already wrapped to the width. */
export function TranscriptLines({ lines }: TranscriptLinesProps) {
  const theme = useTheme();
  return (
    <>
      {lines.map((l, i) => (
        <Text key={i} wrap="truncate" color={theme.color(lineColor(l.kind))} bold={l.kind === "user"} dimColor={DIM.has(l.kind)}>
          {l.text === "" ? " " : l.text}
        </Text>
      ))}
    </>
  );
}
