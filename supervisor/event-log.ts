/**
 * The event history of one agent: every event gets the next per-agent sequence
 * number, is written to `logs/<name>.events.jsonl` *before* anyone sees it (write-ahead:
 * in the OS, in order, so a SIGKILL of the supervisor loses nothing a subscriber saw and
 * the next supervisor never reuses a number), stays in a ring bounded in bytes for late
 * subscribers, and older events replay from the files. The worker's stderr goes to
 * `logs/<name>.stderr.log`. Both files rotate by size (`.1`, `.2`, ...).
 *
 * A disk that refuses a write (full, quota, I/O error) never stops the supervisor: the
 * torn part is cut back at once, the lines wait in a bounded backlog, the owner is told
 * (`disk full: PATH`), and the backlog is written when the disk takes writes again. The
 * events of waiting lines reach no subscriber (nor the ring) until their lines are
 * written, so write-ahead holds on a full disk too.
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
} from "node:fs";
import { join } from "node:path";
import { LineFile } from "../shared/line-file.js";

/** One event as stored and streamed: its sequence number, when it arrived, and the event. */
export interface LoggedEvent {
  seq: number;
  at: number;
  event: Record<string, unknown>;
}

/**
 * Events `from..to` that a replay or a live stream cannot give: no longer held (in
 * memory or on disk), or `lost`: numbered, but their log lines never reached the disk
 * (the bounded backlog dropped them while the disk refused writes), so no log has them.
 */
export interface SeqGap {
  from: number;
  to: number;
  lost?: true;
}

/** What a `since` replay gives: the events, and the gaps among them, both in seq order. */
export interface Replay {
  events: LoggedEvent[];
  gaps: SeqGap[];
}

/** Default bounds of an agent's ring: events and bytes of their JSON, whichever is reached first. */
export const DEFAULT_RING_EVENTS = 10_000;
export const DEFAULT_RING_BYTES = 1024 * 1024;
/** Default most bytes of history one `since` replays from disk per agent; older events are reported as a gap. */
export const DEFAULT_REPLAY_BYTES = 16 * 1024 * 1024;
/** Default most bytes of log lines kept in memory while the disk refuses writes; older ones are dropped (and counted). */
export const DEFAULT_BACKLOG_BYTES = 4 * 1024 * 1024;

/**
 * One held event: its JSON as the worker wrote it (or as serialised once), parsed again
 * only when replayed. The text alone, not the whole log line around it, so a held event
 * is two small heap objects for the collector to move, not four.
 */
interface RingEntry {
  seq: number;
  at: number;
  /** The event's JSON; empty once dropped. */
  raw: string;
  /** Length of its log line (`{"seq","at","event"}`), what the byte budget counts. */
  bytes: number;
  /** Still counted in the ring (not evicted, not compacted). */
  held: boolean;
}

/**
 * The most recent events in sequence order, bounded by a number of events and by the
 * bytes of their JSON. Snapshot events (`message_update`, `tool_execution_update`) are
 * dropped once their `_end` arrived: the end carries the final state, and the snapshots
 * are most of the bytes of a stream.
 */
export class EventRing {
  private entries: RingEntry[] = [];
  private head = 0;
  private count = 0;
  private bytes = 0;
  /** Highest seq evicted by the bounds (compaction does not count): `since` below it has a gap. */
  private evictedThrough = 0;
  /** Seq of the newest event pushed (or `notHeldThrough`): a push past the next one leaves a hole. */
  private pushedThrough = 0;
  /** Seqs never pushed between held ones (lines the disk's backlog dropped), oldest first. */
  private holes: SeqGap[] = [];
  private messageUpdates: RingEntry[] = [];
  private readonly toolUpdates = new Map<string, RingEntry[]>();

  constructor(
    readonly maxEvents: number,
    readonly maxBytes: number = Number.POSITIVE_INFINITY,
  ) {
    if (!Number.isInteger(maxEvents) || maxEvents < 1)
      throw new TypeError(`ring capacity must be a positive integer, got ${maxEvents}`);
    if (!(maxBytes > 0)) throw new TypeError(`ring byte budget must be positive, got ${maxBytes}`);
  }

  /** Number of events held. */
  get size(): number {
    return this.count;
  }

