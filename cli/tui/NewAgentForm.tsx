/**
 * The `n` form: name, cwd, worktree yes/no and a first prompt. ↑↓/Tab move between
 * fields, Space toggles the worktree, Enter on the last field (or Ctrl+S) starts the agent.
 * A refused try opens it again with what was typed and why.
 */
import { Box, Text } from "ink";
import { useKeys } from "./useKeys.js";
import { useState } from "react";
import { editLine } from "./PromptInput.js";
import { useTheme } from "./theme.js";

/** What the form produces. */
export interface NewAgentValues {
  name: string;
  cwd: string;
  worktree: boolean;
  prompt: string;
}

/** Props of NewAgentForm. */
export interface NewAgentFormProps {
  width: number;
  defaultCwd: string;
  onSubmit: (values: NewAgentValues) => void;
  onCancel: () => void;
  /** What the form opens with: the values of a try that was refused. */
  initial?: NewAgentValues;
  /** Why the last try was refused, shown under the fields. */
  error?: string;
  isActive?: boolean;
}

const FIELDS = ["name", "cwd", "worktree", "prompt"] as const;
type Field = (typeof FIELDS)[number];

/** The form. */
export function NewAgentForm({
  width,
  defaultCwd,
  onSubmit,
  onCancel,
  initial,
  error,
  isActive = true,
}: NewAgentFormProps) {
  const theme = useTheme();
  const [values, setValues] = useState<NewAgentValues>(
    initial ?? { name: "", cwd: defaultCwd, worktree: false, prompt: "" },
  );
  const [field, setField] = useState(0);
  const current: Field = FIELDS[field]!;
  useKeys(
    (input, key) => {
      if (key.escape) return onCancel();
      if ((key.return && field === FIELDS.length - 1) || (key.ctrl && input === "s")) return onSubmit(values);
      if (key.downArrow || key.return || (key.tab && !key.shift))
        return setField((f) => Math.min(FIELDS.length - 1, f + 1));
      if (key.upArrow || (key.tab && key.shift)) return setField((f) => Math.max(0, f - 1));
      if (current === "worktree") {
        if (input === " " || input === "y" || input === "n")
          setValues((v) => ({ ...v, worktree: input === " " ? !v.worktree : input === "y" }));
        return;
      }
      setValues((v) => ({ ...v, [current]: editLine(v[current], input, key) }));
    },
    { isActive },
  );
  const row = (f: Field, label: string, value: string) => (
    <Text key={f} wrap="truncate">
      <Text color={theme.color(f === current ? "yellow" : "gray")} bold={f === current}>
        {f === current ? "› " : "  "}
        {label.padEnd(10)}
      </Text>
      {value}
      {f === current && f !== "worktree" ? <Text inverse> </Text> : null}
    </Text>
  );
  return (
    <Box flexDirection="column" borderStyle="round" borderColor={theme.color("cyan")} paddingX={1} width={width}>
      <Text bold>new agent</Text>
      {row("name", "name", values.name || (current === "name" ? "" : "(generated)"))}
      {row("cwd", "cwd", values.cwd)}
      {row("worktree", "worktree", values.worktree ? "[x] yes (own branch pi-orch/<name>)" : "[ ] no")}
      {row("prompt", "prompt", values.prompt)}
      {error ? (
        <Text wrap="wrap" color={theme.color("red")}>
          {error}
        </Text>
      ) : null}
      <Text dimColor>↑↓ Tab move · Space toggle · Enter on prompt (or Ctrl+S) start · Esc cancel</Text>
    </Box>
  );
}
