/**
 * Fork and clone: new session files made from the current path of an open store. The
 * source file is only read, never written; the new file's header names it as parent.
 */
import { userMessageText } from "./context.js";
import { isKnownEntry, type SessionEntry } from "./entries.js";
import { SessionFileError } from "./parse.js";
import { writeNewSessionFile, type SessionStore } from "./session-file.js";

/** A user message on the current path that a fork can start from (pi's `get_fork_messages`). */
export interface ForkMessage {
  entryId: string;
  text: string;
}

/** User messages on the current path, root first. Messages without text (image only) are left out, as in pi. */
export function forkMessages(store: SessionStore): ForkMessage[] {
  const result: ForkMessage[] = [];
  for (const entry of store.pathToLeaf()) {
    if (!isKnownEntry(entry) || entry.type !== "message" || entry.message.role !== "user") continue;
    const text = userMessageText(entry.message);
    if (text) result.push({ entryId: entry.id, text });
  }
  return result;
}

/**
 * Fork at a user message: a new session in `dir` holding the current path up to, not
 * including, that message. Returns the new file and the message's text, so the caller
 * can offer it for editing. Throws when the entry is not a user message on the current path.
 */
export function forkSession(store: SessionStore, entryId: string, dir: string): { path: string; text: string } {
  const path = store.pathToLeaf();
  const index = path.findIndex((entry) => entry.id === entryId);
  const entry = path[index];
  if (!entry || !isKnownEntry(entry) || entry.type !== "message" || entry.message.role !== "user") {
    const onFile = store.getEntry(entryId) !== undefined;
    throw new SessionFileError(
      store.path,
      `cannot fork at "${entryId}": ${
        !onFile ? "no such entry" : !entry ? "that entry is on another branch" : "it is not a user message"
      }; get_fork_messages lists the entries to fork at`,
    );
  }
  const created = copyToNewFile(store, path.slice(0, index), dir);
  return { path: created, text: userMessageText(entry.message) };
}

/** Clone: a new session in `dir` holding the whole current path. Returns the new file's path. */
export function cloneSession(store: SessionStore, dir: string): string {
  return copyToNewFile(store, store.pathToLeaf(), dir);
}

function copyToNewFile(store: SessionStore, entries: SessionEntry[], dir: string): string {
  return writeNewSessionFile({ dir, cwd: store.header.cwd, parentSession: store.path, entries }).path;
}
