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
import { mkdirSync } from "node:fs";
import {
  compactSnapshots,
  joinGaps,
  type LoggedEvent,
  type Replay,
  readLastSeq,
  readLoggedRange,
  type SeqGap,
} from "../shared/event-replay.js";
import type { BacklogLine } from "../shared/line-file.js";
import { agentLogPaths } from "../shared/paths.js";
import { DEFAULT_RING_BYTES, DEFAULT_RING_EVENTS, EventRing } from "./event-ring.js";
import { BACKLOG_PRIORITY, backlogPriority } from "./backlog-priority.js";
import { LogFile } from "./log-file.js";
import { atPart } from "./at-part.js";

/** Default most bytes of history one `since` replays from disk per agent; older events are reported as a gap. */
export const DEFAULT_REPLAY_BYTES = 16 * 1024 * 1024;

/** Events the full disk's bounded backlog dropped, told when the disk takes writes again. */
export interface DroppedEvents {
  events: number;
  /** Of them, streaming snapshots (`message_update`, `tool_execution_update`): what goes first. */
  streaming: number;
  /** Of them, run boundaries, dialogs and the supervisor's own events: what goes last, when nothing else is left. */
  boundaries: number;
}

/**
 * Told when the disk refuses an agent's events file (`disk full: PATH`), and when it
 * takes writes again (null) with what the backlog dropped meanwhile. Called after the
 * write that found out, never inside it, so the listener may log.
 */
export type EventLogProblemListener = (problem: string | null, dropped: DroppedEvents) => void;

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
  onProblem?: EventLogProblemListener;
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

/**
 * Sequence numbers, ring and log files of one agent. Sequence numbers continue
 * across supervisor restarts: the last one is read back from the events files.
 */
