/**
 * Reading an agent's event log back from its files (`logs/<name>.events.jsonl` and its
 * rotations `.1`, `.2`, ...): the line format `{"seq","at","event"}`, the last seq a
 * new supervisor continues from, a `since` range with the gaps no file holds, and the
 * lines of a file as `pi-orch logs` reads them. Shared by the supervisor (replay to late
 * subscribers) and the CLI (which needs no supervisor to read a log).
 */
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync } from "node:fs";

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

/** The log files of `path`, oldest first: `.keep` ... `.1`, then the current one. */
function logFiles(path: string, keep: number): string[] {
  const files: string[] = [];
  for (let i = keep; i >= 1; i--) files.push(`${path}.${i}`);
  files.push(path);
  return files.filter((f) => existsSync(f));
}

/** Last `seq` in the events files, reading only the tail of the newest one that has any. */
export function readLastSeq(path: string, keep: number): number {
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
    const parsed = parseLoggedLine(line);
    if (parsed) events.push(parsed);
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

/** A log line's event, or null for a line that is not one (a torn line the next write cut, damage by hand). */
function parseLoggedLine(line: string): LoggedEvent | null {
  try {
    const parsed = JSON.parse(line) as LoggedEvent;
    if (parsed && typeof parsed.seq === "number" && parsed.event && typeof parsed.event === "object") return parsed;
  } catch {
    // not JSON
  }
  return null;
}

/** One line of an events file as it is read: its event (null when it is not one) and the seqs no line has just before it. */
export interface ReadLine {
  line: string;
  entry: LoggedEvent | null;
  /** Seqs between the previous event read and this one: numbered, but their lines never reached the disk. */
  missing: SeqGap | null;
}

/**
 * The lines of an events file read in pieces (`pi-orch logs`, also while it grows):
 * each whole, non-blank line once, parsed, with the lost seqs before it. An unfinished
 * last line waits for the piece that ends it.
 */
export class LogLineReader {
  private partial = "";
  private lastSeq = 0;

  /** The lines that `text` completes, in file order. */
  feed(text: string): ReadLine[] {
    const lines = (this.partial + text).split("\n");
    this.partial = lines.pop()!;
    const read: ReadLine[] = [];
    for (const line of lines) {
      if (line.trim() === "") continue;
      const entry = parseLoggedLine(line);
      let missing: SeqGap | null = null;
      if (entry) {
        if (this.lastSeq > 0 && entry.seq > this.lastSeq + 1)
          missing = { from: this.lastSeq + 1, to: entry.seq - 1, lost: true };
        this.lastSeq = Math.max(this.lastSeq, entry.seq);
      }
      read.push({ line, entry, missing });
    }
    return read;
  }
}
