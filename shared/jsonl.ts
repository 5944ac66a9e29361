/**
 * Strict JSONL framing for the pi protocol: records end at LF only, a trailing CR is
 * stripped, U+2028/U+2029 stay inside strings, and a line has a byte limit.
 */
import type { Readable, Writable } from "node:stream";

/** Default limit of one protocol line, in bytes. */
export const DEFAULT_MAX_LINE_BYTES = 8 * 1024 * 1024;

/** Most bytes one event a worker writes may have: half the line limit, so the supervisor's envelope around it fits too. */
export const DEFAULT_MAX_EVENT_BYTES = DEFAULT_MAX_LINE_BYTES / 2;

/** Bytes of an oversized line kept for `LineTooLongError.head`: enough to tell its `type` and `id`. */
export const LINE_HEAD_BYTES = 256;

/** Raised (through `onError`) for a line longer than the limit; the rest of that line is discarded. */
export class LineTooLongError extends Error {
  readonly code = "line_too_long";
  constructor(
    readonly limit: number,
    readonly seenBytes: number,
    /** The line's first bytes (up to `LINE_HEAD_BYTES`), so a reader can still tell what it was. */
    readonly head: string = "",
  ) {
    super(`line exceeds the ${limit}-byte limit (at least ${seenBytes} bytes); it was discarded`);
  }
}

/** The `type` and `id` (a string, or a number) a JSON object line starts with, read from its head. */
export function peekLineHead(head: string): { type?: string; id?: string | number } {
  const type = /"type"\s*:\s*"([^"\\]{1,64})"/.exec(head)?.[1];
  const idMatch = /"id"\s*:\s*(?:"([^"\\]{1,256})"|(-?\d{1,15})[,}\s])/.exec(head);
  const id = idMatch ? (idMatch[1] ?? Number(idMatch[2])) : undefined;
  return { ...(type !== undefined ? { type } : {}), ...(id !== undefined ? { id } : {}) };
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
  private head = "";

  constructor(private readonly opts: LineSplitterOptions) {
    this.max = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  }

  push(chunk: Buffer | string): void {
    const buf = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    let start = 0;
    while (start < buf.length) {
      const nl = buf.indexOf(0x0a, start);
      const end = nl === -1 ? buf.length : nl;
      const length = end - start;
      if (this.discarding) {
        this.discarded += length;
      } else if (this.size + length > this.max) {
        this.discarding = true;
        this.discarded = this.size + length;
        this.head = headOf([...this.parts, buf.subarray(start, end)]);
        this.parts = [];
        this.size = 0;
      } else if (nl !== -1 && this.size === 0) {
        // The common case, a whole line inside one chunk: decoded in place, no copy or view.
        this.emitLine(buf.toString("utf8", start, end));
        start = nl + 1;
        continue;
      } else if (length > 0) {
        this.parts.push(buf.subarray(start, end));
        this.size += length;
      }
      if (nl === -1) return;
      this.endLine();
      start = nl + 1;
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
      const head = this.head;
      this.discarded = 0;
      this.head = "";
      this.opts.onError?.(new LineTooLongError(this.max, seen, head));
      return;
    }
    const line =
      this.parts.length === 0
        ? ""
        : this.parts.length === 1
          ? this.parts[0].toString("utf8")
          : Buffer.concat(this.parts, this.size).toString("utf8");
    this.parts = [];
    this.size = 0;
    this.emitLine(line);
  }

  private emitLine(line: string): void {
    this.opts.onLine(line.endsWith("\r") ? line.slice(0, -1) : line);
  }
}

/** The first `LINE_HEAD_BYTES` of the concatenation of `parts`, without copying the rest. */
function headOf(parts: readonly Buffer[]): string {
  const taken: Buffer[] = [];
  let size = 0;
  for (const part of parts) {
    if (size >= LINE_HEAD_BYTES) break;
    const piece = part.subarray(0, LINE_HEAD_BYTES - size);
    taken.push(piece);
    size += piece.length;
  }
  return Buffer.concat(taken, size).toString("utf8");
}

