/**
 * Compaction, the pure half: estimate context size, decide when to compact, choose the
 * cut (never between a tool call and its results), and write the summary request. The
 * agent sends the request to the current model and appends the `compaction` entry.
 */
import type { AgentMessage } from "../../shared/schema/messages.js";
import { buildSessionContext, buildSessionProjection, compactionSummaryMessage, entryMessage } from "./context.js";
import { isKnownEntry, type CompactionEntry, type SessionEntry } from "./entries.js";
import { fileLists, type FileLists } from "./tree.js";

/** An image counts as this many characters (about 1200 tokens), whatever its size. */
const IMAGE_CHARS = 4800;

/** Tool output longer than this is cut in the summary request; the summary needs its gist, not all of it. */
const SUMMARY_TOOL_OUTPUT_CHARS = 2000;

/**
 * Rough token count of one message: characters / 4, images ~1200 tokens. Overestimates
 * on purpose, so the threshold trips a little early rather than after an overflow.
 */
export function estimateTokens(message: AgentMessage): number {
  let chars = 0;
  switch (message.role) {
    case "user":
    case "toolResult":
      if (typeof message.content === "string") chars = message.content.length;
      else for (const block of message.content) chars += block.type === "text" ? block.text.length : IMAGE_CHARS;
      break;
    case "assistant":
      for (const block of message.content) {
        if (block.type === "text") chars += block.text.length;
        else if (block.type === "thinking") chars += block.thinking.length;
        else chars += block.name.length + JSON.stringify(block.arguments).length;
      }
      break;
    case "bashExecution":
      chars = message.command.length + message.output.length;
      break;
    case "compactionSummary":
    case "branchSummary":
      chars = message.summary.length;
      break;
    case "custom":
      if (typeof message.content === "string") chars = message.content.length;
      else for (const block of message.content) chars += block.type === "text" ? block.text.length : IMAGE_CHARS;
      break;
  }
  return Math.ceil(chars / 4);
}

/**
 * Tokens the context occupies: the provider's own count from the last successful
 * assistant reply, plus estimates for the messages after it; pure estimates when no
 * reply has usage. Replies older than a compaction summary are ignored, since their
 * usage counts the context that was compacted away.
 */
export function estimateContextTokens(messages: readonly AgentMessage[]): number {
  let summaryTime = -Infinity;
  for (const m of messages) if (m.role === "compactionSummary") summaryTime = Math.max(summaryTime, m.timestamp);
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== "assistant" || m.stopReason === "error" || m.stopReason === "aborted") continue;
    if (m.usage.totalTokens <= 0 || m.timestamp < summaryTime) continue;
    return m.usage.totalTokens + sumEstimates(messages.slice(i + 1));
  }
  return sumEstimates(messages);
}

function sumEstimates(messages: readonly AgentMessage[]): number {
  return messages.reduce((sum, m) => sum + estimateTokens(m), 0);
}

/** Whether the context leaves less than `reserveTokens` of the window for the reply. */
export function shouldCompact(contextTokens: number, contextWindow: number, reserveTokens: number): boolean {
  return contextTokens > contextWindow - reserveTokens;
}

/**
 * The conversation message an entry holds, if any: system messages are the prompt's state,
 * not conversation (the compaction entry keeps their replay), as in pi 1.6.
 */
function conversationMessage(entry: SessionEntry): AgentMessage | undefined {
  const message = entryMessage(entry);
  return message?.role === "system" ? undefined : message;
}

/**
 * Whether the kept part may start at this entry: any context message but a tool result, which
 * must stay right after the assistant message that called it. Since results always
 * follow their call, cutting only here keeps every call/result pair on one side.
 */
export function isCutPoint(entry: SessionEntry): boolean {
  const message = conversationMessage(entry);
  return message !== undefined && message.role !== "toolResult";
}

/**
 * Index of the first entry to keep, walking back from the newest message until about
 * `keepRecentTokens` are kept, then moving to the nearest cut point at or after that
 * message (the latest cut point when there is none after it). Settings entries right
 * before the cut are kept with it. 0 means nothing can be summarized.
 */
export function findCutPoint(entries: readonly SessionEntry[], keepRecentTokens: number): number {
  const cuts: number[] = [];
  entries.forEach((entry, index) => {
    if (isCutPoint(entry)) cuts.push(index);
  });
  if (cuts.length === 0) return 0;
  let cut = cuts[0];
  let kept = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const message = conversationMessage(entries[i]);
    if (!message) continue;
    kept += estimateTokens(message);
    if (kept >= keepRecentTokens) {
      cut = cuts.find((c) => c >= i) ?? cuts[cuts.length - 1];
      break;
    }
  }
  while (cut > 0) {
    const previous = entries[cut - 1];
    if (previous.type === "compaction" || conversationMessage(previous)) break;
    cut--;
  }
  return cut;
}

/**
 * When the cut at `cut` falls inside a turn, the index of the entry that starts that turn
 * (its user message, a user-run command, a custom message or a branch summary); -1 when
 * the kept part starts a turn. As in pi, a cut on anything but a user message is inside
 * the turn before it, even a settings entry kept with the next user message.
 */
