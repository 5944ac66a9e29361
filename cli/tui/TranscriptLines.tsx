/** Drawn transcript lines, each in its kind's colour (used by Pane and ZoomView). */
import { Text } from "ink";
import type { ReactNode } from "react";
import type { DrawnLine } from "./text.js";
import { lineColor, useTheme } from "./theme.js";

const DIM: ReadonlySet<string> = new Set(["thinking", "result", "notice"]);

/** Props of TranscriptLines. */
export interface TranscriptLinesProps {
  lines: DrawnLine[];
}

/**
 * The lines, already wrapped to the width, as one text block: ink measures, lays out
 * and writes one node instead of one per line. Neighbouring lines of a kind share one
 * styled span; the line breaks between spans stay unstyled.
 */
export function TranscriptLines({ lines }: TranscriptLinesProps) {
  const theme = useTheme();
  const spans: ReactNode[] = [];
  for (let i = 0; i < lines.length; ) {
    const kind = lines[i]!.kind;
    let j = i;
    while (j < lines.length && lines[j]!.kind === kind) j++;
    const text = lines
      .slice(i, j)
      .map((l) => l.text)
      .join("\n");
    if (i > 0) spans.push("\n");
    spans.push(
      <Text key={i} color={theme.color(lineColor(kind))} bold={kind === "user"} dimColor={DIM.has(kind)}>
        {text}
      </Text>,
    );
    i = j;
  }
  return <Text>{spans}</Text>;
}
