/**
 * An extension's dialog (`select`, `confirm`, `input`, `editor`) drawn in its agent's
 * pane. The answer goes to `onAnswer` in the shape of an `extension_ui_response`.
 */
import { Box, Text } from "ink";
import { useKeys } from "./useKeys.js";
import { useState } from "react";
import { PromptInput } from "./PromptInput.js";
import type { DialogRequest } from "./state.js";
import { useTheme } from "./theme.js";
import { truncate } from "./text.js";

/** The fields of an `extension_ui_response` besides `type` and `id`. */
export interface DialogAnswer {
  value?: string;
  confirmed?: boolean;
  cancelled?: boolean;
}

/** Props of DialogModal. */
export interface DialogModalProps {
  dialog: DialogRequest;
  width: number;
  onAnswer: (answer: DialogAnswer) => void;
  isActive?: boolean;
}

/** The modal. */
export function DialogModal({ dialog, width, onAnswer, isActive = true }: DialogModalProps) {
  const theme = useTheme();
  const [selected, setSelected] = useState(0);
  const options = dialog.options ?? [];
  const textual = dialog.method === "input" || dialog.method === "editor";
  useKeys(
    (input, key) => {
      if (key.escape) return onAnswer({ cancelled: true });
      if (dialog.method === "confirm") {
        if (input === "y" || input === "Y" || key.return) onAnswer({ confirmed: true });
        else if (input === "n" || input === "N") onAnswer({ confirmed: false });
        return;
      }
      if (dialog.method === "select") {
        if (key.upArrow) setSelected((s) => (s - 1 + options.length) % Math.max(1, options.length));
        else if (key.downArrow || key.tab) setSelected((s) => (s + 1) % Math.max(1, options.length));
        else if (key.return && options[selected] !== undefined) onAnswer({ value: options[selected] });
        else if (/^[1-9]$/.test(input) && options[Number(input) - 1] !== undefined)
          onAnswer({ value: options[Number(input) - 1] });
      }
    },
    { isActive: isActive && !textual },
  );
  const inner = Math.max(4, width - 4);
  return (
    <Box flexDirection="column" borderStyle="double" borderColor={theme.color("yellow")} paddingX={1} width={width}>
      <Text bold wrap="truncate">
        {truncate(dialog.title || "extension", inner)}
      </Text>
      {dialog.message ? <Text wrap="truncate">{truncate(dialog.message, inner)}</Text> : null}
      {dialog.method === "confirm" ? <Text dimColor>y yes · n no · Esc cancel</Text> : null}
      {dialog.method === "select"
        ? options.map((o, i) => (
            <Text key={o + i} inverse={i === selected} wrap="truncate">
              {truncate(`${i === selected ? "›" : " "} ${i + 1}. ${o}`, inner)}
            </Text>
          ))
        : null}
      {dialog.method === "select" ? <Text dimColor>↑↓ choose · Enter pick · Esc cancel</Text> : null}
      {textual ? (
        <PromptInput
          label="answer"
          width={inner}
          initial={dialog.prefill ?? ""}
          placeholder={dialog.placeholder}
          isActive={isActive}
          onSubmit={(value) => onAnswer({ value })}
          onCancel={() => onAnswer({ cancelled: true })}
        />
      ) : null}
    </Box>
  );
}
