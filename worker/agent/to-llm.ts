/**
 * What the model sees of a conversation: pi's extra message kinds become user text,
 * failed responses are dropped, and tool calls left without a result (a run that was
 * aborted or a worker that crashed) get an explicit "interrupted" result so the
 * provider's call/result pairing rule holds.
 */
import type {
  AgentMessage,
  AssistantMessage,
  BashExecutionMessage,
  LlmMessage,
  ToolResultMessage,
} from "../../shared/schema/messages.js";

// pi's words, so a session moved between pi and us reads the same to the model.
/** What the model reads before a compaction's summary (pi's COMPACTION_SUMMARY_PREFIX). */
export const COMPACTION_SUMMARY_PREFIX =
  "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/** What the model reads after it. */
export const COMPACTION_SUMMARY_SUFFIX = "\n</summary>";
/** What the model reads before a branch summary (pi's BRANCH_SUMMARY_PREFIX). */
export const BRANCH_SUMMARY_PREFIX =
  "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/** What the model reads after it. */
export const BRANCH_SUMMARY_SUFFIX = "</summary>";

/**
 * A shell command the user ran, as the model reads it (pi's `bashExecutionToText`): the
 * output, or that there was none, then a cancel, a failing exit code, and where the full
 * output of a truncated one is.
 */
export function bashExecutionText(m: BashExecutionMessage): string {
  let text = `Ran \`${m.command}\`\n`;
  text += m.output ? `\`\`\`\n${m.output}\n\`\`\`` : "(no output)";
  if (m.cancelled) text += "\n\n(command cancelled)";
  else if (m.exitCode !== null && m.exitCode !== 0) text += `\n\nCommand exited with code ${m.exitCode}`;
  if (m.truncated && m.fullOutputPath) text += `\n\n[Output truncated. Full output: ${m.fullOutputPath}]`;
  return text;
}

/** Map the conversation to provider messages. Pure; never throws. */
export function toLlmMessages(messages: AgentMessage[]): LlmMessage[] {
  const out: LlmMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    switch (m.role) {
      case "user":
        out.push(m);
        break;
      case "toolResult":
        if (answersOpenCall(out, m)) out.push(m);
        break;
      case "bashExecution":
        if (m.excludeFromContext) break;
        out.push({ role: "user", content: [{ type: "text", text: bashExecutionText(m) }], timestamp: m.timestamp });
        break;
      case "branchSummary":
        out.push({
          role: "user",
          content: [{ type: "text", text: BRANCH_SUMMARY_PREFIX + m.summary + BRANCH_SUMMARY_SUFFIX }],
          timestamp: m.timestamp,
        });
        break;
      case "custom":
        out.push({
          role: "user",
          content: typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content,
          timestamp: m.timestamp,
        });
        break;
      case "system":
        // The system prompt and tools travel beside the messages, not among them.
        break;
      case "compactionSummary":
        out.push({
          role: "user",
          content: [{ type: "text", text: COMPACTION_SUMMARY_PREFIX + m.summary + COMPACTION_SUMMARY_SUFFIX }],
          timestamp: m.timestamp,
        });
        break;
      case "assistant": {
        const usable = usableAssistant(m);
        if (!usable) break;
        out.push(usable);
        const calls = usable.content.filter((c) => c.type === "toolCall");
        if (calls.length === 0) break;
        const answered = new Set<string>();
        for (let j = i + 1; j < messages.length && messages[j].role === "toolResult"; j++) {
          answered.add((messages[j] as ToolResultMessage).toolCallId);
        }
        const missing = calls.filter((c) => !answered.has(c.id));
        if (missing.length === 0) break;
        // Results that do exist follow in the input; add the missing ones after them.
        let j = i + 1;
        while (j < messages.length && messages[j].role === "toolResult") {
          const r = messages[j] as ToolResultMessage;
          if (calls.some((c) => c.id === r.toolCallId)) out.push(r);
          j++;
        }
        for (const call of missing) {
          out.push({
            role: "toolResult",
            toolCallId: call.id,
            toolName: call.name,
            content: [{ type: "text", text: "No result: the tool call was interrupted before it finished." }],
            isError: true,
            timestamp: m.timestamp,
          });
        }
        i = j - 1;
        break;
      }
    }
  }
  return out;
}

/** Drop errored responses; keep what an aborted one said, minus tool calls it never ran. */
function usableAssistant(m: AssistantMessage): AssistantMessage | null {
  if (m.stopReason === "error") return null;
  if (m.stopReason === "aborted") {
    const content = m.content.filter((c) => c.type !== "toolCall" && !(c.type === "text" && c.text.length === 0));
    return content.length > 0 ? { ...m, content } : null;
  }
  return m;
}

function answersOpenCall(out: LlmMessage[], result: ToolResultMessage): boolean {
  for (let k = out.length - 1; k >= 0; k--) {
    const prev = out[k];
    if (prev.role === "toolResult") continue;
    return prev.role === "assistant" && prev.content.some((c) => c.type === "toolCall" && c.id === result.toolCallId);
  }
  return false;
}
