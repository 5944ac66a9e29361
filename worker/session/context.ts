/**
 * Session-tree projection, pure: walk from a leaf to the root, and turn that path into
 * what the model sees (messages, model, thinking level, name).
 */
import type { AgentMessage, ThinkingLevel, UserMessage } from "../../shared/schema/messages.js";
import type { CompactionEntry, ContextEditEntry, MessageEntry, SessionEntry } from "../../shared/schema/session.js";
import { isKnownEntry } from "./entries.js";

/** What a session path means for the next model request. */
export interface SessionContext {
  messages: AgentMessage[];
  model?: { provider: string; modelId: string };
  thinkingLevel?: ThinkingLevel;
  /** The latest `session_info` name on the path; absent when none was set or it was cleared. */
  name?: string;
}

/**
 * Entries from the root to `leafId`, in order. `null` is the position before the first
 * entry (empty path). An entry whose parent is not in `byId` (a damaged file) is where
 * the path starts, as pi treats it; a parent loop ends at the entry seen twice.
 */
export function pathTo(byId: ReadonlyMap<string, SessionEntry>, leafId: string | null): SessionEntry[] {
  const path: SessionEntry[] = [];
  const seen = new Set<string>();
  if (leafId !== null && !byId.has(leafId)) throw new Error(`session entry "${leafId}" is not in this session`);
  let id = leafId;
  while (id !== null && !seen.has(id)) {
    const entry = byId.get(id);
    if (!entry) break;
    seen.add(id);
    path.push(entry);
    id = entry.parentId;
  }
  return path.reverse();
}

/**
 * The message an entry puts into the model's context, if any: a conversation message,
 * an extension's `custom_message`, or a `branch_summary` (as pi builds its context).
 * A compaction stands for more than one; see `entryMessages`.
 */
export function entryMessage(entry: SessionEntry): AgentMessage | undefined {
  if (!isKnownEntry(entry)) return undefined;
  const time = Date.parse(entry.timestamp);
  const timestamp = Number.isNaN(time) ? 0 : time;
  switch (entry.type) {
    case "message":
      return entry.message;
    case "custom_message":
      return {
        role: "custom",
        customType: entry.customType,
        content: entry.content,
        display: entry.display,
        ...(entry.details !== undefined ? { details: entry.details } : {}),
        timestamp,
      };
    case "branch_summary":
      return entry.summary
        ? { role: "branchSummary", summary: entry.summary, fromId: entry.fromId, timestamp }
        : undefined;
    default:
      return undefined;
  }
}

/**
 * The messages an entry contributes when it is in the context (pi 1.6's
 * `sessionEntryToContextMessages`): its message, or for a compaction its saved system
 * message and its summary.
 */
export function entryMessages(entry: SessionEntry): AgentMessage[] {
  if (entry.type === "compaction" && isKnownEntry(entry)) {
    const compaction = entry as CompactionEntry;
    const summary = compactionSummaryMessage(compaction);
    return compaction.systemMessage ? [compaction.systemMessage, summary] : [summary];
  }
  const message = entryMessage(entry);
  return message ? [message] : [];
}

/**
 * The entries of a root→leaf path that make the model's context (pi's
 * `buildContextEntries`). Without a compaction, the whole path. With one, the latest
 * compaction first, then the kept entries from its `firstKeptEntryId` (system messages
 * left out: the compaction's saved one stands for them), then everything after it.
 */
export function contextEntries(path: readonly SessionEntry[]): SessionEntry[] {
  let compactionIndex = -1;
  path.forEach((entry, index) => {
    if (entry.type === "compaction" && isKnownEntry(entry)) compactionIndex = index;
  });
  if (compactionIndex < 0) return [...path];
  const compaction = path[compactionIndex] as CompactionEntry;
  const selected: SessionEntry[] = [compaction];
  // A kept entry that is not on this path (a damaged file) keeps nothing: the summary still stands.
  const firstKept = path.findIndex((e, i) => i < compactionIndex && e.id === compaction.firstKeptEntryId);
  if (firstKept >= 0) {
    for (const entry of path.slice(firstKept, compactionIndex)) {
      if (!(entry.type === "message" && (entry as MessageEntry).message?.role === "system")) selected.push(entry);
    }
  }
  selected.push(...path.slice(compactionIndex + 1));
  return selected;
}

