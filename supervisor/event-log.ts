/**
 * The event history of one agent: every event gets the next per-agent sequence
 * number, stays in a bounded ring for late subscribers, and is appended to
 * `logs/<name>.events.jsonl`; the worker's stderr goes to `logs/<name>.stderr.log`.
 * Both files rotate by size (`.1`, `.2`, ...).
 */
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";

/** One event as stored and streamed: its sequence number, when it arrived, and the event. */
export interface LoggedEvent {
  seq: number;
  at: number;
  event: Record<string, unknown>;
}

/** Events asked for with `since` that the ring no longer holds. */
export interface SeqGap {
  from: number;
  to: number;
}

/** Fixed-capacity ring of the most recent events, in sequence order. */
export class EventRing {
  private readonly items: (LoggedEvent | undefined)[];
  private start = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new TypeError(`ring capacity must be a positive integer, got ${capacity}`);
    this.items = new Array(capacity);
  }

  /** Number of events held. */
  get size(): number {
    return this.count;
  }

  push(entry: LoggedEvent): void {
    if (this.count < this.capacity) {
      this.items[(this.start + this.count) % this.capacity] = entry;
      this.count++;
    } else {
      this.items[this.start] = entry;
      this.start = (this.start + 1) % this.capacity;
    }
  }

  /** Events with `seq > since`, oldest first, and the part of that range already evicted. */
  since(since: number, lastSeq: number): { events: LoggedEvent[]; gap: SeqGap | null } {
    const events: LoggedEvent[] = [];
    for (let i = 0; i < this.count; i++) {
      const entry = this.items[(this.start + i) % this.capacity]!;
      if (entry.seq > since) events.push(entry);
    }
    const oldest = events.length > 0 ? events[0].seq : lastSeq + 1;
    const gap = oldest > since + 1 && since < lastSeq ? { from: since + 1, to: oldest - 1 } : null;
    return { events, gap };
  }
}

/**
 * Append-only text file that rotates when it passes `maxBytes`. Writes are batched
 * per tick and written synchronously, so rotation never races a pending write.
 */
export class RotatingFile {
  private fd: number | null = null;
  private size = 0;
  private pending: string[] = [];
  private scheduled: NodeJS.Immediate | null = null;

  constructor(
    readonly path: string,
    private readonly maxBytes: number,
    private readonly keep: number,
  ) {}

  write(text: string): void {
    this.pending.push(text);
    this.scheduled ??= setImmediate(() => {
      this.scheduled = null;
      this.flush();
    });
  }

  /** Write everything queued now. */
  flush(): void {
    if (this.pending.length === 0) return;
    const data = this.pending.join("");
    this.pending = [];
    if (this.fd !== null && this.size > 0 && this.size + Buffer.byteLength(data) > this.maxBytes) this.rotate();
    const fd = this.open();
    const buf = Buffer.from(data, "utf8");
    writeSync(fd, buf);
    this.size += buf.length;
  }

  close(): void {
    if (this.scheduled) {
      clearImmediate(this.scheduled);
      this.scheduled = null;
    }
    this.flush();
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private open(): number {
    if (this.fd === null) {
      this.fd = openSync(this.path, "a", 0o600);
      this.size = fstatSync(this.fd).size;
    }
    return this.fd;
  }

  private rotate(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    rmSync(`${this.path}.${this.keep}`, { force: true });
    for (let i = this.keep - 1; i >= 1; i--) {
      if (existsSync(`${this.path}.${i}`)) renameSync(`${this.path}.${i}`, `${this.path}.${i + 1}`);
    }
    if (this.keep >= 1) renameSync(this.path, `${this.path}.1`);
    else rmSync(this.path, { force: true });
  }
}

/** Options of an agent's event log. */
export interface EventLogOptions {
  logsDir: string;
  name: string;
  /** Events kept in memory for `since` (default 10,000). */
  ringSize?: number;
  /** Size at which a log file rotates (default 10 MB). */
  maxFileBytes?: number;
  /** Rotated files kept per log (default 3). */
  keepFiles?: number;
}

/** Paths of an agent's log files (for `pi-orch logs`). */
export function agentLogPaths(logsDir: string, name: string): { events: string; stderr: string } {
  return { events: join(logsDir, `${name}.events.jsonl`), stderr: join(logsDir, `${name}.stderr.log`) };
}

/**
 * Sequence numbers, ring and log files of one agent. Sequence numbers continue
 * across supervisor restarts: the last one is read back from the events file.
 */
export class AgentEventLog {
  private readonly ring: EventRing;
  private readonly events: RotatingFile;
  private readonly stderr: RotatingFile;
  private seq: number;

  constructor(opts: EventLogOptions) {
    mkdirSync(opts.logsDir, { recursive: true, mode: 0o700 });
    const paths = agentLogPaths(opts.logsDir, opts.name);
    const maxBytes = opts.maxFileBytes ?? 10 * 1024 * 1024;
    const keep = opts.keepFiles ?? 3;
    this.ring = new EventRing(opts.ringSize ?? 10_000);
    this.events = new RotatingFile(paths.events, maxBytes, keep);
    this.stderr = new RotatingFile(paths.stderr, maxBytes, keep);
    this.seq = readLastSeq(paths.events);
  }

  /** Sequence number of the latest event (0 before the first). */
  get lastSeq(): number {
    return this.seq;
  }

  /**
   * Number the event, keep it in the ring and queue it for the file. `raw` is the
   * event's JSON as the worker wrote it, used instead of serialising it again.
   */
  append(event: Record<string, unknown>, at = Date.now(), raw?: string): LoggedEvent {
    const entry: LoggedEvent = { seq: ++this.seq, at, event };
    this.ring.push(entry);
    this.events.write(raw === undefined ? JSON.stringify(entry) + "\n" : `{"seq":${entry.seq},"at":${at},"event":${raw}}\n`);
    return entry;
  }

  /** Events after `since` still in memory, and the evicted range when there is one. */
  since(since: number): { events: LoggedEvent[]; gap: SeqGap | null } {
    return this.ring.since(since, this.seq);
  }

  /** Append raw worker stderr. */
  appendStderr(text: string): void {
    this.stderr.write(text);
  }

  /** Write queued lines now. */
  flush(): void {
    this.events.flush();
    this.stderr.flush();
  }

  close(): void {
    this.events.close();
    this.stderr.close();
  }
}

/** Last `seq` in an events file, reading only its tail. */
function readLastSeq(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return 0;
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, 256 * 1024);
    const buf = Buffer.alloc(length);
    readSync(fd, buf, 0, length, size - length);
    const lines = buf.toString("utf8").split("\n");
    for (let i = lines.length - 1; i >= 0; i--) {
      const match = /^\{"seq":(\d+),/.exec(lines[i]);
      if (match) return Number(match[1]);
    }
    return 0;
  } finally {
    closeSync(fd);
  }
}