  /** Bytes of the events held. */
  get heldBytes(): number {
    return this.bytes;
  }

  /** Events up to `seq` are not held (they were before this ring existed): `since` below it has a gap. */
  notHeldThrough(seq: number): void {
    this.evictedThrough = Math.max(this.evictedThrough, seq);
    this.pushedThrough = Math.max(this.pushedThrough, seq);
  }

  /** Hold event `seq` given as its JSON; `event` is only looked at for compaction. */
  push(seq: number, at: number, raw: string, event: Record<string, unknown>): void {
    // Pushes come in seq order; a seq skipped is one whose line never reached the disk.
    if (seq > this.pushedThrough + 1) this.holes.push({ from: this.pushedThrough + 1, to: seq - 1, lost: true });
    this.pushedThrough = Math.max(this.pushedThrough, seq);
    const entry: RingEntry = {
      seq,
      at,
      raw,
      bytes: raw.length + LINE_FRAME_CHARS + digits(seq) + digits(at),
      held: true,
    };
    this.entries.push(entry);
    this.count++;
    this.bytes += entry.bytes;
    this.compact(entry, event);
    // The newest event always stays, even alone over the byte budget.
    while (this.count > 1 && (this.count > this.maxEvents || this.bytes > this.maxBytes)) this.evictOldest();
    // Compacted entries stay in the array until the front passes them: rebuild it
    // before they outnumber the held ones, or a long stream of snapshots grows it.
    const slots = this.entries.length - this.head;
    if ((this.head > 1024 && this.head * 2 > this.entries.length) || (slots > 1024 && slots > 2 * this.count)) {
      this.entries = this.entries.slice(this.head).filter((e) => e.held);
      this.head = 0;
    }
  }

  /**
   * Held events with `seq > since`, oldest first, the part of that range evicted
   * (`gap`: older than the ring, the files may have it), and the lost seqs among the
   * held ones (`holes`).
   */
  since(since: number): { events: LoggedEvent[]; gap: SeqGap | null; holes: SeqGap[] } {
    const events: LoggedEvent[] = [];
    for (let i = this.head; i < this.entries.length; i++) {
      const entry = this.entries[i];
      if (entry.held && entry.seq > since)
        events.push({ seq: entry.seq, at: entry.at, event: JSON.parse(entry.raw) as Record<string, unknown> });
    }
    const gap = since < this.evictedThrough ? { from: since + 1, to: this.evictedThrough } : null;
    const holes = this.holes.filter((h) => h.to > since).map((h) => ({ ...h, from: Math.max(h.from, since + 1) }));
    return { events, gap, holes };
  }

  private evictOldest(): void {
    while (this.head < this.entries.length) {
      const entry = this.entries[this.head++];
      if (!entry.held) continue;
      this.release(entry);
      this.evictedThrough = entry.seq;
      // Holes older than the ring are the files' to tell (readLoggedRange finds them there).
      while (this.holes.length > 0 && this.holes[0]!.to < entry.seq) this.holes.shift();
      return;
    }
  }

  private release(entry: RingEntry): void {
    if (!entry.held) return;
    entry.held = false;
    entry.raw = "";
    this.count--;
    this.bytes -= entry.bytes;
  }

  /**
   * `updates` without the entries the bounds evicted meanwhile, once those outnumber the
   * held ones: a message (or tool call) that streams for long without its end would
   * otherwise keep every snapshot's slot for good.
   */
  private pruned(updates: RingEntry[]): RingEntry[] {
    return updates.length > 1024 && updates.length > 2 * this.count ? updates.filter((e) => e.held) : updates;
  }

  private compact(entry: RingEntry, event: Record<string, unknown>): void {
    switch (event.type) {
      case "message_start":
        this.messageUpdates = [];
        break;
      case "message_update":
        this.messageUpdates.push(entry);
        this.messageUpdates = this.pruned(this.messageUpdates);
        break;
      case "message_end":
        for (const update of this.messageUpdates) this.release(update);
        this.messageUpdates = [];
        break;
      case "tool_execution_update":
      case "tool_execution_end": {
        const id = typeof event.toolCallId === "string" ? event.toolCallId : "";
        if (event.type === "tool_execution_update") {
          const list = this.toolUpdates.get(id);
          if (list) {
            list.push(entry);
            const kept = this.pruned(list);
            if (kept !== list) this.toolUpdates.set(id, kept);
          } else this.toolUpdates.set(id, [entry]);
        } else {
          for (const update of this.toolUpdates.get(id) ?? []) this.release(update);
          this.toolUpdates.delete(id);
        }
        break;
      }
    }
  }
}

