/**
 * The summary requests, in pi 1.6's words: a compaction's (the history, updating an
 * earlier summary when there is one), the start of a turn a compaction cuts through, and
 * the conversation text all of them (and a branch summary) carry. Pure. The same words
 * as pi, so a session moved between pi and us is summarized the same way.
 */
import type { AgentMessage } from "../../shared/schema/messages.js";
import {
  BRANCH_SUMMARY_PREFIX,
  BRANCH_SUMMARY_SUFFIX,
  bashExecutionText,
  COMPACTION_SUMMARY_PREFIX,
  COMPACTION_SUMMARY_SUFFIX,
} from "../agent/to-llm.js";

/** The system prompt of every summary request (pi's SUMMARIZATION_SYSTEM_PROMPT). */
export const SUMMARY_SYSTEM_PROMPT = `You are a context summarization assistant. Your task is to read a conversation between a user and an AI assistant, then produce a structured summary following the exact format specified.

Do NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary.`;

const SUMMARIZATION_PROMPT = `The messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use to continue the work.

Use this EXACT format:

## Goal
[What is the user trying to accomplish? Can be multiple items if the session covers different tasks.]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned by user]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Current work]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [Ordered list of what should happen next]

## Critical Context
- [Any data, examples, or references needed to continue]
- [Or "(none)" if not applicable]

Keep each section concise. Preserve exact file paths, function names, and error messages.`;

const UPDATE_SUMMARIZATION_PROMPT = `The messages above are NEW conversation messages to incorporate into the existing summary provided in <previous-summary> tags.

Update the existing structured summary with new information. RULES:
- PRESERVE all existing information from the previous summary
- ADD new progress, decisions, and context from the new messages
- UPDATE the Progress section: move items from "In Progress" to "Done" when completed
- UPDATE "Next Steps" based on what was accomplished
- PRESERVE exact file paths, function names, and error messages
- If something is no longer relevant, you may remove it

Use this EXACT format:

## Goal
[Preserve existing goals, add new ones if the task expanded]

## Constraints & Preferences
- [Preserve existing, add new ones discovered]

## Progress
### Done
- [x] [Include previously done items AND newly completed items]

### In Progress
- [ ] [Current work - update based on progress]

### Blocked
- [Current blockers - remove if resolved]

## Key Decisions
- **[Decision]**: [Brief rationale] (preserve all previous, add new)

## Next Steps
1. [Update based on current state]

## Critical Context
- [Preserve important context, add new if needed]

Keep each section concise. Preserve exact file paths, function names, and error messages.`;

const TURN_PREFIX_PROMPT = `The messages above are earlier context from an ongoing conversation. Later messages are stored separately and do not need to be reconstructed.

Create a concise checkpoint of the user's request and the progress shown above. This checkpoint will be placed before the later messages so the conversation can continue with the necessary context.

## Original Request
[What did the user ask for?]

## Progress So Far
- [Key decisions and work completed in these messages]

## Context Needed to Continue
- [Information from these messages needed to understand the later work]

Only summarize information explicitly present above. Do not infer or recreate later messages.`;

/** Joins the two summaries of a split turn, in pi's words, so a reader of either finds the parts. */
export const SPLIT_TURN_HEADING = "\n\n---\n\n**Turn Context (split turn):**\n\n";

/** The history summary of a split turn with no history before the turn (pi's text). */
export const NO_PRIOR_HISTORY = "No prior history.";

/** Tool output longer than this is cut in a summary request; the summary needs its gist, not all of it. */
const TOOL_RESULT_MAX_CHARS = 2000;

/**
 * The user-turn text asking the model to summarize `messagesToSummarize`; a leading
 * compaction summary becomes the previous summary to update rather than to start over.
 */
export function buildSummaryRequest(messagesToSummarize: readonly AgentMessage[], customInstructions?: string): string {
  const previous = messagesToSummarize.filter((m) => m.role === "compactionSummary").map((m) => m.summary);
  const rest = messagesToSummarize.filter((m) => m.role !== "compactionSummary");
  let text = `<conversation>\n${serializeForSummary(rest)}\n</conversation>\n\n`;
  if (previous.length > 0) text += `<previous-summary>\n${previous.join("\n\n")}\n</previous-summary>\n\n`;
  text += previous.length > 0 ? UPDATE_SUMMARIZATION_PROMPT : SUMMARIZATION_PROMPT;
  return customInstructions ? `${text}\n\nAdditional focus: ${customInstructions}` : text;
}

/**
 * The user-turn text asking for a summary of the start of a turn that the compaction cuts
 * through: the turn's end is kept verbatim, so the summary only has to lead into it.
 */
export function buildTurnPrefixRequest(
  turnPrefixMessages: readonly AgentMessage[],
  customInstructions?: string,
): string {
  const text = `# Conversation\n${serializeForSummary(turnPrefixMessages)}\n\n# Instructions\n${TURN_PREFIX_PROMPT}`;
  return customInstructions ? `${text}\n\nAdditional focus: ${customInstructions}` : text;
}

/**
 * The conversation as labelled plain text, so the model reads it instead of continuing it
 * (pi's `serializeConversation` over its `convertToLlm`): what the model was sent, with
 * summaries, custom and shell messages as user text; thinking left out (providers return
 * a summary of it, and it may not have been in the live context); long tool output cut.
 */
export function serializeForSummary(messages: readonly AgentMessage[]): string {
  const parts: string[] = [];
  const user = (text: string) => {
    if (text) parts.push(`[User]: ${text}`);
  };
  for (const m of messages) {
    switch (m.role) {
      case "user":
      case "custom":
        user(typeof m.content === "string" ? m.content : textOf(m.content, ""));
        break;
      case "bashExecution":
        if (!m.excludeFromContext) user(bashExecutionText(m));
        break;
      case "branchSummary":
        user(BRANCH_SUMMARY_PREFIX + m.summary + BRANCH_SUMMARY_SUFFIX);
        break;
      case "compactionSummary":
        user(COMPACTION_SUMMARY_PREFIX + m.summary + COMPACTION_SUMMARY_SUFFIX);
        break;
      case "assistant": {
        const calls = m.content.flatMap((b) =>
          b.type === "toolCall"
            ? [
                `${b.name}(${Object.entries(b.arguments as Record<string, unknown>)
                  .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
                  .join(", ")})`,
              ]
            : [],
        );
        if (m.content.some((b) => b.type === "text")) parts.push(`[Assistant]: ${textOf(m.content, "\n")}`);
        if (calls.length > 0) parts.push(`[Assistant tool calls]: ${calls.join("; ")}`);
        break;
      }
      case "toolResult": {
        const text = textOf(m.content, "");
        if (text) parts.push(`[Tool result]: ${cut(text, TOOL_RESULT_MAX_CHARS)}`);
        break;
      }
    }
  }
  return parts.join("\n\n");
}

/** The text blocks of a content list, joined. */
function textOf(content: readonly { type: string; text?: string }[], separator: string): string {
  return content
    .filter((b) => b.type === "text")
    .map((b) => b.text ?? "")
    .join(separator);
}

/** The head of `text` up to `max` characters (a surrogate pair is never split), with pi's marker. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text[max - 1] ?? "") && /[\uDC00-\uDFFF]/.test(text[max] ?? "") ? max - 1 : max;
  return `${text.slice(0, end)}\n\n[... ${text.length - max} more characters truncated]`;
}