export function splitTurnStart(entries: readonly SessionEntry[], cut: number): number {
  const at = entries[cut];
  if (at && isKnownEntry(at) && at.type === "message" && at.message.role === "user") return -1;
  for (let i = cut; i >= 0; i--) {
    const entry = entries[i]!;
    if (!isKnownEntry(entry)) continue;
    if (entry.type === "custom_message" || entry.type === "branch_summary") return i;
    if (entry.type === "message" && (entry.message.role === "user" || entry.message.role === "bashExecution")) return i;
  }
  return -1;
}

/** A compaction entry's details as file lists, when they are pi's `{readFiles, modifiedFiles}`. */
function earlierFiles(details: unknown): FileLists[] {
  const d = details as Partial<Record<keyof FileLists, unknown>> | undefined;
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((f): f is string => typeof f === "string") : []);
  return d && typeof d === "object"
    ? [{ readFiles: strings(d.readFiles), modifiedFiles: strings(d.modifiedFiles) }]
    : [];
}

/** What one compaction will do; the caller asks the model for `summary` and appends the entry. */
export interface CompactionPlan {
  /**
   * Messages the summary replaces, led by the previous summary when there was a compaction
   * before; empty when a split turn leaves no history before it.
   */
  messagesToSummarize: AgentMessage[];
  /** The cut falls inside a turn: its start up to the cut is summarized on its own. */
  isSplitTurn: boolean;
  /** The messages of that turn before the cut (empty unless `isSplitTurn`). */
  turnPrefixMessages: AgentMessage[];
  /**
   * pi's file lists of what is summarized (both parts), with those of the previous
   * compaction when pi made it (not an extension): the entry's details, and appended to
   * the summary.
   */
  files: FileLists;
  /** Goes into the compaction entry: the context restarts here after the summary. */
  firstKeptEntryId: string;
  /** Estimated context size before compacting, for the entry and the `compaction_end` event. */
  tokensBefore: number;
}

/**
 * Plan a compaction of a root→leaf path. A previous compaction's summary and the
 * messages it kept are summarized again with the new ones, so summaries accumulate.
 * Undefined when there is nothing to summarize (too little history, or just compacted).
 */
export function prepareCompaction(path: readonly SessionEntry[], keepRecentTokens: number): CompactionPlan | undefined {
  if (path.length === 0 || path[path.length - 1].type === "compaction") return undefined;
  let previousIndex = -1;
  path.forEach((entry, index) => {
    if (isKnownEntry(entry) && entry.type === "compaction") previousIndex = index;
  });
  const previous = previousIndex >= 0 ? (path[previousIndex] as CompactionEntry) : undefined;
  let start = 0;
  if (previous) {
    const kept = path.findIndex((e, i) => i < previousIndex && e.id === previous.firstKeptEntryId);
    start = kept >= 0 ? kept : previousIndex + 1;
  }
  const window = path.slice(start);
  const cut = start + findCutPoint(window, keepRecentTokens);
  const turnStart = splitTurnStart(window, cut - start);
  const isSplitTurn = turnStart !== -1;
  const historyEnd = isSplitTurn ? start + turnStart : cut;
  // What each entry is in the model's context (context edits applied, as pi 1.6 summarizes
  // the projection), system messages aside.
  const projected = new Map(buildSessionProjection(path).entries.map((e) => [e.source.id, e.messages]));
  const messagesOf = (entries: readonly SessionEntry[]) =>
    entries.flatMap((e) =>
      e.type === "compaction" ? [] : (projected.get(e.id) ?? []).filter((m) => m.role !== "system"),
    );
  const summarized = messagesOf(path.slice(start, historyEnd));
  const turnPrefixMessages = isSplitTurn ? messagesOf(path.slice(historyEnd, cut)) : [];
  if ((summarized.length === 0 && turnPrefixMessages.length === 0) || cut >= path.length) return undefined;
  return {
    messagesToSummarize:
      summarized.length === 0 ? [] : previous ? [compactionSummaryMessage(previous), ...summarized] : summarized,
    isSplitTurn,
    turnPrefixMessages,
    files: fileLists(
      [...summarized, ...turnPrefixMessages],
      previous && !previous.fromHook ? earlierFiles(previous.details) : [],
    ),
    firstKeptEntryId: path[cut].id,
    tokensBefore: estimateContextTokens(buildSessionContext(path).messages),
  };
}

/** System prompt for the summary request: the model must write a summary, not carry on the work. */
export const SUMMARY_SYSTEM_PROMPT =
  "You write context checkpoints for a coding agent. You are shown part of a conversation between a user " +
  "and an AI coding assistant. Reply with the structured summary you are asked for and nothing else: do not " +
  "continue the conversation, answer its questions or call tools.";