/** Characters of a log line around its event and numbers: `{"seq":,"at":,"event":}`. */
const LINE_FRAME_CHARS = '{"seq":,"at":,"event":}'.length;

/** Decimal digits of a non-negative integer (a seq, a timestamp). */
function digits(n: number): number {
  let d = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    d++;
  }
  return d;
}

/**
 * `events` without the snapshot events whose `_end` is among them (the same compaction
 * the ring applies), for a replay from disk. Pure.
 */
export function compactSnapshots(events: readonly LoggedEvent[]): LoggedEvent[] {
  const ended = new Set<number>();
  let messageUpdates: number[] = [];
  const toolUpdates = new Map<string, number[]>();
  events.forEach((e, i) => {
    const type = e.event.type;
    if (type === "message_start") messageUpdates = [];
    else if (type === "message_update") messageUpdates.push(i);
    else if (type === "message_end") {
      for (const u of messageUpdates) ended.add(u);
      messageUpdates = [];
    } else if (type === "tool_execution_update" || type === "tool_execution_end") {
      const id = typeof e.event.toolCallId === "string" ? e.event.toolCallId : "";
      if (type === "tool_execution_update") toolUpdates.set(id, [...(toolUpdates.get(id) ?? []), i]);
      else {
        for (const u of toolUpdates.get(id) ?? []) ended.add(u);
        toolUpdates.delete(id);
      }
    }
  });
  return events.filter((_, i) => !ended.has(i));
}

/**
 * What a log file reports about the disk: a write refused (with the reason), or writing
 * again (null, with the number of lines the bounded backlog had to drop meanwhile).
 * Called after the write that found out, never inside it, so the listener may log.
 */
export type WriteProblemListener = (problem: string | null, droppedLines: number) => void;

/** Options of a `LogFile`. */
export interface LogFileOptions {
  maxBytes: number;
  keep: number;
  backlogBytes?: number;
  onProblem?: WriteProblemListener;
  /**
   * Told, at once, each time the oldest write waiting in the backlog leaves it: `true`
   * when it reached the OS, `false` when the bounded backlog dropped it. Writes leave in
   * the order `write` kept them, so an owner can match them to what it wrote.
   */
  onBacklogLeft?: (written: boolean) => void;
}

/**
 * Append-only log that rotates when it passes `maxBytes` (`.1`, `.2`, ... up to `keep`),
 * on the durable line file: whole lines only, a bounded backlog of refused writes.
 */
export class LogFile {
  private readonly file: LineFile;

  constructor(
    readonly path: string,
    opts: LogFileOptions,
  ) {
    const listener = opts.onProblem;
    this.file = new LineFile(path, {
      backlogBytes: opts.backlogBytes ?? DEFAULT_BACKLOG_BYTES,
      rotation: { maxBytes: opts.maxBytes, rotate: () => this.rotate(opts.keep) },
      onRefused: listener && ((error) => listener(problemOf(path, error), 0)),
      onResumed: listener && ((resumed) => listener(null, resumed.droppedLines)),
      onLeft: opts.onBacklogLeft && ((_, written) => opts.onBacklogLeft!(written)),
    });
  }

  /** Write `text` (whole lines) now; true when the OS has it, false when it waits in the backlog. */
  write(text: string): boolean {
    return this.file.write(text);
  }

  /** Try to write the backlog now; true when it is empty. */
  flushBacklog(): boolean {
    return this.file.flush();
  }

  /** Try the backlog a last time and close the file. */
  close(): void {
    this.file.close();
  }

  private rotate(keep: number): void {
    rmSync(`${this.path}.${keep}`, { force: true });
    for (let i = keep - 1; i >= 1; i--) {
      if (existsSync(`${this.path}.${i}`)) renameSync(`${this.path}.${i}`, `${this.path}.${i + 1}`);
    }
    if (keep >= 1) renameSync(this.path, `${this.path}.1`);
    else rmSync(this.path, { force: true });
  }
}

