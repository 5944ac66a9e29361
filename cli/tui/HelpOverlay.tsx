/** The key map, as `?` shows it (and as the README lists it). */
import { Box, Text } from "ink";
import { useTheme } from "./theme.js";

/** Every key of the multi-pane TUI and what it does. */
export const KEY_MAP: readonly (readonly [string, string])[] = [
  ["←↑↓→ Tab 1–9", "move focus (1–9: the panes of this page); PgUp/PgDn change page"],
  ["Enter", "zoom the focused agent: full screen, scrollable transcript (↑↓ PgUp PgDn Home End)"],
  ["Esc", "back to the grid (or close an input, form or overlay)"],
  ["p / s / f", "prompt / steer / follow-up (a busy agent): an input line opens in the pane"],
  ["a", "abort the running turn"],
  ["x / r", "stop / restart the agent (y confirms)"],
  ["n", "new agent: name, cwd, worktree yes/no, first prompt"],
  ["d", "diff of a worktree agent's changes"],
  ["?", "this help"],
  ["Ctrl+L", "redraw the screen (when other output got onto it)"],
  ["q  Ctrl+C", "quit the TUI (the agents keep running)"],
];

/** Keys of the single-agent mode (`pi` on a terminal). */
export const SINGLE_KEY_MAP: readonly (readonly [string, string])[] = [
  ["Enter", "send the prompt; while the agent runs: steer it"],
  ["Tab  Alt+Enter", "while the agent runs: send as a follow-up instead (Tab after /x completes it)"],
  ["Esc", "abort the running turn (twice on an idle agent: /tree)"],
  ["↑↓ PgUp PgDn", "scroll the transcript"],
  ["/", "the built-in and extension commands (/model /new /resume /tree /compact /quit ...)"],
  ["!cmd  !!cmd", "run a command: its output to the model, or kept out of its context"],
  ["Ctrl+L / Ctrl+P", "pick a model / cycle the models"],
  ["Shift+Tab", "cycle the thinking level"],
  ["Alt+Up", "queued messages back into the editor"],
  ["Ctrl+O", "expand or fold tool output"],
  ["Ctrl+D  Ctrl+C twice", "quit (Ctrl+D on an empty editor)"],
];

/** Props of HelpOverlay. */
export interface HelpOverlayProps {
  width: number;
  height: number;
  keys?: readonly (readonly [string, string])[];
}

/** The help box. */
export function HelpOverlay({ width, height, keys = KEY_MAP }: HelpOverlayProps) {
  const theme = useTheme();
  const keyWidth = Math.max(...keys.map(([k]) => k.length)) + 2;
  return (
    <Box
      flexDirection="column"
      borderStyle="round"
      borderColor={theme.color("cyan")}
      paddingX={1}
      width={width}
      height={height}
    >
      <Text bold>keys</Text>
      {keys.map(([k, what]) => (
        <Text key={k} wrap="truncate">
          <Text bold color={theme.color("yellow")}>
            {k.padEnd(keyWidth)}
          </Text>
          {what}
        </Text>
      ))}
      <Text dimColor>Esc or ? closes this help</Text>
    </Box>
  );
}
