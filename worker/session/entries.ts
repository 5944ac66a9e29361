/**
 * How the store interprets the entries of a session file (their schemas are in
 * shared/schema/session.ts): which it understands, which failed their schema on load and
 * stay opaque, and the shape of an entry before the store stamps it.
 */
import { KNOWN_ENTRY_SCHEMAS, type KnownEntry, type SessionEntry } from "../../shared/schema/session.js";

/**
 * A compaction's `firstKeptEntryId` before it is appended, for pi's self-retaining
 * compaction (`firstKeptEntryId: null` in a boundary draft): the store writes the entry's
 * own id, so the compaction keeps nothing before it.
 */
export const KEEP_NOTHING = "";

/** Known-type entries that failed their schema on load: kept, but as opaque entries. In memory only. */
const invalidEntries = new WeakSet<object>();

/** Treat this loaded entry as opaque from now on (it failed its schema), so the tree and the file stay whole. */
export function markInvalid(entry: SessionEntry): void {
  invalidEntries.add(entry);
}

const KNOWN_ROLES = new Set<string>([
  "user",
  "assistant",
  "toolResult",
  "bashExecution",
  "compactionSummary",
  "branchSummary",
  "custom",
  "system",
]);

/**
 * Whether an entry is one we interpret. A `message` entry counts only when its role is
 * one of ours, so pi's `custom` messages stay opaque instead of failing validation.
 */
export function isKnownEntry(entry: SessionEntry): entry is KnownEntry {
  if (!Object.hasOwn(KNOWN_ENTRY_SCHEMAS, entry.type)) return false;
  if (invalidEntries.has(entry)) return false;
  if (entry.type !== "message") return true;
  const message = (entry as { message?: { role?: unknown } }).message;
  return typeof message?.role === "string" && KNOWN_ROLES.has(message.role);
}

/** A known entry before the store stamps it with `id`, `parentId` and `timestamp`. */
export type NewEntry = KnownEntry extends infer E
  ? E extends KnownEntry
    ? Omit<E, "id" | "parentId" | "timestamp">
    : never
  : never;