/** One context entry and the messages it contributes after its latest context edit. */
export interface ProjectedEntry {
  source: SessionEntry;
  messages: AgentMessage[];
}

/** A path's context with where each message came from (pi 1.6's `SessionProjection`). */
export interface SessionProjection extends SessionContext {
  entries: ProjectedEntry[];
}

/**
 * What the model sees of a root→leaf path (pi 1.6's `buildSessionProjection`): the
 * context entries, each with the latest `context_edit` that targets it applied (omitted,
 * or its content replaced; the raw entry is never changed). Only the leading compaction
 * contributes its checkpoint and summary; an older one inside the kept range adds nothing.
 * The model follows pi: the last `model_change` or assistant reply on the path.
 */
export function buildSessionProjection(path: readonly SessionEntry[]): SessionProjection {
  const projection: SessionProjection = { messages: [], entries: [] };
  for (const entry of path) {
    if (!isKnownEntry(entry)) continue;
    switch (entry.type) {
      case "model_change":
        projection.model = { provider: entry.provider, modelId: entry.modelId };
        break;
      case "thinking_level_change":
        projection.thinkingLevel = entry.thinkingLevel;
        break;
      case "session_info":
        projection.name = entry.name?.trim() || undefined;
        break;
      case "message":
        if (entry.message.role === "assistant") {
          projection.model = { provider: entry.message.provider, modelId: entry.message.model };
        }
        break;
    }
  }
  if (projection.name === undefined) delete projection.name;

  const selected = contextEntries(path);
  const edits = new Map<string, ContextEditEntry>();
  for (const entry of selected) {
    if (entry.type === "context_edit" && isKnownEntry(entry)) {
      const edit = entry as ContextEditEntry;
      edits.set(edit.targetId, edit);
    }
  }
  selected.forEach((source, index) => {
    const messages =
      source.type === "compaction" && index > 0 ? [] : editedMessages(entryMessages(source), edits.get(source.id));
    projection.entries.push({ source, messages });
    projection.messages.push(...messages);
  });
  return projection;
}

/** What the model sees of a root→leaf path: the projection's messages, model, thinking level and name. */
export function buildSessionContext(path: readonly SessionEntry[]): SessionContext {
  const { entries: _, ...context } = buildSessionProjection(path);
  return context;
}

/** An entry's messages after an edit: none when omitted, else each editable one with its content replaced. */
export function editedMessages(messages: AgentMessage[], edit: ContextEditEntry | undefined): AgentMessage[] {
  if (!edit) return messages;
  const replacement = edit.replacement;
  if (replacement === null) return [];
  return messages.map((message) => {
    switch (message.role) {
      case "assistant":
        return { ...message, content: blocksOf(replacement.content) as typeof message.content };
      case "toolResult":
        return { ...message, content: blocksOf(replacement.content) as typeof message.content };
      case "user":
      case "custom":
        return { ...message, content: replacement.content as typeof message.content };
      default:
        return message;
    }
  });
}

/** Assistant and tool-result content is a block list: a string replacement becomes one text block, as pi. */
function blocksOf(content: NonNullable<ContextEditEntry["replacement"]>["content"]): unknown[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}

/** The `compactionSummary` message a compaction entry stands for. */
export function compactionSummaryMessage(entry: CompactionEntry): AgentMessage {
  const time = Date.parse(entry.timestamp);
  return {
    role: "compactionSummary",
    summary: entry.summary,
    tokensBefore: entry.tokensBefore,
    timestamp: Number.isNaN(time) ? 0 : time,
  };
}

/** The text of a user message (text blocks joined; images contribute nothing). */
export function userMessageText(message: UserMessage): string {
  if (typeof message.content === "string") return message.content;
  return message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
}
