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

/** What was kept and what it was cut from. Lines are counted as an editor shows them: "a\nb\n" is 2 lines. */
export interface TruncationResult {
  content: string;
  truncated: boolean;
  /** The limit that cut the text, or null when nothing was cut. */
  truncatedBy: "lines" | "bytes" | null;
  totalLines: number;
  totalBytes: number;
  outputLines: number;
  outputBytes: number;
  /**
   * The one edge line kept (first for head, last for tail) is longer than `maxBytes`
   * and was cut inside, on a character boundary.
   */
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

function untouched(text: string, totalLines: number, totalBytes: number): TruncationResult {
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
 * Keep the beginning of `text`: whole lines, at most `maxLines` of them and `maxBytes`
 * bytes. A first line longer than `maxBytes` is cut inside (see `partialLine`), so the
 * result is empty only when the text is.
 */
export function truncateHead(text: string, options: TruncateOptions = {}): TruncationResult {
  const { maxLines, maxBytes } = limits(options);
  const totalBytes = Buffer.byteLength(text, "utf8");
  const totalLines = countLines(text);
  if (totalLines <= maxLines && totalBytes <= maxBytes) return untouched(text, totalLines, totalBytes);

  const lines = splitLines(text);
  const kept: string[] = [];
  let bytes = 0;
  let truncatedBy: "lines" | "bytes" = "lines";
  let partialLine = false;
  for (const line of lines) {
    if (kept.length === maxLines) break;
    const cost = Buffer.byteLength(line, "utf8") + (kept.length > 0 ? 1 : 0);
    if (bytes + cost > maxBytes) {
      truncatedBy = "bytes";
      if (kept.length === 0 && maxBytes > 0 && maxLines > 0) {
        kept.push(utf8Prefix(line, maxBytes));
        partialLine = true;
      }
      break;
    }
    kept.push(line);
    bytes += cost;
  }
  const content = kept.join("\n");
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

/**
 * Keep the end of `text`: whole lines, at most `maxLines` of them and `maxBytes` bytes.
 * A last line longer than `maxBytes` is cut inside and its end kept (see `partialLine`).
 * A trailing newline of the input is kept, so appended notices start on their own line.
 */
export function truncateTail(text: string, options: TruncateOptions = {}): TruncationResult {
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
