/**
 * The one durable append of whole lines, under the supervisor's event logs and the
 * worker's session files. Every write is synchronous: the OS has the lines when `write`
 * returns. A write the disk refuses (full, quota, I/O error) never leaves a torn record:
 * the file is cut back to its last whole line at once (or before the next write, when
 * the cut itself fails). Refused lines wait in a backlog bounded in bytes and are written
 * in order on the next write, on `flush`, or on a retry every `WRITE_RETRY_MS`. When the
 * backlog is over its bound the least important lines leave first (the lowest
 * `priority`, oldest first); the newest line always stays.
 */
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  ftruncateSync as nodeFtruncateSync,
  openSync,
  readSync,
  writeSync as nodeWriteSync,
} from "node:fs";

/** How often a refused write is tried again. */
export const WRITE_RETRY_MS = 1_000;

/** The two system calls a write makes, replaceable so a test can refuse them as a full disk would. */
export interface LineFileIo {
  writeSync(fd: number, data: string | Uint8Array, offset?: number, length?: number): number;
  ftruncateSync(fd: number, length: number): void;
}

const NODE_IO: LineFileIo = {
  writeSync: (fd, data, offset, length) =>
    typeof data === "string" ? nodeWriteSync(fd, data) : nodeWriteSync(fd, data, offset, length),
  ftruncateSync: (fd, length) => nodeFtruncateSync(fd, length),
};

/** One line (or batch of lines) waiting for the disk, with what its owner needs to know when it leaves. */
export interface BacklogLine<T> {
  text: string;
  /** Lower leaves first when the backlog is over its bound (default 0). */
  priority?: number;
  /** Given back to `onLeft`. */
  tag?: T;
}

/** What a `LineFile` was through while the disk refused it, told once it writes again with nothing waiting. */
export interface Resumed {
  /** Backlog lines (as kept) that reached the disk since it refused. */
  written: number;
  /** Lines (newlines) the bounded backlog dropped meanwhile. */
  droppedLines: number;
}

/** Options of a `LineFile`. */
export interface LineFileOptions<T> {
  /** Most bytes the backlog keeps (default: no bound, nothing is dropped). */
  backlogBytes?: number;
  /** On open, cut a last line without its newline (a torn write of a crash); default true. */
  cutTornLine?: boolean;
  /** Open through a symbolic link at `path` (default false: a planted link must not redirect writes). */
  followLinks?: boolean;
  /** Before a write that would take a non-empty open file past `maxBytes`, close it and call `rotate`. */
  rotation?: { maxBytes: number; rotate: (path: string) => void };
  /** Told when the disk starts refusing (or refuses for another reason), after the write that found out. */
  onRefused?: (error: NodeJS.ErrnoException) => void;
  /** Told when the disk takes writes again and the backlog is empty. */
  onResumed?: (resumed: Resumed) => void;
  /** Told, at once, each time a kept line leaves the backlog: written (true) or dropped (false). */
  onLeft?: (tag: T | undefined, written: boolean) => void;
  /** The system calls (tests only). */
  io?: LineFileIo;
}

interface Kept<T> {
  text: string;
  priority: number;
  tag: T | undefined;
  waiting: boolean;
}

/** A queue with a moving front: shifting a long backlog one line at a time stays O(1). */
interface Queue<T> {
  items: Kept<T>[];
  head: number;
}

/**
 * An append-only file of whole lines (see the module comment). Opens lazily on the first
 * write, or at once with `open`. Not safe to share between processes.
 */
export class LineFile<T = undefined> {
  private fd: number | undefined;
  /** Bytes of the file that are whole lines: where a refused write is cut back to. */
  private size = 0;
  /** A refused write left part of a line that could not be cut yet: cut it before writing more. */
  private torn = false;
  private readonly backlog: Queue<T> = { items: [], head: 0 };
  /** The backlog's lines again, one queue per priority, for dropping the least important first. */
  private readonly byPriority = new Map<number, Queue<T>>();
  private backlogCount = 0;
  private backlogSize = 0;
  private refusal: NodeJS.ErrnoException | null = null;
  /** The reason last told to `onRefused`, until `onResumed` is told. */
  private toldRefused: string | null = null;
  private resumed: Resumed = { written: 0, droppedLines: 0 };
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly io: LineFileIo;
  private readonly backlogBytes: number;

