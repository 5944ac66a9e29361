/**
 * Compaction, the pure half: estimate context size, decide when to compact, and choose
 * the cut (never between a tool call and its results). summary-request.ts words the
 * request; the agent sends it to the current model and appends the `compaction` entry.
 */
import type { AgentMessage, Usage } from "../../shared/schema/messages.js";
import { getCurrentSystemMessage } from "../providers/transcript.js";
import {
  buildSessionContext,
  buildSessionProjection,
  compactionSummaryMessage,
  entryMessage,
  entryMessages,
  type ProjectedEntry,
  type SessionProjection,
} from "./context.js";
import type { CompactionEntry, ContextEditEntry, SessionEntry } from "../../shared/schema/session.js";
import { isKnownEntry } from "./entries.js";
import { fileLists, type FileLists } from "./tree.js";

/** An image counts as this many characters (about 1200 tokens), whatever its size. */
const IMAGE_CHARS = 4800;

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
    case "system":
      // pi 1.6 counts the prompt's text, its sections and the tools it declares.
      chars = typeof message.content === "string" ? message.content.length : sumText(message.content);
      for (const section of Object.values(message.sections ?? {})) chars += section?.length ?? 0;
      if (message.toolsAdded) chars += JSON.stringify(message.toolsAdded).length;
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

/** pi 1.6's `calculateContextTokens`: the provider's total, else the sum of the four counts. */
export function contextTokensOf(usage: Usage): number {
  return usage.totalTokens || usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
}

/**
 * pi 1.6's `estimateContextTokens`, stale replies included: the last good reply's usage
 * (`usageIndex`) plus estimates of the messages after it; pure estimates when none has usage.
 */
export function estimateFromUsage(messages: readonly AgentMessage[]): { tokens: number; usageIndex: number | null } {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== "assistant" || m.stopReason === "error" || m.stopReason === "aborted") continue;
    if (contextTokensOf(m.usage) > 0)
      return { tokens: contextTokensOf(m.usage) + sumEstimates(messages.slice(i + 1)), usageIndex: i };
  }
  return { tokens: sumEstimates(messages), usageIndex: null };
}

/**
 * pi 1.6's `estimateProjectedContextTokens`: `estimateFromUsage` of the projection, unless
 * a `context_edit` or `compaction` entry on `branch` came after the reply whose usage it
 * takes (that usage counted a context that is no longer the one sent); then the whole
 * projection is estimated, its system messages counted once as their replay.
 */
export function estimateProjectedContextTokens(projection: SessionProjection, branch: readonly SessionEntry[]): number {
  const { messages } = projection;
  const estimate = estimateFromUsage(messages);
  if (estimate.usageIndex !== null) {
    let at = 0;
    const usageIndex = estimate.usageIndex;
    const source = projection.entries.find((entry) => (at += entry.messages.length) > usageIndex)?.source;
    const usageEntry = source ? branch.indexOf(source) : -1;
    let invalidated = branch.length - 1;
    while (invalidated >= 0 && branch[invalidated].type !== "context_edit" && branch[invalidated].type !== "compaction")
      invalidated--;
    if (usageEntry > invalidated) return estimate.tokens;
  }
  const system = getCurrentSystemMessage(messages as unknown as { role: string }[]);
  return (system ? estimateTokens(system) : 0) + sumEstimates(messages.filter((m) => m.role !== "system"));
}

function sumText(blocks: readonly { text: string }[]): number {
  return blocks.reduce((sum, b) => sum + b.text.length, 0);
}

function sumEstimates(messages: readonly AgentMessage[]): number {
  return messages.reduce((sum, m) => sum + estimateTokens(m), 0);
}

/** Whether the context leaves less than `reserveTokens` of the window for the reply. */
export function shouldCompact(contextTokens: number, contextWindow: number, reserveTokens: number): boolean {
  return contextTokens > contextWindow - reserveTokens;
}

/** Whether the kept part may start with this message: anything but a tool result, which stays after its call. */
function isCutPointMessage(message: AgentMessage): boolean {
  return message.role !== "toolResult" && message.role !== "system";
}

/** Whether a message starts a turn: what a user sends or what stands for it (summaries, custom and shell messages). */
function isTurnStartMessage(message: AgentMessage): boolean {
  return message.role !== "toolResult" && message.role !== "system" && message.role !== "assistant";
}

const isTurnStart = (entry: ProjectedEntry): boolean =>
  entry.source.type !== "compaction" && entry.messages.some(isTurnStartMessage);

/** Where a compaction cuts a projection: the first kept entry, and the start of the turn it falls inside (-1 when it starts one). */
export interface CutPoint {
  firstKept: number;
  turnStart: number;
}

/**
 * pi 1.6's cut over the projected entries `start..` (each with its context edits applied):
 * walk back from the newest, adding up what each entry puts in the context (system
 * messages included) until about `keepRecentTokens`, then move to the nearest cut point at
 * or after there (the latest one when there is none after it). A retried attempt omitted
 * at the very end is left out of the kept part, and entries that put nothing in the
 * context right before the cut are kept with it. A cut inside a turn names the turn's start.
 */