/** Attach a splitter to a readable stream; `onEnd` runs after the last line. */
export function readLines(stream: Readable, opts: LineSplitterOptions & { onEnd?: () => void }): LineSplitter {
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
 * writer can send text it already has instead of serialising the value again: a
 * string, or the text's UTF-8 bytes in chunks (`WireChunks`) to be sent one after another.
 */
export const WIRE = Symbol.for("pi-orch.wire");

/** JSON text as UTF-8 byte chunks, in order: sent as they are, never joined into one string. */
export type WireChunks = readonly Buffer[];

/** Attach the JSON text of `value` (which must be exactly what JSON.stringify would give, in meaning). */
export function withWire<T extends object>(value: T, json: string | WireChunks): T {
  Object.defineProperty(value, WIRE, { value: json, enumerable: false });
  return value;
}

/** The UTF-8 JSON of frozen values, made once per value (a frozen value's JSON never changes). */
const frozenJson = new WeakMap<object, Buffer>();

/** `JSON.stringify(value)` as UTF-8, made once per value when it is frozen (shallowly: what it holds must not change either). */
export function jsonBytesOfFrozen(value: object): Buffer {
  let json = frozenJson.get(value);
  if (json === undefined) {
    json = Buffer.from(JSON.stringify(value));
    if (Object.isFrozen(value)) frozenJson.set(value, json);
  }
  return json;
}

const COMMA = Buffer.from(",");
const NEWLINE = Buffer.from("\n");
const OPEN_BRACKET = Buffer.from("[");
const CLOSE_BRACKET = Buffer.from("]");

/**
 * `items`, with their JSON attached (as `withWire`), made when a writer asks for it from
 * each item's own bytes, which a frozen item keeps: a list of 1,000 agents asked for again
 * and again while few of them change serialises only those that changed, and is sent
 * from those bytes without one big string (joining, flattening and encoding 600 KB three
 * times over took a fleet's supervisor 1.3 ms per answer).
 */
export function withItemsWire<T extends object>(items: T[]): T[] {
  Object.defineProperty(items, WIRE, {
    get: (): WireChunks => {
      const chunks: Buffer[] = [OPEN_BRACKET];
      for (let i = 0; i < items.length; i++) {
        if (i > 0) chunks.push(COMMA);
        chunks.push(jsonBytesOfFrozen(items[i]!));
      }
      chunks.push(CLOSE_BRACKET);
      return chunks;
    },
    enumerable: false,
  });
  return items;
}

/** The JSON attached to `value` with `withWire` or `withItemsWire`, if any. */
export function wireOf(value: unknown): string | WireChunks | undefined {
  const pre = value !== null && typeof value === "object" ? (value as { [WIRE]?: unknown })[WIRE] : undefined;
  return typeof pre === "string" || Array.isArray(pre) ? (pre as string | WireChunks) : undefined;
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
 * The value of one line as JSON, or undefined when it is not JSON: for the hot path that
 * tells a bad line by its text, with no object around the value (one per routed event).
 */
export function parseJsonValue(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** Whether the JSON text `line` is longer than `maxBytes` in UTF-8 (counting only when it could be). */
function overBytes(line: string, maxBytes: number): boolean {
  return line.length * 3 > maxBytes && Buffer.byteLength(line, "utf8") > maxBytes;
}

function cutStrings(value: unknown, cap: number, note: (cut: number) => string): unknown {
  if (typeof value === "string") return value.length > cap ? value.slice(0, cap) + note(value.length - cap) : value;
  if (Array.isArray(value)) return value.map((v) => cutStrings(v, cap, note));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = cutStrings(v, cap, note);
    return out;
  }
  return value;
}

/**
 * The JSON line of `value`, made to fit `maxBytes`: when it is longer, every long
 * string in it (tool output, file contents) is cut with a note saying how much, with
 * ever smaller caps until it fits; if even that fails, only `type` is kept with
 * `truncated: true`. So a reader's line limit never drops an event (an `agent_end`
 * repeating megabytes of tool output still ends the run). Pure.
 */
export function fitLine(
  value: unknown,
  maxBytes: number,
  line: string = JSON.stringify(value),
): { line: string; cut: boolean } {
  if (!overBytes(line, maxBytes)) return { line, cut: false };
  const note = (cut: number) => `…[${cut} characters cut: the event was over ${maxBytes} bytes]`;
  for (let cap = Math.floor(maxBytes / 8); cap >= 64; cap = Math.floor(cap / 4)) {
    const shorter = JSON.stringify(cutStrings(value, cap, note));
    if (!overBytes(shorter, maxBytes)) return { line: shorter, cut: true };
  }
  const type = value !== null && typeof value === "object" ? (value as { type?: unknown }).type : undefined;
  return {
    line: JSON.stringify({
      ...(typeof type === "string" ? { type } : {}),
      truncated: true,
      bytes: Buffer.byteLength(line, "utf8"),
    }),
    cut: true,
  };
}

/**
 * Serialises objects as JSON lines onto a stream, one at a time, waiting for `drain`
 * when the stream's buffer is full so a slow reader slows the writer instead of
 * growing memory. Writes after the stream closed are dropped. With `maxLineBytes`,
 * a value whose line would be longer is cut to fit (`fitLine`).
 */
export class JsonlWriter {
  private tail: Promise<void> = Promise.resolve();
  private closed = false;
  private corked = false;
  /** Lines queued on `tail` that were not yet handed to the stream. */
  private queued = 0;
  /** Set while the stream's buffer is full: resolves on `drain`. */
  private waiting: Promise<void> | null = null;

  constructor(
    private readonly stream: Writable,
    private readonly maxLineBytes?: number,
  ) {
    stream.on("error", () => {
      this.closed = true;
    });
    stream.on("close", () => {
      this.closed = true;
    });
  }

  /** Queue one object; the promise settles when the stream accepted it. */
  write(value: unknown): Promise<void> {
    const wire = wireOf(value);
    let line: string | Buffer;
    if (typeof wire === "object") {
      // Chunks, copied once into the line; one over the limit is cut as any value is.
      line = Buffer.concat([...wire, NEWLINE]);
      if (this.maxLineBytes !== undefined && line.length - 1 > this.maxLineBytes)
        line = `${fitLine(value, this.maxLineBytes).line}\n`;
    } else {
      let text = wire ?? JSON.stringify(value);
      if (this.maxLineBytes !== undefined) text = fitLine(value, this.maxLineBytes, text).line;
      line = `${text}\n`;
    }
    this.queued++;
    this.tail = this.tail.then(() => {
      this.queued--;
      return this.writeNow(line, true) ?? undefined;
    });
    return this.tail;
  }

  /**
   * Write ready JSON lines (each ending in a newline), after whatever is queued. When
   * nothing is queued and the stream takes them, they are written before this returns
   * and nothing is returned; otherwise the promise settles once the stream took them.
   */
  writeText(text: string): Promise<void> | undefined {
    if (this.queued > 0 || this.waiting) {
      this.queued++;
      this.tail = this.tail.then(() => {
        this.queued--;
        return this.writeNow(text, false) ?? undefined;
      });
      return this.tail;
    }
    const pending = this.writeNow(text, false);
    if (pending) this.tail = pending;
    return pending;
  }

  /**
   * While the stream's buffer is full or lines wait to be handed to it: a promise that
   * settles once they are all handed over; otherwise undefined. A producer that waits for
   * it keeps its reader at most one buffer behind.
   */
  behind(): Promise<void> | undefined {
    return this.waiting || this.queued > 0 ? this.tail : undefined;
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

  /** Hand `text` to the stream; a promise when its buffer is full (settles on drain or close). */
  private writeNow(text: string | Buffer, cork: boolean): Promise<void> | undefined {
    if (this.closed || this.stream.destroyed || this.stream.writableEnded) return undefined;
    // Lines written one by one in a burst leave in one system call: cork now, uncork once
    // the current run of callbacks and promise jobs is over. A batch is one write already.
    if (cork && !this.corked) {
      this.corked = true;
      this.stream.cork();
      process.nextTick(() => this.uncork());
    }
    if (this.stream.write(text)) return undefined;
    this.waiting = new Promise<void>((resolve) => {
      const done = () => {
        this.stream.off("drain", done);
        this.stream.off("close", done);
        this.stream.off("error", done);
        this.waiting = null;
        resolve();
      };
      this.stream.on("drain", done);
      this.stream.on("close", done);
      this.stream.on("error", done);
    });
    return this.waiting;
  }
}
