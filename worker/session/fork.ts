/**
 * Fork and clone: which entries a fork keeps, and the new session made of them: a new
 * file made from an open session file (only read, never written; the new file's header
 * names it as parent), or, for a session kept in memory (`--no-session`), a new session in
 * memory, as pi's in-memory `createBranchedSession` (no parent: there is no file to name).
 */
import { randomUUID } from "node:crypto";
import { userMessageText } from "./context.js";
import type { CompactionEntry, LabelEntry, SessionEntry } from "../../shared/schema/session.js";
import { isKnownEntry } from "./entries.js";
import { SessionFileError } from "./parse.js";
import { type FileSessionStore, SessionStore, writeNewSessionFile } from "./session-file.js";
import { labelsOf } from "./tree.js";

/** A user message that a fork can start from (pi's `get_fork_messages`). */
export interface ForkMessage {
  entryId: string;
  text: string;
}

/**
 * The user messages of a session, in file order, as pi's `get_fork_messages` lists them:
 * every branch's, not only the current path's (pi reads all entries). Messages without
 * text (image only) are left out, as in pi.
 */
export function forkMessages(entries: readonly SessionEntry[]): ForkMessage[] {
  const result: ForkMessage[] = [];
  for (const entry of entries) {
    if (!isKnownEntry(entry) || entry.type !== "message" || entry.message.role !== "user") continue;
    const text = userMessageText(entry.message);
    if (text) result.push({ entryId: entry.id, text });
  }
  return result;
}

/**
 * The entries a fork at user message `entryId` keeps: the path from the root up to, not
 * including, that message, on whichever branch it is (as pi's fork), and its text.
 * Throws when `entryId` is not a user message of `entries`.
 */
export function forkPoint(entries: readonly SessionEntry[], entryId: string): { path: SessionEntry[]; text: string } {
  const byId = new Map(entries.map((e) => [e.id, e]));
  const entry = byId.get(entryId);
  if (!entry || !isKnownEntry(entry) || entry.type !== "message" || entry.message.role !== "user") {
    throw new Error(
      `cannot fork at "${entryId}": ${!entry ? "no such entry" : "it is not a user message"}; get_fork_messages lists the entries to fork at`,
    );
  }
  const path: SessionEntry[] = [];
  for (
    let at = entry.parentId ? byId.get(entry.parentId) : undefined;
    at;
    at = at.parentId ? byId.get(at.parentId) : undefined
  )
    path.unshift(at);
  return { path, text: userMessageText(entry.message) };
}

/**
 * Fork at a user message: a new session in `dir` holding the path up to, not including,
 * that message. Returns the new file and the message's text, so the caller can offer it
 * for editing. Throws when the entry is not a user message of the session.
 */
export function forkSession(store: FileSessionStore, entryId: string, dir: string): { path: string; text: string } {
  let point: { path: SessionEntry[]; text: string };
  try {
    point = forkPoint(store.entries, entryId);
  } catch (error) {
    throw new SessionFileError(store.path, (error as Error).message);
  }
  return { path: copyToNewFile(store, branchedEntries(store.entries, point.path), dir), text: point.text };
}

/** Clone: a new session in `dir` (with session id `id`, else a new one) holding the whole current path. Returns the new file's path. */
export function cloneSession(store: FileSessionStore, dir: string, id?: string): string {
  return copyToNewFile(store, branchedEntries(store.entries, store.pathToLeaf()), dir, id);
}

/**
 * The session a fork at user message `entryId` (or, without one, a clone of the current
 * path) of a session kept in memory becomes: a new session in memory holding those
 * entries under a new id. Returns it and the message's text (a fork's).
 */
export function branchInMemory(store: SessionStore, entryId?: string): { store: SessionStore; text?: string } {
  const point =
    entryId === undefined ? { path: store.pathToLeaf(), text: undefined } : forkPoint(store.entries, entryId);
  const entries = branchedEntries(store.entries, point.path);
  return { store: SessionStore.inMemory({ cwd: store.header.cwd, entries }), text: point.text };
}

function copyToNewFile(store: FileSessionStore, entries: SessionEntry[], dir: string, id?: string): string {
  return writeNewSessionFile({ dir, cwd: store.header.cwd, parentSession: store.path, entries, id }).path;
}

/**
 * What a fork or clone of `path` holds, as pi 1.6.0's `createBranchedSession` writes it:
 * the path's label entries left out and the rest chained again (each entry's parent is the
 * one kept before it; a compaction whose kept part started at a label starts at the entry
 * after it), then one label entry for each label the session (`all`, every branch) gives
 * an entry of the path now, with that label's time, chained after them under new ids.
 * Pure but for the ids.
 */
export function branchedEntries(all: readonly SessionEntry[], path: readonly SessionEntry[]): SessionEntry[] {
  const out: SessionEntry[] = [];
  // A label's id -> the entry kept after it, for a compaction that named the label.
  const afterLabel = new Map<string, string>();
  let labels: string[] = [];
  let parentId: string | null = null;
  for (const entry of path) {
    if (entry.type === "label") {
      labels.push(entry.id);
      continue;
    }
    for (const id of labels) afterLabel.set(id, entry.id);
    labels = [];
    const copy = { ...entry, parentId } as SessionEntry;
    if (entry.type === "compaction") {
      const kept = (entry as CompactionEntry).firstKeptEntryId;
      if (kept !== entry.id) (copy as CompactionEntry).firstKeptEntryId = afterLabel.get(kept) ?? kept;
    }
    out.push(copy);
    parentId = entry.id;
  }
  const ids = new Set(out.map((e) => e.id));
  for (const [targetId, { label, timestamp }] of labelsOf(all)) {
    if (!ids.has(targetId)) continue;
    let id = randomUUID().slice(0, 8);
    while (ids.has(id)) id = randomUUID().slice(0, 8);
    ids.add(id);
    const entry: LabelEntry = { type: "label", id, parentId, timestamp, targetId, label };
    out.push(entry);
    parentId = id;
  }
  return out;
}
