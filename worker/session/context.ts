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
 * entry (empty path). Callers guarantee every parent is in `byId` (the loader checks it).
 */
export function pathTo(byId: ReadonlyMap<string, SessionEntry>, leafId: string | null): SessionEntry[] {
  const path: SessionEntry[] = [];
  let id = leafId;
  while (id !== null) {
    const entry = byId.get(id);
    if (!entry) throw new Error(`session entry "${id}" is not in this session`);
    path.push(entry);
    id = entry.parentId;
  }
  return path.reverse();
}

/**
 * The context for a root→leaf path. The last compaction on the path wins: its summary
 * comes first, then the kept entries from `firstKeptEntryId` up to it, then everything
 * after it. Entries we do not interpret are skipped. The model follows pi: the last
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
    if (isKnownEntry(entry) && entry.type === "message") context.messages.push(entry.message);
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