export function findCutPoint(entries: readonly ProjectedEntry[], start: number, keepRecentTokens: number): CutPoint {
  const cuts: number[] = [];
  for (let i = start; i < entries.length; i++) {
    if (entries[i].source.type !== "compaction" && entries[i].messages.some(isCutPointMessage)) cuts.push(i);
  }
  if (cuts.length === 0) return { firstKept: start, turnStart: -1 };
  let cut = cuts[0];
  let kept = 0;
  let exceeded = false;
  for (let i = entries.length - 1; i >= start; i--) {
    const tokens = entries[i].messages.reduce((sum, m) => sum + estimateTokens(m), 0);
    if (tokens === 0) continue;
    kept += tokens;
    if (kept >= keepRecentTokens) {
      exceeded = true;
      cut = cuts.find((c) => c >= i) ?? cuts[cuts.length - 1];
      break;
    }
  }
  if (exceeded && isRecoveryOmission(entries.slice(cut + 1))) cut++;
  while (cut > start) {
    const previous = entries[cut - 1];
    if (previous.source.type === "compaction" || previous.messages.length > 0) break;
    cut--;
  }
  if (isTurnStart(entries[cut])) return { firstKept: cut, turnStart: -1 };
  let turnStart = -1;
  for (let i = cut; i >= start; i--) {
    if (isTurnStart(entries[i])) {
      turnStart = i;
      break;
    }
  }
  return { firstKept: cut, turnStart };
}

/**
 * Whether what follows the cut is only a failed attempt that a retry omitted (and its
 * edits): pi then cuts after it, since nothing there is left for the model to see.
 */
function isRecoveryOmission(suffix: readonly ProjectedEntry[]): boolean {
  const visible = (e: ProjectedEntry) => e.source.type !== "context_edit" && entryMessages(e.source).length > 0;
  const omitted = (e: ProjectedEntry) => visible(e) && e.messages.length === 0;
  const omittedIds = new Set(suffix.filter(omitted).map((e) => e.source.id));
  const replacesOther = suffix.some((e) => {
    if (e.source.type !== "context_edit" || !isKnownEntry(e.source)) return false;
    const edit = e.source as ContextEditEntry;
    return edit.replacement !== null && !omittedIds.has(edit.targetId);
  });
  return (
    !replacesOther &&
    suffix.some((e) => e.source.type === "message" && entryMessage(e.source)?.role === "assistant" && omitted(e)) &&
    suffix.every((e) => e.source.type !== "compaction" && (!visible(e) || omitted(e)))
  );
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
 * Plan a compaction of a root→leaf path, as pi 1.6 does over its projection: the previous
 * compaction's summary and the messages it kept are summarized again with the new ones, so
 * summaries accumulate, and what is summarized is what the model saw (context edits
 * applied, system messages aside). Undefined when there is nothing to summarize (too
 * little history, or just compacted).
 */
export function prepareCompaction(path: readonly SessionEntry[], keepRecentTokens: number): CompactionPlan | undefined {
  if (path.length === 0 || path[path.length - 1].type === "compaction") return undefined;
  const entries = buildSessionProjection(path).entries;
  // The latest compaction is projected first; an older one in its kept range adds nothing.
  const previousIndex = entries.findIndex((e) => e.source.type === "compaction" && e.messages.length > 0);
  const previous = previousIndex >= 0 ? (entries[previousIndex].source as CompactionEntry) : undefined;
  const start = previousIndex + 1;
  const { firstKept, turnStart } = findCutPoint(entries, start, keepRecentTokens);
  const firstKeptEntry = entries[firstKept]?.source;
  if (!firstKeptEntry) return undefined;
  const isSplitTurn = turnStart !== -1;
  const messagesOf = (slice: readonly ProjectedEntry[]) =>
    slice.flatMap((e) => (e.source.type === "compaction" ? [] : e.messages.filter((m) => m.role !== "system")));
  const summarized = messagesOf(entries.slice(start, isSplitTurn ? turnStart : firstKept));
  const turnPrefixMessages = isSplitTurn ? messagesOf(entries.slice(turnStart, firstKept)) : [];
  if (summarized.length === 0 && turnPrefixMessages.length === 0) return undefined;
  return {
    messagesToSummarize:
      summarized.length === 0 ? [] : previous ? [compactionSummaryMessage(previous), ...summarized] : summarized,
    isSplitTurn,
    turnPrefixMessages,
    files: fileLists(
      [...summarized, ...turnPrefixMessages],
      previous && !previous.fromHook ? earlierFiles(previous.details) : [],
    ),
    firstKeptEntryId: firstKeptEntry.id,
    tokensBefore: estimateContextTokens(buildSessionContext(path).messages),
  };
}