/** What the owner is told when the disk refuses a log: `disk full: PATH` or the error's code. */
function problemOf(path: string, error: NodeJS.ErrnoException): string {
  const code = error.code ?? "EIO";
  return code === "ENOSPC" || code === "EDQUOT" ? `disk full: ${path}` : `cannot write ${path}: ${code}`;
}

/** Options of an agent's event log. */
export interface EventLogOptions {
  logsDir: string;
  name: string;
  /** Events kept in memory for `since` (default 10,000). */
  ringSize?: number;
  /** Bytes of event JSON kept in memory for `since` (default 1 MiB). */
  ringBytes?: number;
  /** Most bytes one `since` replays from the files (default 16 MiB). */
  replayBytes?: number;
  /** Size at which a log file rotates (default 10 MB). */
  maxFileBytes?: number;
  /** Rotated files kept per log (default 3). */
  keepFiles?: number;
  /** Bytes of log lines kept in memory while the disk refuses writes (default 4 MiB per file). */
  backlogBytes?: number;
  /** Told when the disk refuses the events file (`disk full: PATH`) and when it takes writes again (null). */
  onProblem?: WriteProblemListener;
  /**
   * Told when events held back while the disk refused them reached the OS (a retry, or
   * a later write): the owner publishes them, in order, with `takeWritten`.
   */
  onWritten?: () => void;
  /**
   * `append` only numbers and stages an event; `commit` writes every staged line in one
   * system call and holds them in the ring. For an owner that publishes in batches and
   * commits before each (default false: every `append` writes at once).
   */
  batched?: boolean;
}

/** Paths of an agent's log files (for `pi-orch logs`). */
export function agentLogPaths(logsDir: string, name: string): { events: string; stderr: string } {
  return { events: join(logsDir, `${name}.events.jsonl`), stderr: join(logsDir, `${name}.stderr.log`) };
}

/**
 * Sequence numbers, ring and log files of one agent. Sequence numbers continue
 * across supervisor restarts: the last one is read back from the events files.
 */
export class AgentEventLog {
  private seq: number;
  private readonly ring: EventRing;
  private readonly events: LogFile;
  private readonly stderr: LogFile;
  private readonly eventsPath: string;
  private readonly keep: number;
  private readonly replayBytes: number;
  private readonly batched: boolean;
  /**
   * The staged events (batched mode) not yet written: slots below `staged` hold their
   * JSON, times and events; their seqs run up to `seq`. The arrays are overwritten from
   * commit to commit, never emptied (V8 would drop their storage), and the log lines
   * are built only at the commit, in one string: a stream allocates little per event.
   */
  private staged = 0;
  private readonly stagedRaws: string[] = [];
  private readonly stagedAts: number[] = [];
  private readonly stagedEvents: (Record<string, unknown> | null)[] = [];
  /**
   * Events whose write waits in the disk's backlog, one group per refused write (the
   * backlog's order): not in the ring and not published, so no subscriber sees an event
   * a SIGKILL could still lose. A group the backlog drops is forgotten.
   */
  private withheld: WithheldEvent[][] = [];
  /**
   * Withheld events that reached the OS, in order, until the owner publishes them
   * (`takeWritten`); before them, as a gap, the seqs the backlog dropped in between.
   */
  private written: (WithheldEvent | { gap: SeqGap })[] = [];
  /**
   * Seqs of writes the backlog dropped since the last written one. Told as a gap only
   * once a later line is on disk: until then a SIGKILL lets the next supervisor number
   * from the file again, and a gap already told would name seqs it reuses.
   */
  private dropped: SeqGap | null = null;
  /** Seq of the latest event whose line reached the OS (dropped ones never do). */
  private writtenThrough: number;

