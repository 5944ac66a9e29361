/**
 * A one-line text input: type, Backspace, Ctrl+U clears, Enter submits, Esc cancels.
 * Shows the end of the text when it is wider than the line.
 */
import { Text } from "ink";
import { useKeys } from "./useKeys.js";
import { useState } from "react";
import { useTheme } from "./theme.js";

/** Props of PromptInput. */
export interface PromptInputProps {
  label: string;
  width: number;
  onSubmit: (text: string) => void;
  onCancel: () => void;
  initial?: string;
  placeholder?: string;
  isActive?: boolean;
  /** Tab with text: the alternative submit (follow-up in single-agent mode). */
  onTab?: (text: string) => void;
}

/** Keystrokes that edit a line, as a pure function (shared by the forms). */
export function editLine(
  text: string,
  input: string,
  key: { backspace?: boolean; delete?: boolean; ctrl?: boolean; meta?: boolean; return?: boolean; escape?: boolean; tab?: boolean; upArrow?: boolean; downArrow?: boolean; leftArrow?: boolean; rightArrow?: boolean },
): string {
  if (key.backspace || key.delete) return text.slice(0, -1);
  if (key.ctrl && input === "u") return "";
  if (key.ctrl || key.meta || key.return || key.escape || key.tab || key.upArrow || key.downArrow || key.leftArrow || key.rightArrow) return text;
  // A paste arrives as one chunk: keep it on one line.
  return text + input.replace(/[\r\n]+/g, " ");
}

/** The input line. */
export function PromptInput({ label, width, onSubmit, onCancel, initial = "", placeholder, isActive = true, onTab }: PromptInputProps) {
  const theme = useTheme();
  const [text, setText] = useState(initial);
  useKeys(
    (input, key) => {
      if (key.return || (key.tab && onTab)) {
        if (text.trim() === "") return;
        if (key.tab) onTab!(text.trim());
        else onSubmit(text.trim());
        setText("");
        return;
      }
      if (key.escape) {
        onCancel();
        return;
      }
      setText((t) => editLine(t, input, key));
    },
    { isActive },
  );
  const room = Math.max(1, width - label.length - 3);
  const shown = text.length > room ? "…" + text.slice(text.length - room + 1) : text;
  return (
    <Text wrap="truncate">
      <Text bold color={theme.color("yellow")}>
        {label}
        {"> "}
      </Text>
      {shown === "" && placeholder ? <Text dimColor>{placeholder}</Text> : shown}
      <Text inverse> </Text>
    </Text>
  );
}
