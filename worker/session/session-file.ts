/**
 * One open session file: an append-only JSONL tree in pi's v3 format. Every append is
 * written with a synchronous write before it returns, so a worker killed at any moment
 * loses nothing it has already reported; the next open drops at most a torn last line.
 * A write the disk refuses (full, quota, I/O error) is cut back to the last whole line
 * at once, so no later write continues a torn record. Session files are 0600 and the
 * folders made for them 0700, whatever the umask: they hold everything the tools saw.
 * `--no-session` keeps the same store with no file (pi's in-memory SessionManager): the
 * same entries, ids, links and projection, only nothing is written.
 */
import { mkdirSync, readFileSync, statfsSync, truncateSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { LineFile } from "../../shared/line-file.js";
import { checker } from "../../shared/validate.js";
import { isoTimestamp } from "../../shared/iso-time.js";
import { randomUuid } from "../../shared/uuid.js";
import { buildSessionContext, pathTo, type SessionContext } from "./context.js";
import {
  KNOWN_ENTRY_SCHEMAS,
  SESSION_VERSION,
  type KnownEntry,
  type SessionEntry,
  type SessionHeader,
} from "../../shared/schema/session.js";
import { KEEP_NOTHING, isKnownEntry, type NewEntry } from "./entries.js";
import { parseSessionFile, SessionFileError } from "./parse.js";
import { buildTree, labelsOf, type TreeNode } from "./tree.js";

export { SessionFileError } from "./parse.js";

/** A session file the disk refused to write (`ENOSPC`, `EDQUOT`, `EIO`, ...); nothing torn was left in it. */
export class SessionWriteError extends SessionFileError {
  constructor(
    path: string,
    /** The errno code, e.g. `ENOSPC`. */
    readonly code: string,
    detail: string,
  ) {
    const why = detail.startsWith(code) ? detail : `${code}: ${detail}`;
    super(
      path,
      `cannot be written (${why})${code === "ENOSPC" || code === "EDQUOT" ? "; free some space and retry" : ""}`,
    );
    this.name = "SessionWriteError";
  }
}

/** Options of `SessionStore.open` and `SessionStore.create`. */
export interface OpenOptions {
  /** Where warnings (a dropped torn line, a write the disk refused) go; stderr by default, never stdout (the RPC channel). */
  warn?: (message: string) => void;
}

/** What `appendOrKeep` did: on disk, or kept in memory (to be written when the disk takes it again). */
export interface KeptAppend<E> {
  entry: E;
  /** Undefined when the entry is on disk. */
  error?: SessionWriteError;
}

/** Folders made for session files: private to the user. */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/** What a new session file starts with. */
export interface NewSessionFile {
  /** Folder of the new file; created when missing. */
  dir: string;
  cwd: string;
  /** The session this one was forked or cloned from. */
  parentSession?: string;
  /** Entries to copy in, in order (root first). Written verbatim. */
  entries?: readonly SessionEntry[];
  /** The file's name in `dir` (default: pi's `<time>_<id>.jsonl`), for `--session PATH` of a new file. */
  fileName?: string;
  /** The session id (`--session-id`); default a new random one. */
  id?: string;
}

/**
 * File name of a session, as pi names it: `<ISO time with : and . as ->_<session id>.jsonl`,
 * so names sort by creation time and carry the id for prefix lookup.
 */
export function sessionFileName(sessionId: string, createdAt: Date): string {
  return `${isoTimestamp(createdAt).replace(/[:.]/g, "-")}_${sessionId}.jsonl`;
}

/** The `session` header of a new session made now. */
export function newHeader(spec: { cwd: string; parentSession?: string; id?: string }, now: Date): SessionHeader {
  return {
    type: "session",
    version: SESSION_VERSION,
    // A random v4 id rather than pi's time-ordered v7: the file name already orders by
    // time, and random leading digits keep short `--session <prefix>` lookups unique.
    id: spec.id ?? randomUuid(),
    timestamp: isoTimestamp(now),
    cwd: spec.cwd,
    ...(spec.parentSession !== undefined ? { parentSession: spec.parentSession } : {}),
  };
}

/**
 * Write a complete new session file (header plus `entries`) and return its path and
 * header. Fails rather than overwrite an existing file.
 */
export function writeNewSessionFile(spec: NewSessionFile): { path: string; header: SessionHeader } {
  const now = new Date();
  const header = newHeader(spec, now);
  mkdirSync(spec.dir, { recursive: true, mode: DIR_MODE });
  const path = resolve(join(spec.dir, spec.fileName ?? sessionFileName(header.id, now)));
  const lines = [header, ...(spec.entries ?? [])].map((value) => `${JSON.stringify(value)}\n`);
  try {
    writeFileSync(path, lines.join(""), { flag: "wx", mode: FILE_MODE });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A half-written new file would be a session with a torn header: leave none.
    if (code !== "EEXIST") {
      try {
        unlinkSync(path);
      } catch {
        // never created
      }
    }
    if (code && code !== "EEXIST") throw new SessionWriteError(path, code, (error as Error).message);
    throw error;
  }
  return { path, header };
}

/** A store with a file (what `open` and `create` give). */
export type FileSessionStore = SessionStore & { readonly path: string };

/** An entry as its line in the file. */
const lineOf = (entry: object): string => `${JSON.stringify(entry)}\n`;

/** A user or assistant message: what makes a new session worth a file (pi's `_hasConversation`). */
function startsConversation(entry: object): boolean {
  const e = entry as { type?: unknown; message?: { role?: unknown } };
  return e.type === "message" && (e.message?.role === "user" || e.message?.role === "assistant");
}

/** How errors name a session kept in memory, where a file's would name the file. */
const IN_MEMORY = "(kept in memory, --no-session)";

/**
 * An open session: a file, or none (`inMemory`). Appends go to disk synchronously; the
 * leaf is the position the next append hangs from (moved by `append` and `setLeaf`). Not
 * safe to share between processes: one worker owns one file.
 */
export class SessionStore {
  private readonly byId = new Map<string, SessionEntry>();
  private readonly all: SessionEntry[] = [];
  private leaf: string | null = null;
  /** The file's lines, none in memory; entries the disk refused wait in its backlog (unbounded: none is dropped). */
  private readonly file: LineFile | null;
  private closed = false;
  /** Entries were kept in memory since the last write the disk took: say so once, and once when it takes them. */
  private refused = false;
  /**
   * A new session's file is not written yet: pi writes it (header and every entry so far)
   * with the first user or assistant message, so a session nobody talked in leaves no file.
   */
  private unwritten: boolean;
  private readonly warn: (message: string) => void;

  private constructor(
    /** Absolute path of the file; undefined for a session kept in memory. */
    readonly path: string | undefined,
    /** The file's `session` header line. */
    readonly header: SessionHeader,
    entries: readonly SessionEntry[],
    options: OpenOptions,
    unwritten = false,
  ) {
    this.warn = options.warn ?? ((message: string) => process.stderr.write(`warning: ${message}\n`));
    this.unwritten = unwritten;
    for (const entry of entries) this.index(entry);
    if (path === undefined) {
      this.file = null;
      return;
    }
    // `open` has cut a torn last line already (with a warning); a whole one without its newline stays.
    this.file = new LineFile(path, {
      cutTornLine: false,
      followLinks: true,
      onResumed: ({ written }) => {
        if (!this.refused) return;
        this.refused = false;
        this.warn(`session file ${this.path}: written again (${written} entries kept in memory are on disk now)`);
      },
    });
    if (!unwritten) this.file.open();
  }

  /**
   * A session with no file (`--no-session`, pi's `SessionManager.inMemory`): `entries`
   * (root first, kept verbatim) under a new header; the leaf is the last entry.
   */
  static inMemory(
    spec: { cwd: string; id?: string; parentSession?: string; entries?: readonly SessionEntry[] },
    options: OpenOptions = {},
  ): SessionStore {
    return new SessionStore(undefined, newHeader(spec, new Date()), spec.entries ?? [], options);
  }

  /** Whether entries reach a file (false for a session kept in memory). */
  hasFile(): this is FileSessionStore {
    return this.file !== null;
  }

  /**
   * A new session whose file will be `dir`/`fileName` (`dir` created 0700 when missing).
   * As in pi, the file is written with the first user or assistant message (its header and
   * every entry before it at once), so a session nobody talked in leaves no file behind.
   */
  static create(
    options: { dir: string; cwd: string; parentSession?: string; fileName?: string; id?: string },
    openOptions: OpenOptions = {},
  ): FileSessionStore {
    const now = new Date();
    const header = newHeader(options, now);
    mkdirSync(options.dir, { recursive: true, mode: DIR_MODE });
    const path = resolve(join(options.dir, options.fileName ?? sessionFileName(header.id, now)));
    return new SessionStore(path, header, [], openOptions, true) as FileSessionStore;
  }

  /**
   * Load a session file, written by us or by pi 0.73. A torn last line is dropped with a
   * warning and cut from the file so the next append starts on a fresh line; damage in
   * the middle is skipped or kept uninterpreted with a warning naming the line (see
   * `parseSessionFile`); only a missing header throws. The leaf is the last entry.
   */
  static open(path: string, options: OpenOptions = {}): FileSessionStore {
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
    const store = new SessionStore(absolute, parsed.header, parsed.entries, options);
    if (parsed.missingNewline) store.write("\n");
    return store as FileSessionStore;
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
      throw new SessionFileError(this.where, `has no entry "${id}" to branch from`);
    }
    this.leaf = id;
  }

  /**
   * Stamp the entry with a fresh id, the current leaf as parent and the time, write it
   * (on disk when this returns), and make it the leaf. Throws, writing nothing, if the
   * entry does not match its schema: a line we could not load again must never be written.
   */
  append<E extends NewEntry>(entry: E): E & { id: string; parentId: string | null; timestamp: string } {
    const full = this.prepare(entry);
    // Entries the disk refused earlier go first, or the file's order would differ from the tree's.
    if (this.file) {
      const text = this.linesFor(full);
      if (text) {
        this.write(text);
        this.unwritten = false;
      }
    }
    this.index(full as unknown as KnownEntry);
    return full;
  }

  /**
   * Like `append`, but an entry the disk refuses (full, quota, I/O error) is kept in
   * memory, in the tree, and written, in order, as soon as the disk takes writes again
   * (tried every `WRITE_RETRY_MS` and before every later append). For what already
   * happened and must not be lost, such as a finished message; `append` is for what can
   * still be refused, such as a prompt.
   */
  appendOrKeep<E extends NewEntry>(
    entry: E,
  ): KeptAppend<E & { id: string; parentId: string | null; timestamp: string }> {
    const full = this.prepare(entry);
    const line = this.file ? this.linesFor(full) : "";
    this.index(full as unknown as KnownEntry);
    if (!line) return { entry: full };
    this.unwritten = false;
    if (this.file!.write(line)) return { entry: full };
    const error = this.writeError();
    if (!this.refused)
      this.warn(`${error.message}; entries are kept in memory and written when the disk takes them again`);
    this.refused = true;
    return { entry: full, error };
  }

  /**
   * Throw `SessionWriteError` unless a line of about `bytes` can be written now: what
   * the disk refused earlier must go first, and the file system must have the room.
   * For refusing a message before accepting it when its entry is written later.
   */
  checkWritable(bytes: number): void {
    if (!this.path) return;
    this.flushBacklog();
    let free: number;
    try {
      const fs = statfsSync(this.unwritten ? dirname(this.path) : this.path);
      free = fs.bavail * fs.bsize;
    } catch {
      return; // no statfs here: the write itself will tell
    }
    if (free < bytes) throw new SessionWriteError(this.path, "ENOSPC", `${free} bytes free, ${bytes} needed`);
  }

  /** Entries the disk refused that are not on disk yet. */
  get unwrittenEntries(): number {
    return this.file?.pending.lines ?? 0;
  }

  /** Write what the disk refused earlier; throws `SessionWriteError` if it still refuses. */
  flushBacklog(): void {
    if (this.file && !this.file.flush()) throw this.writeError();
  }

  /**
   * Stamp and check an entry: a line we could not load again must never be written. Only
   * a file's entries become JSON (in memory a value JSON cannot hold, a BigInt in a tool's
   * details, is kept as pi's in-memory session keeps it).
   */
  private prepare<E extends NewEntry>(entry: E): E & { id: string; parentId: string | null; timestamp: string } {
    if (this.closed) throw new SessionFileError(this.where, "is closed; reopen it to append");
    const full = { ...entry, id: this.newEntryId(), parentId: this.leaf, timestamp: isoTimestamp(new Date()) };
    // pi's self-retaining compaction: it keeps nothing before it, named by its own id.
    if (full.type === "compaction" && (full as { firstKeptEntryId?: string }).firstKeptEntryId === KEEP_NOTHING)
      (full as { firstKeptEntryId?: string }).firstKeptEntryId = full.id;
    const known = full as unknown as KnownEntry;
    if (!isKnownEntry(known)) throw new SessionFileError(this.where, `cannot append an entry of type "${entry.type}"`);
    const check = checker(KNOWN_ENTRY_SCHEMAS[known.type])(known);
    if (!check.ok) {
      throw new SessionFileError(
        this.where,
        `refused to append an invalid ${known.type} entry: ${check.errors.join("; ")}`,
      );
    }
    return full;
  }

  /**
   * What appending `entry` writes: its line; for a file not written yet, nothing until
   * the entry is the first user or assistant message, then the header, every entry so far
   * and it, as one write (pi's `_persist`).
   */
  private linesFor(entry: object): string {
    if (!this.unwritten) return lineOf(entry);
    if (!startsConversation(entry)) return "";
    return lineOf(this.header) + this.all.map(lineOf).join("") + lineOf(entry);
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
    if (!this.byId.has(targetId)) throw new SessionFileError(this.where, `has no entry "${targetId}" to label`);
    this.append({ type: "label", targetId, ...(label ? { label } : {}) });
  }

  /**
   * Move the leaf to `leafId` (null: before the root) and hang a `branch_summary` of the
   * branch that was left there, as pi's tree navigation does: its `fromId` is the leaf
   * left ("root" when the session was empty). Returns the summary entry.
   */
  branchWithSummary(leafId: string | null, summary: string, details: unknown, fromHook: boolean): SessionEntry {
    const fromId = this.leafId ?? "root";
    this.setLeaf(leafId);
    return this.append({
      type: "branch_summary",
      fromId,
      summary,
      ...(details !== undefined ? { details } : {}),
      fromHook,
    });
  }

  /** What the model sees from the current leaf: messages (compaction applied), model, thinking level, name. */
  buildContext(): SessionContext {
    return buildSessionContext(this.pathToLeaf());
  }

  /**
   * The session's name as pi reports it: the latest `session_info` anywhere in the
   * file, whichever branch it was set on; an empty name means cleared.
   */
  get sessionName(): string | undefined {
    for (let i = this.all.length - 1; i >= 0; i--) {
      const entry = this.all[i];
      if (isKnownEntry(entry) && entry.type === "session_info") return entry.name?.trim() || undefined;
    }
    return undefined;
  }

  /** Close the file (after a last try to write what the disk refused); later appends throw. Safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const lost = this.file?.close() ?? 0;
    if (lost > 0) this.warn(`${this.writeError().message}; ${lost} entries that were never written are lost`);
  }

  private index(entry: SessionEntry): void {
    this.all.push(entry);
    this.byId.set(entry.id, entry);
    this.leaf = entry.id;
  }

  /** 8 hex digits like pi, unique within this file. */
  private newEntryId(): string {
    for (;;) {
      const id = randomUuid().slice(0, 8);
      if (!this.byId.has(id)) return id;
    }
  }

  /** Write one whole line or nothing, after what the disk refused earlier; throws `SessionWriteError`. */
  private write(text: string): void {
    if (this.closed) throw new SessionFileError(this.where, "is closed; reopen it to append");
    try {
      this.file?.writeOrThrow(text);
    } catch {
      throw this.writeError();
    }
  }

  /** The file, or how errors name a session kept in memory. */
  private get where(): string {
    return this.path ?? IN_MEMORY;
  }

  /** Why the disk refused the last write, as the error a caller reports. */
  private writeError(): SessionWriteError {
    const error = this.file?.refused;
    return new SessionWriteError(this.where, error?.code ?? "EIO", error?.message ?? "the disk refused the write");
  }
}
