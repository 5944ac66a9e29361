/**
 * The session as a tree, pure: nodes with their children and labels (pi's `getTree`),
 * what navigating from one leaf to another leaves behind (pi's branch-summary
 * collection), where the leaf lands, and the files a stretch of conversation read or
 * changed. The session layer does the model call and the writes around these.
 */
import type { AgentMessage } from "../../shared/schema/messages.js";
import { editedMessages, entryMessage, pathTo, userMessageText } from "./context.js";
import type { ContextEditEntry, SessionEntry } from "../../shared/schema/session.js";
import { isKnownEntry } from "./entries.js";

/** One node of `get_tree`: pi's `SessionTreeNode`. */
export interface TreeNode {
  entry: SessionEntry;
  children: TreeNode[];
  /** The entry's current label (the latest `label` entry aimed at it), if any. */
  label?: string;
  labelTimestamp?: string;
}

/** Current label of every labelled entry: the latest `label` entry for it wins; an empty label clears. */
export function labelsOf(entries: readonly SessionEntry[]): Map<string, { label: string; timestamp: string }> {
  const labels = new Map<string, { label: string; timestamp: string }>();
  for (const entry of entries) {
    if (!isKnownEntry(entry) || entry.type !== "label") continue;
    if (entry.label) labels.set(entry.targetId, { label: entry.label, timestamp: entry.timestamp });
    else labels.delete(entry.targetId);
  }
  return labels;
}

/**
 * Every entry as a forest: roots are entries without a parent, and (as in pi) entries
 * whose parent is missing. Children are ordered oldest first. Iterative, so a long
 * session does not exhaust the stack.
 */
export function buildTree(entries: readonly SessionEntry[]): TreeNode[] {
  const labels = labelsOf(entries);
  const nodes = new Map<string, TreeNode>();
  for (const entry of entries) {
    const label = labels.get(entry.id);
    nodes.set(entry.id, {
      entry,
      children: [],
      ...(label ? { label: label.label, labelTimestamp: label.timestamp } : {}),
    });
  }
  const roots: TreeNode[] = [];
  for (const entry of entries) {
    const node = nodes.get(entry.id)!;
    const parent = entry.parentId === null || entry.parentId === entry.id ? undefined : nodes.get(entry.parentId);
    (parent ? parent.children : roots).push(node);
  }
  const stack = [...roots];
  while (stack.length > 0) {
    const node = stack.pop()!;
    node.children.sort((a, b) => Date.parse(a.entry.timestamp) - Date.parse(b.entry.timestamp));
    stack.push(...node.children);
  }
  return roots;
}

/**
 * The entries of the branch being left when moving from `oldLeafId` to `targetId`:
 * from the old leaf back to (not including) the deepest entry both paths share, in
 * chronological order, with that shared entry's id (null when they share none).
 */
export function branchBeingLeft(
  byId: ReadonlyMap<string, SessionEntry>,
  oldLeafId: string | null,
  targetId: string,
): { entries: SessionEntry[]; commonAncestorId: string | null } {
  if (oldLeafId === null) return { entries: [], commonAncestorId: null };
  const oldPath = pathTo(byId, oldLeafId);
  const targetIds = new Set(pathTo(byId, targetId).map((e) => e.id));
  let common = -1;
  for (let i = oldPath.length - 1; i >= 0; i--) {
    if (targetIds.has(oldPath[i]!.id)) {
      common = i;
      break;
    }
  }
  return { entries: oldPath.slice(common + 1), commonAncestorId: common >= 0 ? oldPath[common]!.id : null };
}

/**
 * Where the leaf goes when navigating to `target`, as pi does it: to a user message (or
 * an extension message) means "edit and resend it", so the leaf is its parent and its
 * text is handed back; to anything else, the leaf is the entry itself.
 */
export function navigationLeaf(target: SessionEntry): { leafId: string | null; editorText?: string } {
  if (isKnownEntry(target)) {
    if (target.type === "message" && target.message.role === "user") {
      return { leafId: target.parentId, editorText: userMessageText(target.message) };
    }
    if (target.type === "custom_message") {
      const text =
        typeof target.content === "string"
          ? target.content
          : target.content.map((c) => (c.type === "text" ? c.text : "")).join("");
      return { leafId: target.parentId, editorText: text };
    }
  }
  return { leafId: target.id };
}

/** Files a stretch of conversation read and changed, from its tool calls (pi's compaction `details`). */
export interface FileLists {
  readFiles: string[];
  modifiedFiles: string[];
}

