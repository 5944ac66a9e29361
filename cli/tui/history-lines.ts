/**
 * A session's conversation as transcript lines, for the view of a resumed session (`pi -c`,
 * `/resume`, `/fork`, `/tree`): the same lines the live stream would have left. Pure.
 */
import type { AgentMessage } from "../../shared/schema/messages.js";
import { contentText, summarizeArgs } from "../commands/transcript.js";
import type { TranscriptLine } from "./state.js";

/** Longest text a tool or command result keeps (as the live view keeps it). */
const MAX_RESULT_CHARS = 4000;

function kept(text: string): string {
  const t = text.trimEnd();
  return t.length > MAX_RESULT_CHARS ? `${t.slice(0, MAX_RESULT_CHARS)}\n…` : t;
}

/** The lines of one streamed text, as `stream` in state.ts splits them. */
function textLines(kind: "text" | "thinking", text: string): TranscriptLine[] {
  return text
    .replace(/\n+$/, "")
    .split("\n")
    .map((line) => ({ kind, text: line }));
}

/** The transcript of `messages`, oldest first. */
export function historyLines(messages: readonly AgentMessage[]): TranscriptLine[] {
  const out: TranscriptLine[] = [];
  for (const m of messages) {
    switch (m.role) {
      case "user":
        out.push({ kind: "user", text: `> ${contentText(m.content)}` });
        break;
      case "assistant":
        for (const c of m.content) {
          if (c.type === "text" && c.text.trim() !== "") out.push(...textLines("text", c.text));
          else if (c.type === "thinking" && c.thinking.trim() !== "") out.push(...textLines("thinking", c.thinking));
          else if (c.type === "toolCall")
            out.push({ kind: "tool", text: `⏺ ${c.name}(${summarizeArgs(c.name, c.arguments)})` });
        }
        if (m.stopReason === "error")
          out.push({ kind: "error", text: `error: ${m.errorMessage ?? "the model request failed"}` });
        if (m.stopReason === "aborted") out.push({ kind: "notice", text: "aborted" });
        break;
      case "toolResult":
        out.push({ kind: m.isError ? "error" : "result", text: kept(contentText(m.content)) || "(no output)" });
        break;
      case "bashExecution":
        out.push(...bashLines(m.command, m.output, m.exitCode, m.cancelled, m.excludeFromContext === true));
        break;
      case "compactionSummary":
        out.push({ kind: "notice", text: `· compacted (${m.tokensBefore} tokens before): ${firstLine(m.summary)}` });
        break;
      case "branchSummary":
        out.push({ kind: "notice", text: `· branch summary: ${firstLine(m.summary)}` });
        break;
      case "custom":
        if (m.display) out.push({ kind: "notice", text: `· ${contentText(m.content)}` });
        break;
    }
  }
  return out;
}

/** A `!cmd` (or `!!cmd`) and its output, as the view shows it live and resumed. */
export function bashLines(
  command: string,
  output: string,
  exitCode: number | null | undefined,
  cancelled: boolean,
  excluded: boolean,
): TranscriptLine[] {
  const lines: TranscriptLine[] = [
    { kind: "tool", text: `$ ${command}${excluded ? "  (not sent to the model)" : ""}` },
  ];
  const failed = cancelled || (exitCode !== 0 && exitCode !== undefined && exitCode !== null);
  const status = cancelled ? "\n(cancelled)" : failed ? `\n(exit ${exitCode})` : "";
  lines.push({ kind: failed ? "error" : "result", text: (kept(output) || "(no output)") + status });
  return lines;
}

function firstLine(text: string): string {
  const line = text.trim().split("\n")[0] ?? "";
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