  constructor(opts: EventLogOptions) {
    this.batched = opts.batched ?? false;
    mkdirSync(opts.logsDir, { recursive: true, mode: 0o700 });
    const paths = agentLogPaths(opts.logsDir, opts.name);
    const maxBytes = opts.maxFileBytes ?? 10 * 1024 * 1024;
    this.keep = opts.keepFiles ?? 3;
    this.eventsPath = paths.events;
    this.replayBytes = opts.replayBytes ?? DEFAULT_REPLAY_BYTES;
    this.ring = new EventRing(opts.ringSize ?? DEFAULT_RING_EVENTS, opts.ringBytes ?? DEFAULT_RING_BYTES);
    const common = { maxBytes, keep: this.keep, backlogBytes: opts.backlogBytes };
    this.events = new LogFile(paths.events, {
      ...common,
      onProblem: opts.onProblem,
      onBacklogLeft: (ok) => this.backlogLeft(ok, opts.onWritten),
    });
    this.stderr = new LogFile(paths.stderr, common);
    this.seq = readLastSeq(paths.events, this.keep);
    this.writtenThrough = this.seq;
    this.ring.notHeldThrough(this.seq);
  }

  /**
   * Sequence number of the latest event written (0 before the first). Staged events
   * and events waiting for the disk are not counted: a supervisor that dies before they
   * are written never showed them, and the next one numbers from the file.
   */
  get lastSeq(): number {
    return this.withheld.length > 0 ? this.writtenThrough : this.seq - this.staged;
  }

  /** Whether event `seq` (staged or committed) has not reached the OS yet: its owner must not publish it now. */
  isWithheld(seq: number): boolean {
    const first = this.withheld[0]?.[0];
    return first !== undefined && seq >= first.entry.seq;
  }

  /**
   * Events held back while the disk refused them that reached the OS since the last
   * call, in order, to publish now; a `gap` among them names seqs the backlog dropped
   * (lost: publish it as a `lagged` notice where it stands).
   */
  takeWritten(): readonly (WithheldEvent | { gap: SeqGap })[] {
    // Nearly always none: no new array for that (it is asked once per agent per turn).
    if (this.written.length === 0) return NONE_WRITTEN;
    const written = this.written;
    this.written = [];
    return written;
  }

  /** Events and bytes held in memory (the ring). */
  get held(): { events: number; bytes: number } {
    return { events: this.ring.size, bytes: this.ring.heldBytes };
  }

  /**
   * Number the event, write it to the events file (the OS has it when this returns,
   * unless the disk refuses it: then it waits in the backlog), and hold it in the
   * ring. `raw` is the event's JSON as the worker wrote it, used instead of
   * serialising it again. Only then may the caller publish the entry, and only when
   * it is not `isWithheld` (the disk refused it: `takeWritten` gives it later). In batched
   * mode the write and the ring wait for `commit`, which the caller runs before it
   * publishes.
   */
  append(event: Record<string, unknown>, at = Date.now(), raw?: string): LoggedEvent {
    const entry: LoggedEvent = { seq: ++this.seq, at, event };
    const json = raw ?? JSON.stringify(event);
    if (this.batched) {
      const i = this.staged++;
      this.stagedRaws[i] = json;
      this.stagedAts[i] = at;
      this.stagedEvents[i] = event;
      return entry;
    }
    if (!this.events.write(`{"seq":${entry.seq},"at":${at},"event":${json}}\n`)) {
      this.withheld.push([{ entry, raw: json }]);
      return entry;
    }
    this.ring.push(entry.seq, at, json, event);
    this.writtenThrough = entry.seq;
    return entry;
  }

  /** Write every staged event (one system call) and hold them in the ring, or withhold them while the disk refuses them; nothing to do outside batched mode. */
  commit(): void {
    const n = this.staged;
    if (n === 0) return;
    const raws = this.stagedRaws;
    const ats = this.stagedAts;
    const events = this.stagedEvents;
    const first = this.seq - n + 1;
    // One array of the exact size, joined once: no string per line or piece (a template per line was one for each).
    const parts: (string | number)[] = new Array(n * 7);
    for (let i = 0, k = 0; i < n; i++) {
      parts[k++] = '{"seq":';
      parts[k++] = first + i;
      parts[k++] = ',"at":';
      parts[k++] = ats[i]!;
      parts[k++] = ',"event":';
      parts[k++] = raws[i]!;
      parts[k++] = "}\n";
    }
    this.staged = 0;
    // The write never appends (its listeners only learn of the backlog), so the slots stay as they are until let go below.
    if (!this.events.write(parts.join(""))) {
      // Built only on a refused write: the usual path allocates nothing per event here.
      const group: WithheldEvent[] = [];
      for (let i = 0; i < n; i++)
        group.push({ entry: { seq: first + i, at: ats[i]!, event: events[i]! }, raw: raws[i]! });
      this.withheld.push(group);
    } else {
      for (let i = 0; i < n; i++) this.ring.push(first + i, ats[i]!, raws[i]!, events[i]!);
      this.writtenThrough = this.seq;
    }
    for (let i = 0; i < n; i++) {
      raws[i] = "";
      events[i] = null;
    }
  }

