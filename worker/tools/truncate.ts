/**
 * Output truncation shared by the tools: keep the head (file reads) or the tail (command
 * output) within a line limit and a byte limit, whichever is hit first. `truncateHead` and
 * `truncateTail` are pi 0.73.1's, result for result (extensions get them as pi's). Pure functions.
 */

/** Lines kept when a caller gives no limit. */
export const DEFAULT_MAX_LINES = 2000;

/** UTF-8 bytes kept when a caller gives no limit. */
export const DEFAULT_MAX_BYTES = 50 * 1024;

/** Limits of one truncation; each defaults to the constants above. */
export interface TruncateOptions {
  maxLines?: number;
  maxBytes?: number;
}

/**
 * What `truncateHead` / `truncateTail` kept, in pi's shape (the extension API hands them
 * out as pi's own). Lines are counted as pi 1.6 counts them: a final newline ends the
 * last line, so "a\nb\n" is 2 lines (0.73 counted 3).
 */
export interface TruncationResult {
  content: string;
  truncated: boolean;
  /** The limit that cut the text, or null when nothing was cut. */
  truncatedBy: "lines" | "bytes" | null;
  totalLines: number;
  totalBytes: number;
  outputLines: number;
  outputBytes: number;
  /** Tail only: the last line alone is longer than `maxBytes`; its end was kept, cut on a character boundary. */
  lastLinePartial: boolean;
  /** Head only: the first line alone is longer than `maxBytes`, so nothing was kept (`content` is ""). */
  firstLineExceedsLimit: boolean;
  maxLines: number;
  maxBytes: number;
}

/** Human size for notices: `512B`, `50.0KB`, `3.2MB`. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

/** The last at most `maxBytes` bytes of `text`, never starting inside a character. */
export function utf8Suffix(text: string, maxBytes: number): string {
  const buf = Buffer.from(text, "utf8");
  if (buf.length <= maxBytes) return text;
  let start = buf.length - maxBytes;
  while (start < buf.length && (buf[start]! & 0xc0) === 0x80) start++;
  return buf.subarray(start).toString("utf8");
}

/** grep's cut for one shown line, in characters (pi's `GREP_MAX_LINE_LENGTH`). */
export const GREP_MAX_LINE_LENGTH = 500;

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * pi 1.6's `truncateLine` (extensions get it as pi's): `line` cut to `maxChars` UTF-16
 * units, one less where the cut would split a surrogate pair, and marked `... [truncated]`.
 */
export function truncateLine(
  line: string,
  maxChars: number = GREP_MAX_LINE_LENGTH,
): { text: string; wasTruncated: boolean } {
  if (line.length <= maxChars) return { text: line, wasTruncated: false };
  const end = Math.max(0, maxChars);
  const splitsPair = isHighSurrogate(line.charCodeAt(end - 1)) && isLowSurrogate(line.charCodeAt(end));
  return { text: `${line.slice(0, splitsPair ? end - 1 : end)}... [truncated]`, wasTruncated: true };
}

function limits(options: TruncateOptions): { maxLines: number; maxBytes: number } {
  return { maxLines: options.maxLines ?? DEFAULT_MAX_LINES, maxBytes: options.maxBytes ?? DEFAULT_MAX_BYTES };
}

/** The result for a text of `total` lines and bytes cut to `content`; `truncatedBy` null means nothing was cut. */
function resultOf(
  total: { lines: number; bytes: number },
  content: string,
  truncatedBy: "lines" | "bytes" | null,
  outputLines: number,
  limit: { maxLines: number; maxBytes: number },
  edge: { lastLinePartial?: boolean; firstLineExceedsLimit?: boolean } = {},
): TruncationResult {
  return {
    content,
    truncated: truncatedBy !== null,
    truncatedBy,
    totalLines: total.lines,
    totalBytes: total.bytes,
    outputLines,
    outputBytes: Buffer.byteLength(content, "utf8"),
    lastLinePartial: edge.lastLinePartial ?? false,
    firstLineExceedsLimit: edge.firstLineExceedsLimit ?? false,
    ...limit,
  };
}

/** The lines pi 1.6 counts: none in an empty text, and a final newline ends the last line (0.73 counted an empty one after it). */
function countedLines(text: string): string[] {
  if (text.length === 0) return [];
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  return lines;
}

/**
 * Keep the beginning of `text`, exactly as pi 1.6's `truncateHead`: whole lines, at
 * most `maxLines` of them and `maxBytes` bytes, never part of a line. A first line longer
 * than `maxBytes` keeps nothing (`firstLineExceedsLimit`).
 */
export function truncateHead(text: string, options: TruncateOptions = {}): TruncationResult {
  const limit = limits(options);
  const { maxLines, maxBytes } = limit;
  const lines = countedLines(text);
  const total = { lines: lines.length, bytes: Buffer.byteLength(text, "utf8") };
  if (total.lines <= maxLines && total.bytes <= maxBytes) return resultOf(total, text, null, lines.length, limit);
  if (Buffer.byteLength(lines[0]!, "utf8") > maxBytes)
    return resultOf(total, "", "bytes", 0, limit, { firstLineExceedsLimit: true });

  const kept: string[] = [];
  let bytes = 0;
  let truncatedBy: "lines" | "bytes" = "lines";
  for (let i = 0; i < lines.length && i < maxLines; i++) {
    const line = lines[i]!;
    const cost = Buffer.byteLength(line, "utf8") + (i > 0 ? 1 : 0);
    if (bytes + cost > maxBytes) {
      truncatedBy = "bytes";
      break;
    }
    kept.push(line);
    bytes += cost;
  }
  // pi names the line limit whenever it was reached, even when the byte limit stopped the loop too.
  if (kept.length >= maxLines && bytes <= maxBytes) truncatedBy = "lines";
  return resultOf(total, kept.join("\n"), truncatedBy, kept.length, limit);
}

/**
 * Keep the end of `text`, exactly as pi 1.6's `truncateTail`: whole lines, at most
 * `maxLines` of them and `maxBytes` bytes. A last line longer than `maxBytes` is cut
 * inside and its end kept (`lastLinePartial`). A final newline ends the last line; a cut
 * text is returned without it.
 */
export function truncateTail(text: string, options: TruncateOptions = {}): TruncationResult {
  const limit = limits(options);
  const { maxLines, maxBytes } = limit;
  const lines = countedLines(text);
  const total = { lines: lines.length, bytes: Buffer.byteLength(text, "utf8") };
  if (total.lines <= maxLines && total.bytes <= maxBytes) return resultOf(total, text, null, lines.length, limit);

  const kept: string[] = [];
  let bytes = 0;
  let truncatedBy: "lines" | "bytes" = "lines";
  let lastLinePartial = false;
  for (let i = lines.length - 1; i >= 0 && kept.length < maxLines; i--) {
    const line = lines[i]!;
    const cost = Buffer.byteLength(line, "utf8") + (kept.length > 0 ? 1 : 0);
    if (bytes + cost > maxBytes) {
      truncatedBy = "bytes";
      if (kept.length === 0) {
        const end = utf8Suffix(line, maxBytes);
        kept.unshift(end);
        bytes = Buffer.byteLength(end, "utf8");
        lastLinePartial = true;
      }
      break;
    }
    kept.unshift(line);
    bytes += cost;
  }
  if (kept.length >= maxLines && bytes <= maxBytes) truncatedBy = "lines";
  return resultOf(total, kept.join("\n"), truncatedBy, kept.length, limit, { lastLinePartial });
}
