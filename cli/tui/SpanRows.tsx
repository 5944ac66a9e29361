/**
 * Rows of styled spans (pane-rows.ts) rendered by ink: the header and transcript lines of
 * a pane ink draws look as the painted ones, from the same definition.
 */
import { Text } from "ink";
import type { ReactNode } from "react";
import type { Span, Style } from "./pane-rows.js";
import { type Theme, useTheme } from "./theme.js";

/** Props of SpanRows. */
export interface SpanRowsProps {
  rows: readonly (readonly Span[])[];
}

/**
 * The rows. Neighbouring rows of one span in one style are one text block (ink measures,
 * lays out and writes one node instead of one per line; transcript lines are wrapped to
 * the width already); a row on its own is cut at the edge, as the painter cuts it.
 */
export function SpanRows({ rows }: SpanRowsProps) {
  const theme = useTheme();
  const out: ReactNode[] = [];
  for (let i = 0; i < rows.length; ) {
    const row = rows[i]!;
    let j = i + 1;
    if (row.length === 1) while (j < rows.length && rows[j]!.length === 1 && rows[j]![0]![1] === row[0]![1]) j++;
    // An empty text would take no row at all.
    if (j - i === 1 && row.every(([text]) => text === "")) out.push(<Text key={i}> </Text>);
    else if (j - i > 1)
      out.push(
        <Text key={i} {...inkStyle(theme, row[0]![1])}>
          {rows
            .slice(i, j)
            .map((r) => r[0]![0])
            .join("\n")}
        </Text>,
      );
    else
      out.push(
        <Text key={i} wrap="truncate">
          {row.map(([text, style], k) =>
            style ? (
              <Text key={k} {...inkStyle(theme, style)}>
                {text}
              </Text>
            ) : (
              text
            ),
          )}
        </Text>,
      );
    i = j;
  }
  return <>{out}</>;
}

/** A span's style as ink's Text props. */
function inkStyle(theme: Theme, style: Style | undefined) {
  return { color: theme.color(style?.color), bold: style?.bold, dimColor: style?.dim };
}
