/**
 * The input line: a line editor (see `line-editor.ts`) on the terminal's raw input,
 * taken from the App's KeyRouter from the commit that draws the line (a key typed as
 * soon as it shows reaches it); Enter submits, Tab is the alternative submit, Esc
 * cancels. `editLine` is the simple field editor of the forms.
 */
import { Text } from "ink";
import { useRef, useState } from "react";
import type { ActionId } from "./keybindings.js";
import { applyInput, lineState, visibleLine, type EditorKeymap, type LineState } from "./line-editor.js";
import { useTheme } from "./theme.js";
import { useRawKeys } from "./useKeys.js";

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
  /** Alt+Enter with text (pi's follow-up key). */
  onFollowUp?: (text: string) => void;
  /** Ctrl+D on an empty line. */
  onExit?: () => void;
  /** `?` typed on an empty line: help instead of the character. */
  onHelp?: () => void;
  /** Tab: the line completed (a `/command`, a path), or undefined to treat Tab as `onTab`. */
  complete?: (line: LineState) => LineState | undefined;
  /** Enter: the line with the completion list's choice taken (an `@file` list is open), or undefined to submit. */
  accept?: (line: LineState) => LineState | undefined;
  /** Which of pi's actions a key is bound to (default: pi's keys). */
  keymap?: EditorKeymap;
  /** One of pi's actions the view performs (Ctrl+G, Ctrl+T, …), with the line as it is. */
  onAction?: (id: ActionId, line: LineState) => void;
  /** The line after every key. */
  onChange?: (line: LineState) => void;
}

/** Keystrokes that edit a line, as a pure function (shared by the forms). */
export function editLine(
  text: string,
  input: string,
  key: {
    backspace?: boolean;
    delete?: boolean;
    ctrl?: boolean;
    meta?: boolean;
    return?: boolean;
    escape?: boolean;
    tab?: boolean;
    upArrow?: boolean;
    downArrow?: boolean;
    leftArrow?: boolean;
    rightArrow?: boolean;
  },
): string {
  if (key.backspace || key.delete) return text.slice(0, -1);
  if (key.ctrl && input === "u") return "";
  if (
    key.ctrl ||
    key.meta ||
    key.return ||
    key.escape ||
    key.tab ||
    key.upArrow ||
    key.downArrow ||
    key.leftArrow ||
    key.rightArrow
  )
    return text;
  // A paste arrives as one chunk: keep it on one line.
  return text + input.replace(/[\r\n]+/g, " ");
}

/** The input line. */
export function PromptInput({
  label,
  width,
  onSubmit,
  onCancel,
  initial = "",
  placeholder,
  isActive = true,
  onTab,
  onFollowUp,
  onExit,
  onHelp,
  complete,
  accept,
  keymap,
  onAction,
  onChange,
}: PromptInputProps) {
  const theme = useTheme();
  const [line, setLine] = useState<LineState>(() => lineState(initial));
  // The state of the latest keystroke, not of the last render: a burst of reads can
  // arrive before React re-renders.
  const current = useRef(line);
  useRawKeys(
    (raw) => {
      if (raw === "?" && onHelp && current.current.text === "") return onHelp();
      const { state, actions } = applyInput(current.current, raw, keymap);
      current.current = state;
      setLine(state);
      const replace = (next: LineState) => {
        current.current = next;
        setLine(next);
      };
      for (const action of actions) {
        if (action.kind === "cancel") onCancel();
        else if (action.kind === "exit") onExit?.();
        else if (action.kind === "action") onAction?.(action.id, current.current);
        else if (action.kind === "tab") {
          const done = complete?.({ text: action.text, cursor: action.cursor, pasting: false });
          if (done) replace(done);
          else if (onTab && action.text.trim() !== "") {
            onTab(action.text.trim());
            replace(lineState());
          }
        } else if (action.text.trim() === "") continue;
        else if (action.kind === "follow_up") onFollowUp?.(action.text.trim());
        else {
          const taken = accept?.({ text: action.text, cursor: action.cursor, pasting: false });
          if (taken) replace(taken);
          else onSubmit(action.text.trim());
        }
      }
      onChange?.(current.current);
    },
    { isActive },
  );
  const room = Math.max(1, width - label.length - 3);
  const { before, at, after } = visibleLine(line, room);
  return (
    <Text wrap="truncate">
      <Text bold color={theme.color("yellow")}>
        {label}
        {"> "}
      </Text>
      {line.text === "" && placeholder ? <Text dimColor>{placeholder}</Text> : before}
      <Text inverse>{at}</Text>
      {after}
    </Text>
  );
}