  /** The oldest refused write left the backlog: written (ring, then published by the owner) or dropped (its seqs a gap). */
  private backlogLeft(written: boolean, onWritten: (() => void) | undefined): void {
    const group = this.withheld.shift();
    if (!group) return;
    const first = group[0]!.entry.seq;
    const last = group[group.length - 1]!.entry.seq;
    if (!written) {
      this.dropped = this.dropped ? { ...this.dropped, to: last } : { from: first, to: last, lost: true };
      return;
    }
    if (this.dropped) this.written.push({ gap: this.dropped });
    this.dropped = null;
    for (const w of group) {
      this.ring.push(w.entry.seq, w.entry.at, w.raw, w.entry.event);
      this.written.push(w);
    }
    this.writtenThrough = group[group.length - 1]!.entry.seq;
    onWritten?.();
  }

  /**
   * Events after `since`: from the ring, and older ones from the files (snapshots whose
   * end is there dropped, at most `replayBytes`); what neither holds is the gap.
   */
  since(since: number): Replay {
    this.commit();
    const held = this.ring.since(since);
    if (!held.gap) return { events: held.events, gaps: held.holes };
    const fromDisk = readLoggedRange(this.eventsPath, this.keep, held.gap.from, held.gap.to, this.replayBytes);
    const events = [...compactSnapshots(fromDisk.events), ...held.events];
    return { events, gaps: joinGaps([...fromDisk.gaps, ...held.holes]) };
  }

  /** Append raw worker stderr. */
  appendStderr(text: string): void {
    this.stderr.write(text);
  }

  /** Try to write what the disk refused earlier (writes are otherwise immediate). */
  flush(): void {
    this.commit();
    this.events.flushBacklog();
    this.stderr.flushBacklog();
  }

  close(): void {
    this.commit();
    this.events.close();
    this.stderr.close();
  }
}

const NONE_WRITTEN: readonly (WithheldEvent | { gap: SeqGap })[] = Object.freeze([]);

/** An event whose log line waits for the disk: the entry and its JSON. */
export interface WithheldEvent {
  entry: LoggedEvent;
  raw: string;
}

/** The log files of `path`, oldest first: `.keep` ... `.1`, then the current one. */
function logFiles(path: string, keep: number): string[] {
  const files: string[] = [];
  for (let i = keep; i >= 1; i--) files.push(`${path}.${i}`);
  files.push(path);
  return files.filter((f) => existsSync(f));
}

/** Last `seq` in the events files, reading only the tail of the newest one that has any. */
function readLastSeq(path: string, keep: number): number {
  for (const file of logFiles(path, keep).reverse()) {
    const seq = lastSeqIn(file);
    if (seq > 0) return seq;
  }
  return 0;
}

/**
 * Last `seq` of a file: the newest line that starts with one. Reads backwards in
 * chunks, so a last event longer than a chunk (up to the line limit) is still found;
 * a torn last record counts too (its seq may have reached a subscriber).
 */
function lastSeqIn(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return 0;
  }
  try {
    const chunk = Buffer.alloc(256 * 1024);
    const head = Buffer.alloc(32);
    let end = fstatSync(fd).size;
    while (end > 0) {
      const length = Math.min(chunk.length, end);
      const start = end - length;
      readSync(fd, chunk, 0, length, start);
      // Line starts in this chunk, newest first: after each newline, and the file's start.
      for (let i = length - 1; i >= -1; i--) {
        if (i >= 0 && chunk[i] !== 0x0a) continue;
        if (i === -1 && start > 0) break;
        const n = readSync(fd, head, 0, head.length, start + i + 1);
        const match = /^\{"seq":(\d+),/.exec(head.toString("latin1", 0, n));
        if (match) return Number(match[1]);
      }
      end = start;
    }
    return 0;
  } finally {
    closeSync(fd);
  }
}

