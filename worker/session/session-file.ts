/**
 * One open session file: an append-only JSONL tree in pi's v3 format. Every append is
 * written with a synchronous write before it returns, so a worker killed at any moment
 * loses nothing it has already reported; the next open drops at most a torn last line.
 */
import { randomUUID } from "node:crypto";
import { closeSync, mkdirSync, openSync, readFileSync, truncateSync, writeFileSync, writeSync } from "node:fs";
import { join, resolve } from "node:path";
import { checker } from "../../shared/validate.js";
import { buildSessionContext, pathTo, type SessionContext } from "./context.js";
import {
  isKnownEntry,
  KNOWN_ENTRY_SCHEMAS,
  SESSION_VERSION,
  type KnownEntry,
  type NewEntry,
  type SessionEntry,
  type SessionHeader,
} from "./entries.js";
import { parseSessionFile, SessionFileError } from "./parse.js";
import { buildTree, labelsOf, type TreeNode } from "./tree.js";

export { SessionFileError } from "./parse.js";

/** Options of `SessionStore.open`. */
export interface OpenOptions {
  /** Where load warnings (a dropped torn line) go; stderr by default, never stdout (the RPC channel). */
  warn?: (message: string) => void;
}

/** What a new session file starts with. */
export interface NewSessionFile {
  /** Folder of the new file; created when missing. */
  dir: string;
  cwd: string;
  /** The session this one was forked or cloned from. */
  parentSession?: string;
  /** Entries to copy in, in order (root first). Written verbatim. */
  entries?: readonly SessionEntry[];
}

/**
 * File name of a session, as pi names it: `<ISO time with : and . as ->_<session id>.jsonl`,
 * so names sort by creation time and carry the id for prefix lookup.
 */
export function sessionFileName(sessionId: string, createdAt: Date): string {
  return `${createdAt.toISOString().replace(/[:.]/g, "-")}_${sessionId}.jsonl`;
}

/**
 * Write a complete new session file (header plus `entries`) and return its path and
 * header. Fails rather than overwrite an existing file.
 */
export function writeNewSessionFile(spec: NewSessionFile): { path: string; header: SessionHeader } {
  const now = new Date();
  // A random v4 id rather than pi's time-ordered v7: the file name already orders by
  // time, and random leading digits keep short `--session <prefix>` lookups unique.
  const id = randomUUID();
  const header: SessionHeader = {
    type: "session",
    version: SESSION_VERSION,
    id,
    timestamp: now.toISOString(),
    cwd: spec.cwd,
    ...(spec.parentSession !== undefined ? { parentSession: spec.parentSession } : {}),
  };
  mkdirSync(spec.dir, { recursive: true });
  const path = resolve(join(spec.dir, sessionFileName(id, now)));
  const lines = [header, ...(spec.entries ?? [])].map((value) => `${JSON.stringify(value)}\n`);
  writeFileSync(path, lines.join(""), { flag: "wx" });
  return { path, header };
}

/**
 * An open session file. Appends go to disk synchronously; the leaf is the position the
 * next append hangs from (moved by `append` and `setLeaf`). Not safe to share between
 * processes: one worker owns one file.
 */
export class SessionStore {
  private readonly byId = new Map<string, SessionEntry>();
  private readonly all: SessionEntry[] = [];
  private leaf: string | null = null;
  private fd: number | undefined;

  private constructor(
    /** Absolute path of the file. */
    readonly path: string,
    /** The file's `session` header line. */
    readonly header: SessionHeader,
    entries: readonly SessionEntry[],
  ) {
    for (const entry of entries) this.index(entry);
    this.fd = openSync(path, "a");
  }

  /** Start a new session file in `dir` (created when missing), with only its header. */
  static create(options: { dir: string; cwd: string; parentSession?: string }): SessionStore {
    const { path, header } = writeNewSessionFile(options);
    return new SessionStore(path, header, []);
  }

  /**
   * Load a session file, written by us or by pi 0.73. A torn last line is dropped with a
   * warning and cut from the file so the next append starts on a fresh line; damage in
   * the middle is skipped or kept uninterpreted with a warning naming the line (see
   * `parseSessionFile`); only a missing header throws. The leaf is the last entry.
   */
  static open(path: string, options: OpenOptions = {}): SessionStore {
    const absolute = resolve(path);
    let bytes: Buffer;
    try {
      bytes = readFileSync(absolute);
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code === "ENOENT" ? "does not exist" : String(error);
      throw new SessionFileError(absolute, reason);
    }
    const parsed = parseSessionFile(absolute, bytes);
    const warn = options.warn ?? ((message: string) => process.stderr.write(`warning: ${message}\n`));
    for (const warning of parsed.warnings) warn(`session file ${absolute}: ${warning}`);
    if (parsed.torn) {
      warn(
        `session file ${absolute}: line ${parsed.torn.lineNumber} was cut off by a crash and is skipped; ` +
          `the ${parsed.entries.length} entries before it are intact`,
      );
      truncateSync(absolute, parsed.torn.keepBytes);
    }
    const store = new SessionStore(absolute, parsed.header, parsed.entries);
    if (parsed.missingNewline) store.write("\n");
    return store;
  }