export class AgentEventLog {
  private seq: number;
  private readonly ring: EventRing;
  private readonly events: LogFile<WithheldEvent>;
  private readonly stderr: LogFile;
  private readonly eventsPath: string;
  private readonly keep: number;
  private readonly replayBytes: number;
  private readonly batched: boolean;
  /**
   * The staged events (batched mode) not yet written: slots below `staged` hold their
   * JSON, types and entries; their seqs run up to `seq`. The arrays are overwritten from
   * commit to commit, never emptied (V8 would drop their storage), and the log lines
   * are built only at the commit, in one string: a stream allocates little per event.
   */
  private staged = 0;
  private readonly stagedRaws: string[] = [];
  private readonly stagedTypes: unknown[] = [];
  private readonly stagedEntries: (LoggedEvent | null)[] = [];
  /**
   * Events whose lines wait in the disk's backlog, one line each, in seq order: not in
   * the ring and not published, so no subscriber sees an event a SIGKILL could still
   * lose. The first is always still waiting; a later one may be dropped already (the
   * backlog drops the least important first), and leaves when the front passes it.
   */
  private withheld: WithheldEvent[] = [];
  /**
   * Withheld events that reached the OS, in order, until the owner publishes them
   * (`takeWritten`); before each, as a gap, the seqs the backlog dropped since the one
   * before. A gap is told only once a later line is on disk: until then a SIGKILL lets
   * the next supervisor number from the file again, and a gap already told would name
   * seqs it reuses.
   */
  private written: (WithheldEvent | { gap: SeqGap })[] = [];
  /** Events the backlog dropped since the disk last took everything. */
  private dropped: DroppedEvents = { events: 0, streaming: 0, boundaries: 0 };
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
    const listener = opts.onProblem;
    this.events = new LogFile<WithheldEvent>(paths.events, {
      ...common,
      onProblem:
        listener &&
        ((problem) => {
          if (problem !== null) return listener(problem, NONE_DROPPED);
          const dropped = this.dropped;
          this.dropped = { events: 0, streaming: 0, boundaries: 0 };
          listener(null, dropped);
        }),
      onBacklogLeft: (withheld, written) => this.backlogLeft(withheld!, written, opts.onWritten),
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
    // Past the last line written, while some wait, is waiting or dropped (never to be published as it is).
    return this.withheld.length > 0 && seq > this.writtenThrough;
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
    return this.log({ seq: ++this.seq, at, event }, event.type, raw ?? JSON.stringify(event));
  }

  /**
   * `append` for a worker event given as its JSON text `raw` and its `type` (a valid JSON
   * object whose type that is: shared/event-type.ts), not parsed: the entry's `event` is
   * parsed from `raw` only when something reads it (a subscriber in this process, a
   * replay, the compaction of a tool call's updates when `toolCallId` is null: not read).
   */
  forward(type: string, raw: string, at = Date.now(), toolCallId: string | null = null): LoggedEvent {
    return this.log(new ForwardedEvent(++this.seq, at, raw, toolCallId), type, raw);
  }

  private log(entry: LoggedEvent, type: unknown, json: string): LoggedEvent {
    if (this.batched) {
      const i = this.staged++;
      this.stagedRaws[i] = json;
      this.stagedTypes[i] = type;
      this.stagedEntries[i] = entry;
      return entry;
    }
    const line = `{"seq":${entry.seq},"at":${entry.at},"event":${json}}\n`;
    if (!this.events.write(line, () => [this.withhold(entry, type, json, line)])) return entry;
    this.ring.push(entry.seq, entry.at, json, type, entry);
    this.writtenThrough = entry.seq;
    return entry;
  }

  /** Write every staged event (one system call) and hold them in the ring, or withhold them while the disk refuses them; nothing to do outside batched mode. */
  commit(): void {
    const n = this.staged;
    if (n === 0) return;
    const raws = this.stagedRaws;
    const types = this.stagedTypes;
    const entries = this.stagedEntries;
    const first = this.seq - n + 1;
    // One array of the exact size, joined once: no string per line or piece (a template per line was one for each).
    const parts: (string | number)[] = new Array(n * 5);
    for (let i = 0, k = 0; i < n; i++) {
      parts[k++] = '{"seq":';
      parts[k++] = first + i;
      parts[k++] = atPart(entries[i]!.at);
      parts[k++] = raws[i]!;
      parts[k++] = "}\n";
    }
    this.staged = 0;
    // The write never appends (its listeners only learn of the backlog), so the slots stay as they are until let go below.
    // Each line on its own only on a refused write: the usual path allocates nothing per event here.
    const refused = () =>
      Array.from({ length: n }, (_, i) => {
        const entry = entries[i]!;
        return this.withhold(entry, types[i], raws[i]!, `{"seq":${entry.seq},"at":${entry.at},"event":${raws[i]!}}\n`);
      });
    if (this.events.write(parts.join(""), refused)) {
      for (let i = 0; i < n; i++) this.ring.push(first + i, entries[i]!.at, raws[i]!, types[i], entries[i]!);
      this.writtenThrough = this.seq;
    }
    for (let i = 0; i < n; i++) {
      raws[i] = "";
      types[i] = undefined;
      entries[i] = null;
    }
  }

  /** Withhold an event the disk refused: its line for the backlog, with its priority. */
  private withhold(entry: LoggedEvent, type: unknown, raw: string, text: string): BacklogLine<WithheldEvent> {
    const withheld: WithheldEvent = { entry, type, raw };
    this.withheld.push(withheld);
    return { text, priority: backlogPriority(type), tag: withheld };
  }

  /** A refused line left the backlog: written (ring, then published by the owner) or dropped (its seq a gap). */
  private backlogLeft(left: WithheldEvent, written: boolean, onWritten: (() => void) | undefined): void {
    if (!written) {
      left.dropped = true;
      const priority = backlogPriority(left.type);
      this.dropped.events++;
      if (priority === BACKLOG_PRIORITY.streaming) this.dropped.streaming++;
      if (priority === BACKLOG_PRIORITY.boundary) this.dropped.boundaries++;
      // Let go of it now (the ring never holds it); the front stays a waiting event.
      left.entry = { seq: left.entry.seq, at: left.entry.at, event: {} };
      left.raw = "";
    } else {
      // Lines are written oldest first: what is in front of this one was dropped.
      const seq = left.entry.seq;
      if (seq > this.writtenThrough + 1)
        this.written.push({ gap: { from: this.writtenThrough + 1, to: seq - 1, lost: true } });
      this.ring.push(seq, left.entry.at, left.raw, left.type, left.entry);
      this.written.push(left);
      this.writtenThrough = seq;
      this.withheld.shift();
      onWritten?.();
    }
    while (this.withheld.length > 0 && this.withheld[0]!.dropped) this.withheld.shift();
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

/** An event whose log line waits for the disk: the entry, its type and its JSON. */
export interface WithheldEvent {
  entry: LoggedEvent;
  type: unknown;
  raw: string;
  /** The backlog dropped its line: it will never be written. */
  dropped?: true;
}

const NONE_DROPPED: DroppedEvents = Object.freeze({ events: 0, streaming: 0, boundaries: 0 });

/**
 * The entry of a forwarded event (`AgentEventLog.forward`): its object is parsed from its
 * JSON the first time it is read, so a stream that only goes to the log and to socket
 * subscribers (who get the JSON as the worker wrote it) never builds it.
 */
class ForwardedEvent implements LoggedEvent {
  private parsed: Record<string, unknown> | undefined;

  constructor(
    readonly seq: number,
    readonly at: number,
    private readonly raw: string,
    /** Its top-level `toolCallId` as the ring's compaction reads it ("" none), or null when not read. */
    readonly toolCallId: string | null,
  ) {}

  get event(): Record<string, unknown> {
    this.parsed ??= JSON.parse(this.raw) as Record<string, unknown>;
    return this.parsed;
  }
}
