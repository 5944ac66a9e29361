/**
 * The `type` of a worker's event line without `JSON.parse`, for the routing hot path:
 * most lines of a stream are only logged and forwarded, and routing needs nothing of
 * them but their type; the line itself is forwarded as the worker wrote it. The scan
 * still checks the whole line as JSON (a line forwarded unchecked would break every
 * subscriber's stream), and says so only when sure: any line it is not sure of (an
 * escape in a top-level key or in the type, a control character, deep nesting, not an
 * object, not JSON at all) gets `null`, and the caller parses it as before. Pure.
 */

/** Deepest nesting the scan follows; a deeper line is left to `JSON.parse`. */
const MAX_DEPTH = 64;

/** Kinds of the open containers while a line is scanned (1 object, 2 array); one for all scans. */
const KINDS = new Uint8Array(MAX_DEPTH);

const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** Any character below U+0020: never valid inside a JSON string (only space, tab, CR, LF between tokens). */
const CONTROL = /[\x00-\x1f]/;

/** Index of the next backslash at or after the scan's position (-1: none left); the scan moves it on. */
let slash = -1;

/** The last scan's top-level `toolCallId` (`scannedToolCallId`). */
let toolCallId: string | null = "";

/**
 * The top-level `toolCallId` of the line `scanEventType` last named a type for, as the
 * ring's compaction reads it: the string, "" when the line has none, null when its value
 * is not a string written without escapes (read it from the parsed event). Valid until
 * the next scan.
 */
export function scannedToolCallId(): string | null {
  return toolCallId;
}

/**
 * The value of the last top-level `"type"` member of the JSON object `line` (what
 * `JSON.parse(line).type` is), when it is a string written without escapes and the whole
 * line is valid JSON; otherwise null (the caller parses the line).
 */
export function scanEventType(line: string): string | null {
  const n = line.length;
  if (n < 2 || line.charCodeAt(0) !== OPEN_BRACE || line.charCodeAt(n - 1) !== CLOSE_BRACE) return null;
  // Tabs, CRs and newlines between tokens are JSON, but no writer of ours puts them there:
  // a line with any control character is left to the parser, and strings need no check for
  // them. Nor may anything follow the object's end: the line is forwarded as it is.
  if (CONTROL.test(line)) return null;
  slash = line.indexOf("\\");
  toolCallId = "";
  // Kinds of the open containers: 1 object, 2 array; `depth` of them.
  const stack = KINDS;
  let depth = 0;
  let type: string | null = null;
  let i = 0;
  // What comes next: 0 a value, 1 a key or `}` (just after `{`), 2 `,` or the container's end, 3 a key (after `,`), 4 a value or `]` (just after `[`).
  let expect = 0;
  for (;;) {
    // Between tokens: spaces only (control characters were refused above).
    let c = line.charCodeAt(i);
    while (c === 0x20) c = line.charCodeAt(++i);
    if (i >= n) return null;
    if (expect === 0) {
      // A value.
      if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (depth === MAX_DEPTH) return null;
        stack[depth++] = c === OPEN_BRACE ? 1 : 2;
        i++;
        expect = c === OPEN_BRACE ? 1 : 4;
        continue;
      }
      if (c === QUOTE) i = stringEnd(line, i);
      else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) i = numberEnd(line, i);
      else if (c === 0x74 && line.startsWith("true", i)) i += 4;
      else if (c === 0x66 && line.startsWith("false", i)) i += 5;
      else if (c === 0x6e && line.startsWith("null", i)) i += 4;
      else return null;
      if (i < 0) return null;
      expect = 2;
      continue;
    }
    if (expect === 4) {
      // Just after `[`: a value or `]`.
      if (c === CLOSE_BRACKET) {
        depth--;
        i++;
        expect = 2;
      } else expect = 0;
      continue;
    }
    if (expect === 2) {
      if (c === COMMA) {
        i++;
        expect = stack[depth - 1] === 1 ? 3 : 0;
        continue;
      }
      if ((c === CLOSE_BRACE && stack[depth - 1] === 1) || (c === CLOSE_BRACKET && stack[depth - 1] === 2)) {
        i++;
        if (--depth === 0) return i === n ? type : null;
        continue;
      }
      return null;
    }
    // A key (expect 1 or 3), or `}` just after `{`.
    if (c === CLOSE_BRACE && expect === 1) {
      i++;
      if (--depth === 0) return i === n ? type : null;
      expect = 2;
      continue;
    }
    if (c !== QUOTE) return null;
    // A top-level key with an escape could spell `type`: left to the parser.
    if (depth === 1 && slash !== -1 && slash < line.indexOf('"', i + 1)) return null;
    const keyEnd = stringEnd(line, i);
    if (keyEnd < 0) return null;
    const isType = depth === 1 && keyEnd - i === 6 && line.startsWith('"type"', i);
    const isToolCallId = depth === 1 && keyEnd - i === 12 && line.startsWith('"toolCallId"', i);
    i = keyEnd;
    c = line.charCodeAt(i);
    while (c === 0x20) c = line.charCodeAt(++i);
    if (c !== COLON) return null;
    i++;
    expect = 0;
    if (!isType && !isToolCallId) continue;
    c = line.charCodeAt(i);
    while (c === 0x20) c = line.charCodeAt(++i);
    const end = c === QUOTE ? line.indexOf('"', i + 1) : -1;
    // A plain string (no escape before its end) is read here; any other value is scanned as one.
    const plain = end > 0 && (slash === -1 || slash > end);
    if (isType) {
      // A type that is not a plain string: left to the parser.
      if (!plain) return null;
      type = line.slice(i + 1, end);
    } else {
      toolCallId = plain ? line.slice(i + 1, end) : null;
      if (!plain) continue;
    }
    i = end + 1;
    expect = 2;
  }
}

