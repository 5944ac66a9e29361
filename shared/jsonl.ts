/**
 * Strict JSONL framing for the pi protocol: records end at LF only, a trailing CR is
 * stripped, U+2028/U+2029 stay inside strings, and a line has a byte limit.
 */
import type { Readable, Writable } from "node:stream";

/** Default limit of one protocol line, in bytes. */
export const DEFAULT_MAX_LINE_BYTES = 8 * 1024 * 1024;

/** Raised (through `onError`) for a line longer than the limit; the rest of that line is discarded. */
export class LineTooLongError extends Error {
  readonly code = "line_too_long";
  constructor(
    readonly limit: number,
    readonly seenBytes: number,
  ) {
    super(`line exceeds the ${limit}-byte limit (at least ${seenBytes} bytes); it was discarded`);
  }
}

export interface LineSplitterOptions {
  maxLineBytes?: number;
  onLine: (line: string) => void;
  onError?: (error: LineTooLongError) => void;
}

/**
 * Incremental LF splitter over bytes. Pure: feed it chunks, it calls back per line.
 * Memory stays bounded by `maxLineBytes`: an oversized line is reported once and
 * skipped up to its terminating LF, after which splitting resumes normally.
 */
export class LineSplitter {
  private readonly max: number;
  private parts: Buffer[] = [];
  private size = 0;
  private discarding = false;
  private discarded = 0;

  constructor(private readonly opts: LineSplitterOptions) {
    this.max = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  }

  push(chunk: Buffer | string): void {
    let buf = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    while (buf.length > 0) {
      const nl = buf.indexOf(0x0a);
      const piece = nl === -1 ? buf : buf.subarray(0, nl);
      if (this.discarding) {
        this.discarded += piece.length;
      } else if (this.size + piece.length > this.max) {
        this.discarding = true;
        this.discarded = this.size + piece.length;
        this.parts = [];
        this.size = 0;
      } else if (piece.length > 0) {
        this.parts.push(piece);
        this.size += piece.length;
      }
      if (nl === -1) return;
      this.endLine();
      buf = buf.subarray(nl + 1);
    }
  }

  /** Flush a final line that had no LF (the stream ended). */
  end(): void {
    if (this.size > 0 || this.discarding) this.endLine();
  }

  private endLine(): void {
    if (this.discarding) {
      this.discarding = false;
      const seen = this.discarded;
      this.discarded = 0;
      this.opts.onError?.(new LineTooLongError(this.max, seen));
      return;
    }
    let line = this.parts.length === 1 ? this.parts[0].toString("utf8") : Buffer.concat(this.parts, this.size).toString("utf8");
    this.parts = [];
    this.size = 0;
    if (line.endsWith("\r")) line = line.slice(0, -1);
    this.opts.onLine(line);
  }
}

/** Attach a splitter to a readable stream; `onEnd` runs after the last line. */
export function readLines(
  stream: Readable,
  opts: LineSplitterOptions & { onEnd?: () => void },
): LineSplitter {
  const splitter = new LineSplitter(opts);
  stream.on("data", (chunk: Buffer | string) => splitter.push(chunk));
  stream.on("end", () => {
    splitter.end();
    opts.onEnd?.();
  });
  return splitter;
}

/**
 * A value's JSON text, attached to it out of sight (a non-enumerable symbol), so a
 * writer can send text it already has instead of serialising the value again.
 */
export const WIRE = Symbol.for("pi-orch.wire");

/** Attach the JSON text of `value` (which must be exactly what JSON.stringify would give, in meaning). */
export function withWire<T extends object>(value: T, json: string): T {
  Object.defineProperty(value, WIRE, { value: json, enumerable: false });
  return value;
}

/** Result of parsing one protocol line. */
export type ParsedLine = { ok: true; value: unknown } | { ok: false; error: string };

/** Parse one line as JSON, with an error that names what was wrong. */
export function parseJsonLine(line: string): ParsedLine {
  try {
    return { ok: true, value: JSON.parse(line) };
  } catch (err) {
    return { ok: false, error: `not valid JSON: ${(err as Error).message}` };
  }
}

/**
 * Serialises objects as JSON lines onto a stream, one at a time, waiting for `drain`
 * when the stream's buffer is full so a slow reader slows the writer instead of
 * growing memory. Writes after the stream closed are dropped.
 */
export class JsonlWriter {
  private tail: Promise<void> = Promise.resolve();
  private closed = false;
  private corked = false;

  constructor(private readonly stream: Writable) {
    stream.on("error", () => {
      this.closed = true;
    });
    stream.on("close", () => {
      this.closed = true;
    });
  }

  /** Queue one object; the promise settles when the stream accepted it. */
  write(value: unknown): Promise<void> {
    const pre = value !== null && typeof value === "object" ? (value as { [WIRE]?: unknown })[WIRE] : undefined;
    const line = (typeof pre === "string" ? pre : JSON.stringify(value)) + "\n";
    this.tail = this.tail.then(() => this.writeRaw(line));
    return this.tail;
  }

  /** Resolves when every queued line was handed to the stream (uncorked, so a close after it loses nothing). */
  flush(): Promise<void> {
    return this.tail.then(() => this.uncork());
  }

  private uncork(): void {
    if (!this.corked) return;
    this.corked = false;
    this.stream.uncork();
  }

  private writeRaw(line: string): Promise<void> {
    if (this.closed || this.stream.destroyed || this.stream.writableEnded) return Promise.resolve();
    // Lines written in one burst leave in one system call: cork now, uncork once the
    // current run of callbacks and promise jobs is over.
    if (!this.corked) {
      this.corked = true;
      this.stream.cork();
      process.nextTick(() => this.uncork());
    }
    return new Promise<void>((resolve) => {
      const ok = this.stream.write(line);
      if (ok) return resolve();
      const done = () => {
        this.stream.off("drain", done);
        this.stream.off("close", done);
        this.stream.off("error", done);
        resolve();
      };
      this.stream.on("drain", done);
      this.stream.on("close", done);
      this.stream.on("error", done);
    });
  }
}
