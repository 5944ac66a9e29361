/**
 * pi 1.6's actionable boundaries (`turn_end`, `agent_before_settle`): extension handlers propose
 * session entries (`custom`, `custom_message`, `context_edit`, `compaction`) and whether the agent goes on for one
 * more request. The drafts are checked against the branch before anything is written, and
 * previewed as the context they would make, so a handler sees what its proposal does. Pure.
 */
import { Usage, type AgentMessage } from "../../shared/schema/messages.js";
import { toLlmMessages } from "../agent/to-llm.js";
import { buildSessionProjection } from "../session/context.js";
import { checker } from "../../shared/validate.js";
import { type CompactionEntry, KNOWN_ENTRY_SCHEMAS, type SessionEntry } from "../../shared/schema/session.js";
import { isKnownEntry, KEEP_NOTHING, type NewEntry } from "../session/entries.js";

/** The context a boundary's handlers see: the projection with the proposed entries, and whether a request could follow. */
export interface BoundaryContext {
  contextEntries: { sourceEntry: SessionEntry; messages: AgentMessage[] }[];
  contextMessages: AgentMessage[];
  llmMessages: ReturnType<typeof toLlmMessages>;
  pendingMessages: AgentMessage[];
  canContinue: boolean;
}

/**
 * The drafts a handler returned, as entries to append; throws, naming the draft, on one that
 * is not a `custom`, `custom_message` or `context_edit` of the right shape, or an edit whose
 * target is not an editable entry of `branch` (pi's rules).
 */
export function checkDrafts(drafts: unknown, branch: readonly SessionEntry[]): NewEntry[] {
  if (!Array.isArray(drafts)) throw new Error("entries must be an array");
  const byId = new Map(branch.map((e) => [e.id, e]));
  return drafts.map((draft: Record<string, unknown>, i) => {
    const entry = draftEntry(draft, i, byId);
    // The store writes only what loads again: check against its schema now, before anything is written.
    const check = checker(KNOWN_ENTRY_SCHEMAS[entry.type])({ ...entry, id: "draft", parentId: null, timestamp: "" });
    if (!check.ok) throw new Error(`entries[${i}]: ${check.errors.join("; ")}`);
    try {
      JSON.stringify(entry);
    } catch (err) {
      throw new Error(`entries[${i}] cannot be written as JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
    return entry;
  });
}

/** One draft as the entry it proposes; throws, naming it, when it is not one of the three. */
function draftEntry(draft: Record<string, unknown>, i: number, byId: ReadonlyMap<string, SessionEntry>): NewEntry {
  const where = `entries[${i}]`;
  if (!draft || typeof draft !== "object") throw new Error(`${where} is not an object`);
  switch (draft.type) {
    case "custom":
      if (typeof draft.customType !== "string") throw new Error(`${where}: customType must be a string`);
      return {
        type: "custom",
        customType: draft.customType,
        ...(draft.data !== undefined ? { data: draft.data } : {}),
      };
    case "custom_message": {
      if (typeof draft.customType !== "string") throw new Error(`${where}: customType must be a string`);
      const content = draft.content;
      if (typeof content !== "string" && !Array.isArray(content))
        throw new Error(`${where}: content must be a string or content blocks`);
      return {
        type: "custom_message",
        customType: draft.customType,
        content: content as Extract<NewEntry, { type: "custom_message" }>["content"],
        display: draft.display === true,
        ...(draft.details !== undefined ? { details: draft.details } : {}),
      };
    }
    case "context_edit": {
      const target = typeof draft.targetId === "string" ? byId.get(draft.targetId) : undefined;
      if (!target) throw new Error(`${where}: targetId ${JSON.stringify(draft.targetId)} is not on this branch`);
      const role = (target as { message?: { role?: string } }).message?.role;
      const editable =
        isKnownEntry(target) &&
        (target.type === "custom_message" ||
          (target.type === "message" && (role === "user" || role === "assistant" || role === "toolResult")));
      if (!editable) throw new Error(`Entry ${target.id} does not contribute editable model content`);
      const replacement = draft.replacement as { content?: unknown } | null | undefined;
      if (replacement !== null && (typeof replacement !== "object" || replacement.content === undefined))
        throw new Error(`${where}: replacement must be null or {content}`);
      return {
        type: "context_edit",
        targetId: target.id,
        replacement: replacement as Extract<NewEntry, { type: "context_edit" }>["replacement"],
      };
    }
    case "compaction": {
      if (typeof draft.summary !== "string") throw new Error(`${where}: summary must be a string`);
      const kept = draft.firstKeptEntryId;
      if (kept !== null && typeof kept !== "string")
        throw new Error(`${where}: firstKeptEntryId must be an entry id, or null to keep nothing before it`);
      return {
        type: "compaction",
        summary: draft.summary,
        firstKeptEntryId: kept ?? KEEP_NOTHING,
        // Counted when it is written (the context then, as pi counts it).
        tokensBefore: 0,
        fromHook: true,
        ...(draft.details !== undefined ? { details: draft.details } : {}),
        ...(draft.usage !== undefined ? { usage: usageOf(draft.usage, where) } : {}),
      };
    }
    default:
      throw new Error(
        `${where}: type ${JSON.stringify(draft.type)} is not a boundary entry (custom, custom_message, context_edit or compaction)`,
      );
  }
}

/** The context `entries` would make after `branch`, and whether the agent could make one more request from it. */
export function previewBoundary(
  branch: readonly SessionEntry[],
  entries: readonly NewEntry[],
  pendingMessages: AgentMessage[],
): BoundaryContext {
  let parentId = branch.at(-1)?.id ?? null;
  const drafted = entries.map((entry, i) => {
    const id = `draft${i}`;
    const full = { ...entry, id, parentId, timestamp: new Date(0).toISOString() } as SessionEntry;
    if (full.type === "compaction" && (full as CompactionEntry).firstKeptEntryId === KEEP_NOTHING)
      (full as CompactionEntry).firstKeptEntryId = id;
    parentId = id;
    return full;
  });
  const projection = buildSessionProjection([...branch, ...drafted]);
  const llmMessages = toLlmMessages(projection.messages);
  const last = llmMessages.at(-1);
  return {
    contextEntries: projection.entries.map((e) => ({ sourceEntry: e.source, messages: e.messages })),
    contextMessages: projection.messages,
    llmMessages,
    pendingMessages,
    canContinue: (last !== undefined && last.role !== "assistant") || pendingMessages.length > 0,
  };
}

/** A draft's `usage`, checked: pi's Usage (tokens and cost), as the session's totals read it. */
function usageOf(value: unknown, where: string): Usage {
  const checked = checker(Usage)(value);
  if (!checked.ok) throw new Error(`${where}: usage must be pi's Usage (${checked.errors.join("; ")})`);
  return checked.value;
}