/** Index just past the string whose opening quote is at `i`; -1 when it is not a valid JSON string. */
function stringEnd(line: string, i: number): number {
  let quote = line.indexOf('"', i + 1);
  for (;;) {
    if (quote < 0) return -1;
    if (slash === -1 || slash > quote) return quote + 1;
    // An escape before the quote: it must be one JSON has, and it may be the quote's own.
    const e = line.charCodeAt(slash + 1);
    let next: number;
    if (e === 0x75) {
      for (let k = slash + 2; k < slash + 6; k++) if (!isHex(line.charCodeAt(k))) return -1;
      next = slash + 6;
    } else if (
      e === QUOTE ||
      e === 0x5c ||
      e === 0x2f ||
      e === 0x62 ||
      e === 0x66 ||
      e === 0x6e ||
      e === 0x72 ||
      e === 0x74
    )
      next = slash + 2;
    else return -1;
    slash = line.indexOf("\\", next);
    if (quote < next) quote = line.indexOf('"', next);
  }
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}
/** Index just past the JSON number at `i`, or -1 when there is none. */
function numberEnd(line: string, i: number): number {
  let c = line.charCodeAt(i);
  if (c === 0x2d) c = line.charCodeAt(++i);
  if (c === 0x30) c = line.charCodeAt(++i);
  else if (isDigit(c)) {
    do c = line.charCodeAt(++i);
    while (isDigit(c));
  } else return -1;
  if (c === 0x2e) {
    c = line.charCodeAt(++i);
    if (!isDigit(c)) return -1;
    do c = line.charCodeAt(++i);
    while (isDigit(c));
  }
  if (c === 0x65 || c === 0x45) {
    c = line.charCodeAt(++i);
    if (c === 0x2b || c === 0x2d) c = line.charCodeAt(++i);
    if (!isDigit(c)) return -1;
    do c = line.charCodeAt(++i);
    while (isDigit(c));
  }
  return i;
}