  /** The session id from the header. */
  get sessionId(): string {
    return this.header.id;
  }

  /** The entry the next append hangs from; null before the first entry. */
  get leafId(): string | null {
    return this.leaf;
  }

  /** Every entry of the file in file order, all branches. */
  get entries(): readonly SessionEntry[] {
    return this.all;
  }

  /** The entry with this id, if the file has it. */
  getEntry(id: string): SessionEntry | undefined {
    return this.byId.get(id);
  }

  /**
   * Move the leaf to an earlier entry (or null, before the root) so the next append
   * starts a new branch. Nothing is written: the branch exists once something hangs from it.
   */
  setLeaf(id: string | null): void {
    if (id !== null && !this.byId.has(id)) {
      throw new SessionFileError(this.path, `has no entry "${id}" to branch from`);
    }
    this.leaf = id;
  }

  /**
   * Stamp the entry with a fresh id, the current leaf as parent and the time, write it
   * (on disk when this returns), and make it the leaf. Throws, writing nothing, if the
   * entry does not match its schema: a line we could not load again must never be written.
   */
  append<E extends NewEntry>(entry: E): E & { id: string; parentId: string | null; timestamp: string } {
    if (this.fd === undefined) throw new SessionFileError(this.path, "is closed; reopen it to append");
    const full = { ...entry, id: this.newEntryId(), parentId: this.leaf, timestamp: new Date().toISOString() };
    const known = full as unknown as KnownEntry;
    if (!isKnownEntry(known)) throw new SessionFileError(this.path, `cannot append an entry of type "${entry.type}"`);
    const check = checker(KNOWN_ENTRY_SCHEMAS[known.type])(known);
    if (!check.ok) {
      throw new SessionFileError(this.path, `refused to append an invalid ${known.type} entry: ${check.errors.join("; ")}`);
    }
    this.write(`${JSON.stringify(full)}\n`);
    this.index(known);
    return full;
  }

  /** Entries from the root to the leaf. */
  pathToLeaf(): SessionEntry[] {
    return pathTo(this.byId, this.leaf);
  }

  /** Entries from the root to `id`. */
  pathToEntry(id: string | null): SessionEntry[] {
    return pathTo(this.byId, id);
  }

  /** Every entry by id (read-only), for tree walks. */
  get entriesById(): ReadonlyMap<string, SessionEntry> {
    return this.byId;
  }

  /** The whole file as a forest with labels (pi's `getTree`). */
  tree(): TreeNode[] {
    return buildTree(this.all);
  }

  /** The current label of an entry, if any. */
  labelOf(id: string): string | undefined {
    return labelsOf(this.all).get(id)?.label;
  }

  /** Set (or, with an empty label, clear) the label of an existing entry. */
  setLabel(targetId: string, label: string | undefined): void {
    if (!this.byId.has(targetId)) throw new SessionFileError(this.path, `has no entry "${targetId}" to label`);
    this.append({ type: "label", targetId, ...(label ? { label } : {}) });
  }

  /**
   * Move the leaf to `leafId` (null: before the root) and hang a `branch_summary` of the
   * branch that was left there, as pi's tree navigation does. Returns the summary entry.
   */
  branchWithSummary(leafId: string | null, summary: string, details: unknown, fromHook: boolean): SessionEntry {
    this.setLeaf(leafId);
    return this.append({ type: "branch_summary", fromId: leafId ?? "root", summary, ...(details !== undefined ? { details } : {}), fromHook });
  }

  /** What the model sees from the current leaf: messages (compaction applied), model, thinking level, name. */
  buildContext(): SessionContext {
    return buildSessionContext(this.pathToLeaf());
  }

  /** Number of messages in the current context (what `get_messages` returns). */
  get messageCount(): number {
    return this.buildContext().messages.length;
  }

  /**
   * The session's name as pi reports it: the latest `session_info` anywhere in the
   * file, whichever branch it was set on; an empty name means cleared.
   */
  get sessionName(): string | undefined {
    for (let i = this.all.length - 1; i >= 0; i--) {
      const entry = this.all[i];
      if (isKnownEntry(entry) && entry.type === "session_info") return entry.name.trim() || undefined;
    }
    return undefined;
  }

  /** Close the file; later appends throw. Safe to call twice. */
  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }

  private index(entry: SessionEntry): void {
    this.all.push(entry);
    this.byId.set(entry.id, entry);
    this.leaf = entry.id;
  }

  /** 8 hex digits like pi, unique within this file. */
  private newEntryId(): string {
    for (;;) {
      const id = randomUUID().slice(0, 8);
      if (!this.byId.has(id)) return id;
    }
  }

  private write(text: string): void {
    if (this.fd === undefined) throw new SessionFileError(this.path, "is closed; reopen it to append");
    const bytes = Buffer.from(text, "utf8");
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(this.fd, bytes, offset, bytes.length - offset);
  }
}