  constructor(
    readonly path: string,
    private readonly opts: LineFileOptions<T> = {},
  ) {
    this.io = opts.io ?? NODE_IO;
    this.backlogBytes = opts.backlogBytes ?? Number.POSITIVE_INFINITY;
  }

  /** Why the disk refuses writes now, or null when it takes them. */
  get refused(): NodeJS.ErrnoException | null {
    return this.refusal;
  }

  /** Backlog lines waiting for the disk, their bytes, and the lines dropped from it since the disk refused. */
  get pending(): { lines: number; bytes: number; dropped: number } {
    return { lines: this.backlogCount, bytes: this.backlogSize, dropped: this.resumed.droppedLines };
  }

  /** Open the file now (created 0600 when missing); throws what the OS says. Later writes open it again if needed. */
  open(): void {
    if (this.fd !== undefined) return;
    const flags =
      constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | (this.opts.followLinks ? 0 : constants.O_NOFOLLOW);
    const fd = openSync(this.path, flags, 0o600);
    try {
      // A file made elsewhere (pi, an older version, a loose umask) becomes private too.
      fchmodSync(fd, 0o600);
    } catch {
      // not ours to change: it stays as its owner made it
    }
    this.size = fstatSync(fd).size;
    if (this.opts.cutTornLine ?? true) {
      const whole = wholeLinesLength(fd, this.size);
      if (whole < this.size) {
        try {
          this.io.ftruncateSync(fd, whole);
        } catch (error) {
          closeSync(fd);
          throw error;
        }
        this.size = whole;
      }
    }
    this.fd = fd;
  }

  /**
   * Write `text` now, after the backlog; true when the OS has it. When the disk refuses,
   * it is kept in the backlog (as the lines `split` gives, or whole) and false returned.
   */
  write(text: string, split?: () => readonly BacklogLine<T>[]): boolean {
    if ((this.backlogCount === 0 || this.flush()) && this.tryWrite(text)) return true;
    for (const line of split ? split() : [{ text }]) this.keep(line);
    this.scheduleRetry();
    return false;
  }

  /** Write `text` after the backlog, or throw why the disk refused (nothing of `text` is kept). */
  writeOrThrow(text: string): void {
    if (this.flush() && this.tryWrite(text)) return;
    throw this.refusal!;
  }

  /** Try to write the backlog now; true when it is empty. */
  flush(): boolean {
    const queue = this.backlog;
    while (queue.head < queue.items.length) {
      const line = queue.items[queue.head]!;
      if (line.waiting) {
        if (!this.tryWrite(line.text)) return false;
        this.leave(line);
        this.resumed.written++;
        this.opts.onLeft?.(line.tag, true);
      }
      queue.head++;
    }
    queue.items = [];
    queue.head = 0;
    this.byPriority.clear();
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (this.refusal === null && (this.resumed.written > 0 || this.resumed.droppedLines > 0)) this.tellResumed();
    return true;
  }

  /** Try the backlog a last time and close the file; returns the backlog lines that were never written. */
  close(): number {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.flush();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    return this.backlogCount;
  }

  private keep(line: BacklogLine<T>): void {
    const kept: Kept<T> = { text: line.text, priority: line.priority ?? 0, tag: line.tag, waiting: true };
    this.backlog.items.push(kept);
    let queue = this.byPriority.get(kept.priority);
    if (!queue) {
      queue = { items: [], head: 0 };
      this.byPriority.set(kept.priority, queue);
    }
    queue.items.push(kept);
    this.backlogCount++;
    this.backlogSize += kept.text.length;
    while (this.backlogSize > this.backlogBytes && this.backlogCount > 1) {
      const victim = this.leastImportant(kept);
      if (!victim) break;
      this.leave(victim);
      this.resumed.droppedLines += countLines(victim.text);
      this.opts.onLeft?.(victim.tag, false);
    }
  }

