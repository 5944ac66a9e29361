/**
 * The single view's editor (`pi` on a terminal): the line, with the completions for what
 * is typed listed above it; Enter prompts an idle agent and steers a busy one, Alt+Enter
 * and Tab queue a follow-up, a line the host performs itself (a built-in command, `!cmd`)
 * goes to the host.
 */
import { Box, Text } from "ink";
import type { ActionId, Keybindings } from "./keybindings.js";
import { sequenceName } from "./keybindings.js";
import type { LineState } from "./line-editor.js";
import { PromptInput } from "./PromptInput.js";
import { tabCompletion, type Suggestion } from "./suggestions.js";
import type { InputKind, UiAction, UiState } from "./ui-state.js";

/** Completions listed above the editor. */
export const SUGGESTIONS = 6;

/** Props of SingleInput. */
export interface SingleInputProps {
  ui: UiState;
  dispatch: (action: UiAction) => void;
  busy: boolean;
  width: number;
  isActive: boolean;
  keys: Keybindings;
  /** The completions for a line (`tabbed`: Tab asked for them). */
  suggest?: (line: LineState, tabbed: boolean) => Suggestion[];
  /** A line the host performs itself; true when it did. */
  own: (text: string) => boolean;
  send: (kind: InputKind, text: string) => void;
  /** Esc on a busy agent. */
  abort: () => void;
  /** One of pi's actions, with the editor's line. */
  onAction: (id: ActionId, line: LineState) => void;
  onExit: () => void;
  onHelp: () => void;
}

/** Rows the editor takes: the line, and the completions listed above it. */
export function singleInputRows(suggestions: number): number {
  if (suggestions === 0) return 1;
  return 1 + Math.min(suggestions, SUGGESTIONS) + (suggestions > SUGGESTIONS ? 1 : 0);
}

/** The editor with its completions. */
export function SingleInput(props: SingleInputProps) {
  const { ui, dispatch, busy, suggest, own, send } = props;
  const mine = (text: string) => {
    dispatch({ type: "tabbed", on: false });
    return own(text);
  };
  const suggestions = suggest?.(ui.typed, ui.tabbed) ?? [];
  const prompt = (
    <PromptInput
      key={ui.editor.n}
      initial={ui.editor.text}
      label={busy ? "steer" : "prompt"}
      width={props.width}
      isActive={props.isActive}
      onSubmit={(text) => mine(text) || send(busy ? "steer" : "prompt", text)}
      // Tab that completes nothing queues a follow-up while the agent runs; idle, it does nothing (as in pi).
      onTab={busy ? (text) => mine(text) || send("follow_up", text) : undefined}
      onFollowUp={(text) => mine(text) || send(busy ? "follow_up" : "prompt", text)}
      onCancel={() => (busy ? props.abort() : props.onAction("app.interrupt", ui.typed))}
      onExit={props.onExit}
      onHelp={props.onHelp}
      complete={(l) => {
        const list = suggest?.(l, true) ?? [];
        if (list.length > 0) dispatch({ type: "tabbed", on: true });
        return tabCompletion(l, list);
      }}
      accept={(l) => {
        const first = suggest?.(l, ui.tabbed)[0];
        return first?.takeOnEnter ? first.line : undefined;
      }}
      keymap={(seq) => props.keys.action(sequenceName(seq))}
      onAction={props.onAction}
      onChange={(line) => dispatch({ type: "typed", line })}
    />
  );
  // One tree whether or not suggestions show: a prompt that moved into a new parent
  // would mount again and lose what was typed (the `/` that opened the list).
  return (
    <Box flexDirection="column">
      {suggestions.slice(0, SUGGESTIONS).map((c, i) => (
        <Text key={c.label} wrap="truncate" dimColor={i > 0}>
          {i === 0 ? "→ " : "  "}
          {c.detail ? `${c.label.padEnd(16)} ${c.detail}` : c.label}
        </Text>
      ))}
      {suggestions.length > SUGGESTIONS ? (
        <Text dimColor>{`  … ${suggestions.length - SUGGESTIONS} more (type to narrow, Tab completes)`}</Text>
      ) : null}
      {prompt}
    </Box>
  );
}
