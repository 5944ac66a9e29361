/** A scrollable text overlay for a worktree agent's diff: `+` lines green, `-` red. */
import { Box, Text } from "ink";
import { truncate } from "./text.js";
import { useTheme } from "./theme.js";

/** Props of DiffView. */
export interface DiffViewProps {
  title: string;
  text: string;
  width: number;
  height: number;
  /** First line shown. */
  top: number;
}

/** The diff. */
export function DiffView({ title, text, width, height, top }: DiffViewProps) {
  const theme = useTheme();
  const lines = text.split("\n");
  const bodyHeight = Math.max(1, height - 4);
  const start = Math.min(top, Math.max(0, lines.length - bodyHeight));
  const color = (l: string) =>
    l.startsWith("+") && !l.startsWith("+++")
      ? "green"
      : l.startsWith("-") && !l.startsWith("---")
        ? "red"
        : l.startsWith("@@")
          ? "cyan"
          : undefined;
  return (
    <Box
      flexDirection="column"
      width={width}
      height={height}
      borderStyle="round"
      borderColor={theme.color("cyan")}
      paddingX={1}
    >
      <Text bold wrap="truncate">
        {title}
      </Text>
      <Box flexDirection="column" height={bodyHeight} overflow="hidden">
        {lines.slice(start, start + bodyHeight).map((l, i) => (
          <Text key={i} wrap="truncate" color={theme.color(color(l))}>
            {truncate(l, width - 4) || " "}
          </Text>
        ))}
      </Box>
      <Text dimColor>
        lines {start + 1}-{Math.min(lines.length, start + bodyHeight)} of {lines.length} · ↑↓ PgUp PgDn scroll · Esc
        close
      </Text>
    </Box>
  );
}
