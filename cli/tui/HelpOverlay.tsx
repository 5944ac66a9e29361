/** The key map, as `?` shows it (and as the README lists it). */
import { Box, Text } from "ink";
import { ACTIONS, type ActionId, type Keybindings } from "./keybindings.js";
import { useTheme } from "./theme.js";

/** Every key of the multi-pane TUI and what it does. */
export const KEY_MAP: readonly (readonly [string, string])[] = [
  ["←↑↓→ Tab 1–9", "move focus (1–9: the panes of this page); PgUp/PgDn change page"],
  ["v", "overview: panes in a grid, or a list of all agents beside the focused one's pane (when they need pages)"],
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

/** A key in pi's syntax as the help writes it: `ctrl+g` → `Ctrl+G`, `alt+enter` → `Alt+Enter`, `escape` → `Esc`. */
export function keyLabel(spec: string): string {
  const words: Record<string, string> = { escape: "Esc", esc: "Esc", pageup: "PgUp", pagedown: "PgDn" };
  return spec
    .split("+")
    .map((w) => words[w.toLowerCase()] ?? (w.length === 1 ? w.toUpperCase() : w[0]!.toUpperCase() + w.slice(1)))
    .join("+");
}

/** Keys of the single-agent mode (`pi` on a terminal), as `keys` binds pi's actions; an action with no key is left out. */
export function singleKeyMap(keys: Keybindings): (readonly [string, string])[] {
  const bound = (Object.keys(ACTIONS) as ActionId[])
    .filter((id) => keys.keysOf(id).length > 0)
    .map((id): readonly [string, string] => [keys.keysOf(id).map(keyLabel).join("  "), ACTIONS[id].what]);
  return [
    ...bound,
    ["↑↓ PgUp PgDn", "scroll the transcript"],
    ["/", "the built-in and extension commands (/model /new /resume /tree /compact /quit ...)"],
    ["@", "find a file of the project (fuzzy); Enter or Tab puts it in"],
    ["!cmd  !!cmd", "run a command: its output to the model, or kept out of its context"],
    ["?", "this help (on an empty editor)"],
  ];
}

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
