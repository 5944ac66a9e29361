/**
 * Output truncation shared by the tools: keep the head (file reads) or the tail (command
 * output) within a line limit and a byte limit, whichever is hit first. Pure functions.
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
 * What `truncateHead` kept, in pi's shape (the extension API hands it out as pi's own).
 * Lines are counted as pi counts them: the pieces of `text.split("\n")`, so a final
 * newline opens one more (empty) line and "a\nb\n" is 3 lines.
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
  /** Always false for the head (pi sets it only for a tail cut inside a line). */
  lastLinePartial: boolean;
  /** The first line alone is longer than `maxBytes`: nothing was kept (`content` is ""). */
  firstLineExceedsLimit: boolean;
  maxLines: number;
  maxBytes: number;
}

/** What `truncateTail` kept. Lines are counted as an editor shows them: "a\nb\n" is 2 lines. */
export interface TailTruncation {
  content: string;
  truncated: boolean;
  /** The limit that cut the text, or null when nothing was cut. */
  truncatedBy: "lines" | "bytes" | null;
  totalLines: number;
  totalBytes: number;
  outputLines: number;
  outputBytes: number;
  /** The last line alone is longer than `maxBytes` and its end was kept, cut on a character boundary. */
  partialLine: boolean;
}

/** Number of lines in `text`; a trailing newline ends the last line rather than opening a new one. */
export function countLines(text: string): number {
  if (text.length === 0) return 0;
  let count = 1;
  let at = text.indexOf("\n");
  while (at !== -1) {
    if (at < text.length - 1) count++;
    at = text.indexOf("\n", at + 1);
  }
  return count;
}

/** Human size for notices: `512B`, `50.0KB`, `3.2MB`. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

/** The first at most `maxBytes` bytes of `text`, never ending inside a character. */
export function utf8Prefix(text: string, maxBytes: number): string {
  const buf = Buffer.from(text, "utf8");
  if (buf.length <= maxBytes) return text;
  let end = maxBytes;
  // A continuation byte (10xxxxxx) at the cut means the cut is inside a character.
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString("utf8");
}

/** The last at most `maxBytes` bytes of `text`, never starting inside a character. */
export function utf8Suffix(text: string, maxBytes: number): string {
  const buf = Buffer.from(text, "utf8");
  if (buf.length <= maxBytes) return text;
  let start = buf.length - maxBytes;
  while (start < buf.length && (buf[start]! & 0xc0) === 0x80) start++;
  return buf.subarray(start).toString("utf8");
}

/** `line` cut to `maxChars` characters, with a marker saying where, for tools that show matching lines. */
export function truncateLine(line: string, maxChars: number): { text: string; truncated: boolean } {
  if (line.length <= maxChars) return { text: line, truncated: false };
  return { text: `${line.slice(0, maxChars)}… [line cut at ${maxChars} chars]`, truncated: true };
}

/** The lines of `text` without the empty string a trailing newline would add. */
function splitLines(text: string): string[] {
  if (text.length === 0) return [];
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  return lines;
}

function limits(options: TruncateOptions): { maxLines: number; maxBytes: number } {
  return { maxLines: options.maxLines ?? DEFAULT_MAX_LINES, maxBytes: options.maxBytes ?? DEFAULT_MAX_BYTES };
}

function untouched(text: string, totalLines: number, totalBytes: number): TailTruncation {
  return {
    content: text,
    truncated: false,
    truncatedBy: null,
    totalLines,
    totalBytes,
    outputLines: totalLines,
    outputBytes: totalBytes,
    partialLine: false,
  };
}

/**
 * Keep the beginning of `text`, exactly as pi 0.73.1's `truncateHead`: whole lines, at
 * most `maxLines` of them and `maxBytes` bytes, never part of a line. A first line longer
 * than `maxBytes` keeps nothing (`firstLineExceedsLimit`); callers that want its start
 * cut it themselves (see `utf8Prefix`).
 */
export function truncateHead(text: string, options: TruncateOptions = {}): TruncationResult {
  const { maxLines, maxBytes } = limits(options);
  const totalBytes = Buffer.byteLength(text, "utf8");
  const lines = text.split("\n");
  const totalLines = lines.length;
  const result = (content: string, truncatedBy: "lines" | "bytes" | null, outputLines: number, firstLineExceedsLimit = false): TruncationResult => ({
    content,
    truncated: truncatedBy !== null,
    truncatedBy,
    totalLines,
    totalBytes,
    outputLines,
    outputBytes: Buffer.byteLength(content, "utf8"),
    lastLinePartial: false,
    firstLineExceedsLimit,
    maxLines,
    maxBytes,
  });
  if (totalLines <= maxLines && totalBytes <= maxBytes) return result(text, null, totalLines);
  if (Buffer.byteLength(lines[0]!, "utf8") > maxBytes) return result("", "bytes", 0, true);

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
  return result(kept.join("\n"), truncatedBy, kept.length);
}

/**
 * Keep the end of `text`: whole lines, at most `maxLines` of them and `maxBytes` bytes.
 * A last line longer than `maxBytes` is cut inside and its end kept (see `partialLine`).
 * A trailing newline of the input is kept, so appended notices start on their own line.
 */
export function truncateTail(text: string, options: TruncateOptions = {}): TailTruncation {
  const { maxLines, maxBytes } = limits(options);
  const totalBytes = Buffer.byteLength(text, "utf8");
  const totalLines = countLines(text);
  if (totalLines <= maxLines && totalBytes <= maxBytes) return untouched(text, totalLines, totalBytes);

  const lines = splitLines(text);
  const newline = text.endsWith("\n") ? "\n" : "";
  const kept: string[] = [];
  let bytes = Buffer.byteLength(newline, "utf8");
  let truncatedBy: "lines" | "bytes" = "lines";
  let partialLine = false;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (kept.length === maxLines) break;
    const line = lines[i]!;
    const cost = Buffer.byteLength(line, "utf8") + (kept.length > 0 ? 1 : 0);
    if (bytes + cost > maxBytes) {
      truncatedBy = "bytes";
      if (kept.length === 0 && maxLines > 0 && maxBytes - bytes > 0) {
        kept.push(utf8Suffix(line, maxBytes - bytes));
        partialLine = true;
      }
      break;
    }
    kept.push(line);
    bytes += cost;
  }
  kept.reverse();
  const content = kept.length > 0 ? kept.join("\n") + newline : "";
  return {
    content,
    truncated: true,
    truncatedBy,
    totalLines,
    totalBytes,
    outputLines: kept.length,
    outputBytes: Buffer.byteLength(content, "utf8"),
    partialLine,
  };
}
