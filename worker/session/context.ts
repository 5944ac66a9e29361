/**
 * Session-tree projection, pure: walk from a leaf to the root, and turn that path into
 * what the model sees (messages, model, thinking level, name).
 */
import type { AgentMessage, ThinkingLevel, UserMessage } from "../../shared/schema/messages.js";
import { isKnownEntry, type CompactionEntry, type SessionEntry } from "./entries.js";

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
 * The context for a root→leaf path. The last compaction on the path wins: its summary
 * comes first, then the kept entries from `firstKeptEntryId` up to it, then everything
 * after it. Branch summaries and extension messages count as messages; `custom` and
 * `label` entries and entries we do not interpret are skipped. The model follows pi: the last
 * `model_change` or assistant reply on the path.
 */
export function buildSessionContext(path: readonly SessionEntry[]): SessionContext {
  const context: SessionContext = { messages: [] };
  let compactionIndex = -1;
  path.forEach((entry, index) => {
    if (!isKnownEntry(entry)) return;
    switch (entry.type) {
      case "model_change":
        context.model = { provider: entry.provider, modelId: entry.modelId };
        break;
      case "thinking_level_change":
        context.thinkingLevel = entry.thinkingLevel;
        break;
      case "session_info":
        context.name = entry.name.trim() || undefined;
        break;
      case "compaction":
        compactionIndex = index;
        break;
      case "message":
        if (entry.message.role === "assistant") {
          context.model = { provider: entry.message.provider, modelId: entry.message.model };
        }
        break;
    }
  });
  if (context.name === undefined) delete context.name;

  const pushMessage = (entry: SessionEntry) => {
    const message = entryMessage(entry);
    if (message) context.messages.push(message);
  };
  if (compactionIndex < 0) {
    path.forEach(pushMessage);
    return context;
  }
  const compaction = path[compactionIndex] as CompactionEntry;
  context.messages.push(compactionSummaryMessage(compaction));
  const firstKept = path.findIndex((e, i) => i < compactionIndex && e.id === compaction.firstKeptEntryId);
  // A kept entry that is not on this path (a damaged file) keeps nothing: the summary still stands.
  if (firstKept >= 0) path.slice(firstKept, compactionIndex).forEach(pushMessage);
  path.slice(compactionIndex + 1).forEach(pushMessage);
  return context;
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