/** First `seq` of a file (its first line), or null. */
function firstSeqIn(path: string): number | null {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return null;
  }
  try {
    const buf = Buffer.alloc(64);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const match = /^\{"seq":(\d+),/.exec(buf.toString("utf8", 0, n));
    return match ? Number(match[1]) : null;
  } finally {
    closeSync(fd);
  }
}

/**
 * Events with `from <= seq <= to` from the files, at most `maxBytes` of them (the
 * newest), and the part of the range they do not hold. Torn or foreign lines are skipped.
 */
export function readLoggedRange(path: string, keep: number, from: number, to: number, maxBytes: number): Replay {
  const files = logFiles(path, keep);
  // Skip files that end before `from`: the next file's first seq tells where this one ends.
  const firsts = files.map(firstSeqIn);
  const lines: string[] = [];
  for (let i = 0; i < files.length; i++) {
    const nextFirst = firsts.slice(i + 1).find((s) => s !== null);
    if (nextFirst != null && nextFirst <= from) continue;
    if (firsts[i] !== null && firsts[i]! > to) break;
    let text: string;
    try {
      text = readFileSync(files[i], "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n")) {
      const match = /^\{"seq":(\d+),/.exec(line);
      if (!match) continue;
      const seq = Number(match[1]);
      if (seq >= from && seq <= to) lines.push(line);
    }
  }
  let bytes = 0;
  let start = lines.length;
  while (start > 0 && bytes + lines[start - 1].length <= maxBytes) bytes += lines[--start].length;
  const events: LoggedEvent[] = [];
  for (const line of lines.slice(start)) {
    try {
      const parsed = JSON.parse(line) as LoggedEvent;
      if (parsed && typeof parsed.seq === "number" && parsed.event && typeof parsed.event === "object")
        events.push(parsed);
    } catch {
      // a torn line the next write cut, or damage by hand: not an event
    }
  }
  // A file that starts before `from` means the files hold that far back: a missing
  // `from` is then lost, not rotated away (unless the byte bound left it out).
  const olderHeld = start === 0 && firsts.some((f) => f !== null && f < from);
  return withGaps(events, from, to, olderHeld);
}

/**
 * `events` (read from the files for `from..to`, in file order) with each seq once, and
 * the gaps: before the oldest, the range not held (lost when `olderHeld`: the files
 * hold events before `from`); between and after them, seqs no file has although later
 * ones are there, i.e. lines that never reached the disk (lost). Pure.
 */
export function withGaps(events: readonly LoggedEvent[], from: number, to: number, olderHeld = false): Replay {
  const gaps: SeqGap[] = [];
  const oldest = events.length > 0 ? events[0]!.seq : to + 1;
  if (oldest > from)
    gaps.push(olderHeld ? { from, to: Math.min(oldest - 1, to), lost: true } : { from, to: Math.min(oldest - 1, to) });
  const kept: LoggedEvent[] = [];
  let next = oldest;
  for (const e of events) {
    if (e.seq < next) continue; // a seq twice (damage by hand): given once
    if (e.seq > next) gaps.push({ from: next, to: e.seq - 1, lost: true });
    kept.push(e);
    next = e.seq + 1;
  }
  if (kept.length > 0 && next <= to) gaps.push({ from: next, to, lost: true });
  return { events: kept, gaps };
}

/** `gaps` in seq order with touching or overlapping ones joined (lost only when both were). Pure. */
export function joinGaps(gaps: readonly SeqGap[]): SeqGap[] {
  const sorted = [...gaps].sort((a, b) => a.from - b.from);
  const joined: SeqGap[] = [];
  for (const g of sorted) {
    const last = joined.at(-1);
    if (last && g.from <= last.to + 1) {
      last.to = Math.max(last.to, g.to);
      if (!g.lost) delete last.lost;
    } else joined.push({ ...g });
  }
  return joined;
}
