/**
 * A codemode result's text as pi 1.6.0 lays it out: text items numbered `==> text N/M <==`
 * when there are several, `console` lines in one `<console_output>` block after them,
 * adjacent text joined, the failure after the output, and a budget of tokens that keeps
 * the start and end of a longer text. Pure: the caller writes the files.
 */
import type { OutputItem, ScriptFailure } from "./sandbox.js";

/** Characters per token, as pi estimates them. */
const CHARS_PER_TOKEN = 4;
/** The output budget when the options line sets none. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 10_000;

/** A content block of the result. */
export type Block = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string };

/** Text items numbered when more than one, then the console lines in one block. */
export function layoutOutput(output: OutputItem[]): Block[] {
  const total = output.filter((i) => i.type === "text" && !i.console).length;
  const items: Block[] = [];
  const consoleLines: string[] = [];
  let n = 0;
  for (const item of output) {
    if (item.type === "image") items.push(item);
    else if (item.console) consoleLines.push(item.text);
    else {
      n++;
      items.push({ type: "text", text: total > 1 ? `==> text ${n}/${total} <==\n${item.text}` : item.text });
    }
  }
  if (consoleLines.length > 0)
    items.push({ type: "text", text: `<console_output>\n${consoleLines.join("\n")}\n</console_output>` });
  return items;
}

/** Adjacent text items as one, each part on its own line. */
export function joinText(items: Block[]): Block[] {
  const joined: Block[] = [];
  let parts: string[] = [];
  let last = "";
  const flush = () => {
    if (parts.length > 0) joined.push({ type: "text", text: parts.join("") });
    parts = [];
    last = "";
  };
  for (const item of items) {
    if (item.type !== "text") {
      flush();
      joined.push(item);
      continue;
    }
    if (last !== "" && !last.endsWith("\n")) {
      parts.push("\n");
      last = "\n";
    }
    parts.push(item.text);
    if (item.text !== "") last = item.text;
  }
  flush();
  return joined;
}

/** The failure's text: the script's error with its stack, or what stopped it, then the calls made before. */
export function failureText(error: ScriptFailure, calls: { name: string; status: string }[]): string {
  const head =
    error.kind === "script"
      ? (error.stack ?? `${error.name ?? "Error"}: ${error.message}`)
      : error.kind === "timeout"
        ? `Script timed out: ${error.message}`
        : error.kind === "aborted"
          ? `Script aborted: ${error.message}`
          : error.kind === "no-worker"
            ? error.message
            : `Script sandbox failed: ${error.message}`;
  const summary =
    calls.length === 0
      ? "No tool calls were made."
      : `Tool calls made before the failure (they are not undone): ${calls.map((c) => `${c.name} (${c.status})`).join(", ")}`;
  return `${head}\n\n${summary}`;
}

/**
 * Apply the token budget: past it the text items become one that keeps the first and last
 * halves of the budget, images follow. `spill` is the whole text, for the caller to save.
 */
export function budgetOutput(items: Block[], maxTokens: number): { items: Block[]; spill?: string } {
  const texts = items.flatMap((i) => (i.type === "text" ? [i.text] : []));
  const combined = texts.join("\n");
  const budget = maxTokens * CHARS_PER_TOKEN;
  if (texts.length === 0 || combined.length <= budget) return { items };
  const headChars = Math.floor(budget / 2);
  const tailChars = budget - headChars;
  const removed = combined.length - headChars - tailChars;
  const text =
    `Warning: truncated output (original token count: ${Math.ceil(combined.length / CHARS_PER_TOKEN)})\n` +
    `Total output lines: ${combined.split("\n").length}\n\n` +
    `${combined.slice(0, headChars)}…${Math.ceil(removed / CHARS_PER_TOKEN)} tokens truncated…${tailChars > 0 ? combined.slice(-tailChars) : ""}`;
  return { items: [{ type: "text", text }, ...items.filter((i) => i.type === "image")], spill: combined };
}

/** The first block of every result: how it ended and how long it took. */
export function header(ok: boolean, seconds: number): string {
  return `${ok ? "Script completed" : "Script failed"}\nWall time ${seconds.toFixed(1)} seconds\nOutput:\n`;
}