/** `read`/`write`/`edit` paths of the assistant tool calls in `messages`; a file both read and changed counts as changed. Sorted. */
export function fileLists(messages: readonly AgentMessage[], earlier: FileLists[] = []): FileLists {
  const read = new Set<string>();
  const modified = new Set<string>();
  for (const lists of earlier) {
    lists.readFiles.forEach((f) => read.add(f));
    lists.modifiedFiles.forEach((f) => modified.add(f));
  }
  for (const message of messages) {
    if (message.role !== "assistant") continue;
    for (const block of message.content) {
      if (block.type !== "toolCall") continue;
      const path = (block.arguments as { path?: unknown }).path;
      if (typeof path !== "string") continue;
      if (block.name === "read") read.add(path);
      else if (block.name === "write" || block.name === "edit") modified.add(path);
    }
  }
  return { readFiles: [...read].filter((f) => !modified.has(f)).sort(), modifiedFiles: [...modified].sort() };
}

/**
 * Messages of the entries being left that a branch summary describes (tool results are
 * implied by the calls), as the model saw them: as in pi 1.6, the latest `context_edit`
 * of each among `entries` applies, so a failed reply a retry omitted is not summarized.
 */
export function branchMessages(entries: readonly SessionEntry[]): AgentMessage[] {
  const edits = new Map<string, ContextEditEntry>();
  for (const entry of entries) {
    if (isKnownEntry(entry) && entry.type === "context_edit") edits.set(entry.targetId, entry);
  }
  const messages: AgentMessage[] = [];
  for (const entry of entries) {
    if (isKnownEntry(entry) && entry.type === "compaction") {
      messages.push({
        role: "compactionSummary",
        summary: entry.summary,
        tokensBefore: entry.tokensBefore,
        timestamp: Date.parse(entry.timestamp) || 0,
      });
      continue;
    }
    const message = entryMessage(entry);
    if (!message || message.role === "toolResult") continue;
    messages.push(...editedMessages([message], edits.get(entry.id)));
  }
  return messages;
}

/** File lists recorded by earlier (non-extension) branch summaries among `entries`, so lists accumulate as in pi. */
export function earlierFileLists(entries: readonly SessionEntry[]): FileLists[] {
  const lists: FileLists[] = [];
  for (const entry of entries) {
    if (!isKnownEntry(entry) || entry.type !== "branch_summary" || entry.fromHook) continue;
    const details = entry.details as Partial<FileLists> | undefined;
    lists.push({
      readFiles: Array.isArray(details?.readFiles)
        ? details.readFiles.filter((f): f is string => typeof f === "string")
        : [],
      modifiedFiles: Array.isArray(details?.modifiedFiles)
        ? details.modifiedFiles.filter((f): f is string => typeof f === "string")
        : [],
    });
  }
  return lists;
}

/** The preamble pi puts before a branch summary's text. */
export const BRANCH_SUMMARY_PREAMBLE =
  "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n";

const BRANCH_SUMMARY_FORMAT = `## Goal
[What was the user trying to accomplish in this branch?]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Work that was started but not finished]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [What should happen next to continue this work]`;

/**
 * The request asking the model to summarize a branch being left: the serialized
 * conversation, then the instructions (replaced by `customInstructions` when
 * `replaceInstructions`, else extended by them).
 */
export function buildBranchSummaryRequest(
  conversation: string,
  customInstructions?: string,
  replaceInstructions?: boolean,
): string {
  const base = `Create a structured summary of this conversation branch for context when returning later.\n\nUse this EXACT format:\n\n${BRANCH_SUMMARY_FORMAT}\n\nKeep each section concise. Preserve exact file paths, function names, and error messages.`;
  const custom = customInstructions?.trim();
  const instructions = custom ? (replaceInstructions ? custom : `${base}\n\nAdditional focus: ${custom}`) : base;
  return `<conversation>\n${conversation}\n</conversation>\n\n${instructions}`;
}

/** The file lists as pi appends them to a summary's text. */
export function formatFileLists(lists: FileLists): string {
  const sections: string[] = [];
  if (lists.readFiles.length > 0) sections.push(`<read-files>\n${lists.readFiles.join("\n")}\n</read-files>`);
  if (lists.modifiedFiles.length > 0)
    sections.push(`<modified-files>\n${lists.modifiedFiles.join("\n")}\n</modified-files>`);
  return sections.length > 0 ? `\n\n${sections.join("\n\n")}` : "";
}