const SUMMARY_FORMAT = `## Goal
[What the user wants done; several items if the session moved between tasks.]

## Constraints & Preferences
- [Requirements and preferences the user stated, or "(none)"]

## Progress
### Done
- [x] [Finished work]
### In Progress
- [ ] [Work under way]
### Blocked
- [Open problems, if any]

## Key Decisions
- **[Decision]**: [Why]

## Files
- [path]: [read / created / modified, and what changed]

## Next Steps
1. [What to do next, in order]

## Critical Context
- [Exact values, error messages, commands or names needed to continue, or "(none)"]`;

/**
 * The user-turn text asking the model to summarize `messagesToSummarize` (serialized as
 * text, so the model reads it instead of continuing it). A leading compaction summary
 * becomes the previous summary to update rather than to start over.
 */
export function buildSummaryRequest(messagesToSummarize: readonly AgentMessage[], customInstructions?: string): string {
  const previous = messagesToSummarize.filter((m) => m.role === "compactionSummary").map((m) => m.summary);
  const rest = messagesToSummarize.filter((m) => m.role !== "compactionSummary");
  const parts = [`<conversation>\n${serializeForSummary(rest)}\n</conversation>`];
  if (previous.length > 0) {
    parts.push(`<previous-summary>\n${previous.join("\n\n")}\n</previous-summary>`);
    parts.push(
      "The conversation above continues the work described in <previous-summary>. Update that summary: keep " +
        "everything in it that still holds, add the new progress, decisions and files, move finished items to Done, " +
        "and rewrite Next Steps.",
    );
  } else {
    parts.push(
      "Summarize the conversation above as a checkpoint another model will use to continue the work without seeing it.",
    );
  }
  parts.push(`Use exactly this format:\n\n${SUMMARY_FORMAT}`);
  parts.push("Be brief in every section, but keep file paths, function names, commands and error messages exact.");
  const focus = customInstructions?.trim();
  if (focus) parts.push(`Additional instructions from the user: ${focus}`);
  return parts.join("\n\n");
}

/** Joins the two summaries of a split turn, in pi's words, so a reader of either finds the parts. */
export const SPLIT_TURN_HEADING = "\n\n---\n\n**Turn Context (split turn):**\n\n";

/** The history summary of a split turn with no history before the turn (pi's text). */
export const NO_PRIOR_HISTORY = "No prior history.";

/**
 * The user-turn text asking for a summary of the start of a turn that the compaction cuts
 * through: the turn's end is kept verbatim, so the summary only has to make it readable.
 */
export function buildTurnPrefixRequest(turnPrefixMessages: readonly AgentMessage[]): string {
  return [
    `<conversation>\n${serializeForSummary(turnPrefixMessages)}\n</conversation>`,
    "The conversation above is the first part of one turn that is too long to keep whole; its later part is kept as it is. " +
      "Summarize this first part so the kept part makes sense on its own.",
    "Use exactly this format:\n\n## Original Request\n[What the user asked for in this turn]\n\n## Early Progress\n- [Decisions and work done so far]\n\n## Context for Suffix\n- [What is needed to understand the kept part]",
    "Be brief, but keep file paths, function names, commands and error messages exact.",
  ].join("\n\n");
}

/** Conversation as labelled plain text for the summary request; long tool output is cut. */
export function serializeForSummary(messages: readonly AgentMessage[]): string {
  const parts: string[] = [];
  for (const m of messages) {
    switch (m.role) {
      case "user": {
        const text =
          typeof m.content === "string"
            ? m.content
            : m.content.map((b) => (b.type === "text" ? b.text : "[image]")).join("");
        if (text) parts.push(`[User]: ${text}`);
        break;
      }
      case "assistant":
        for (const block of m.content) {
          if (block.type === "thinking" && block.thinking) parts.push(`[Assistant thinking]: ${block.thinking}`);
          else if (block.type === "text" && block.text) parts.push(`[Assistant]: ${block.text}`);
          else if (block.type === "toolCall") {
            parts.push(`[Assistant tool call]: ${block.name}(${JSON.stringify(block.arguments)})`);
          }
        }
        if (m.stopReason === "error" && m.errorMessage) parts.push(`[Assistant error]: ${m.errorMessage}`);
        break;
      case "toolResult": {
        const text = m.content.map((b) => (b.type === "text" ? b.text : "[image]")).join("");
        const label = m.isError ? `[Tool error ${m.toolName}]` : `[Tool result ${m.toolName}]`;
        parts.push(`${label}: ${cut(text, SUMMARY_TOOL_OUTPUT_CHARS)}`);
        break;
      }
      case "bashExecution":
        parts.push(`[User ran]: $ ${m.command}\n${cut(m.output, SUMMARY_TOOL_OUTPUT_CHARS)}`);
        break;
      case "compactionSummary":
        parts.push(`[Earlier summary]: ${m.summary}`);
        break;
      case "branchSummary":
        parts.push(`[Summary of a branch left earlier]: ${m.summary}`);
        break;
      case "custom": {
        const text =
          typeof m.content === "string"
            ? m.content
            : m.content.map((b) => (b.type === "text" ? b.text : "[image]")).join("");
        if (text) parts.push(`[User]: ${text}`);
        break;
      }
    }
  }
  return parts.join("\n\n");
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n[... ${text.length - max} more characters]`;
}