  /** The oldest waiting line of the lowest priority, never `newest`. */
  private leastImportant(newest: Kept<T>): Kept<T> | undefined {
    const priorities = [...this.byPriority.keys()].sort((a, b) => a - b);
    for (const p of priorities) {
      const queue = this.byPriority.get(p)!;
      while (queue.head < queue.items.length && !queue.items[queue.head]!.waiting) queue.head++;
      if (queue.head > 1024 && queue.head * 2 > queue.items.length) {
        queue.items = queue.items.slice(queue.head);
        queue.head = 0;
      }
      const oldest = queue.items[queue.head];
      if (oldest && oldest !== newest) return oldest;
    }
    return undefined;
  }

  private leave(line: Kept<T>): void {
    line.waiting = false;
    this.backlogCount--;
    this.backlogSize -= line.text.length;
  }

  private scheduleRetry(): void {
    if (this.retryTimer !== undefined) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.flush()) this.scheduleRetry();
    }, WRITE_RETRY_MS);
    this.retryTimer.unref();
  }

  /** Write `text` whole or not at all; false (and `refusal` set) when the disk refused it. */
  private tryWrite(text: string): boolean {
    let fd: number;
    const bytes = Buffer.byteLength(text);
    try {
      if (this.fd !== undefined && this.torn) {
        this.io.ftruncateSync(this.fd, this.size);
        this.torn = false;
      }
      const rotation = this.opts.rotation;
      if (rotation && this.fd !== undefined && this.size > 0 && this.size + bytes > rotation.maxBytes) {
        closeSync(this.fd);
        this.fd = undefined;
        rotation.rotate(this.path);
      }
      this.open();
      fd = this.fd!;
    } catch (error) {
      this.refuse(error);
      return false;
    }
    let offset = 0;
    try {
      // The string goes straight to the kernel; only a short write (rare) copies the rest into a buffer.
      offset = this.io.writeSync(fd, text);
      if (offset < bytes) {
        const buf = Buffer.from(text, "utf8");
        while (offset < buf.length) offset += this.io.writeSync(fd, buf, offset, buf.length - offset);
      }
    } catch (error) {
      if (offset > 0) {
        this.torn = true;
        try {
          this.io.ftruncateSync(fd, this.size);
          this.torn = false;
        } catch {
          // Cut again before the next write; until then nothing is written after the torn part.
        }
      }
      this.refuse(error);
      return false;
    }
    this.size += bytes;
    if (this.refusal !== null) {
      this.refusal = null;
      if (this.backlogCount === 0) this.tellResumed();
    }
    return true;
  }

  private refuse(error: unknown): void {
    const err = error as NodeJS.ErrnoException;
    if (!err.code) err.code = "EIO";
    this.refusal = err;
    // Told once per reason until the disk takes everything again (a write between is no news).
    if (this.toldRefused === err.code) return;
    this.toldRefused = err.code;
    const listener = this.opts.onRefused;
    // After the write that found out, never inside it: the listener may log (to this disk).
    if (listener) queueMicrotask(() => listener(err));
  }

  private tellResumed(): void {
    const resumed = this.resumed;
    this.toldRefused = null;
    this.resumed = { written: 0, droppedLines: 0 };
    const listener = this.opts.onResumed;
    if (listener) queueMicrotask(() => listener(resumed));
  }
}

/** Newlines in `text`: the lines a dropped write held (a batched write holds several). */
function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** Length of the file up to and including its last newline: a torn last record (no newline) is not counted. */
function wholeLinesLength(fd: number, size: number): number {
  if (size === 0) return 0;
  const chunk = Buffer.alloc(Math.min(size, 64 * 1024));
  let end = size;
  while (end > 0) {
    const length = Math.min(chunk.length, end);
    readSync(fd, chunk, 0, length, end - length);
    const nl = chunk.subarray(0, length).lastIndexOf(0x0a);
    if (nl !== -1) return end - length + nl + 1;
    end -= length;
  }
  return 0;
}
