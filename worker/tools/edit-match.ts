/**
 * The pure core of the `edit` tool: match every `oldText` against the original text
 * (exactly, else on a normalized copy), apply the replacements and describe the change
 * as a unified diff. Normalization only finds the span; the span is replaced by `newText`
 * as given, never by a copy rewritten to the file's quotes or dashes. No I/O here;
 * `edit.ts` reads and writes the file around it.
 */

/** One replacement the model asked for. */
export interface TextEdit {
  oldText: string;
  newText: string;
}

/** The outcome of `applyEdits`. */
export interface AppliedEdits {
  /** The whole new file content, BOM and line endings as the original had them. */
  text: string;
  /** Unified diff of the change (LF line endings, 3 lines of context). */
  diff: string;
  /** 1-based line number, in the new text, of the first changed line. */
  firstChangedLine: number;
  /** True when at least one edit only matched after normalization. */
  normalized: boolean;
}

/** A refusal the model can act on; the message says what to change in the call. */
export class EditError extends Error {
  override name = "EditError";
}

/** A matched span of the LF-normalized text and what replaces it. */
interface Span {
  index: number;
  start: number;
  end: number;
  replacement: string;
}

/**
 * Replace every `oldText` with its `newText`. All edits are matched against the original
 * (never against the result of an earlier edit); bytes outside the matched spans are
 * never touched. Throws `EditError` when an edit is missing, ambiguous, overlapping or a no-op.
 */
export function applyEdits(original: string, edits: readonly TextEdit[], path = "the file"): AppliedEdits {
  if (edits.length === 0) throw new EditError(`No edits given for ${path}: pass at least one {oldText, newText}.`);
  const bom = original.startsWith("\uFEFF") ? "\uFEFF" : "";
  const content = bom ? original.slice(1) : original;
  const lf = toLf(content);
  const eol = detectEol(content);
  const label = (i: number) => (edits.length === 1 ? "oldText" : `edits[${i}].oldText`);

  let folded: Folded | undefined;
  let normalized = false;
  const spans: Span[] = edits.map((edit, index): Span => {
    const oldText = toLf(edit.oldText).text;
    const newText = toLf(edit.newText).text;
    if (oldText.length === 0) {
      throw new EditError(
        `${label(index)} is empty in ${path}. Include at least one existing line to anchor the change (use write to create a whole file).`,
      );
    }
    const exact = occurrences(lf.text, oldText);
    if (exact.length > 1) throw ambiguous(label(index), exact.length, path);
    if (exact.length === 1) {
      const start = exact[0]!;
      return { index, start, end: start + oldText.length, replacement: newText };
    }
    folded ??= fold(lf.text, true);
    const needle = fold(oldText, false).text;
    const hits =
      needle.length === 0
        ? []
        : occurrences(folded.text, needle).filter((at) => onBoundary(folded!, at, needle.length));
    if (hits.length > 1) throw ambiguous(label(index), hits.length, path);
    if (hits.length === 0) {
      throw new EditError(
        `${label(index)} was not found in ${path}. It must match the file exactly, including whitespace, indentation and line breaks; read the file again and copy the text from it.`,
      );
    }
    normalized = true;
    const at = hits[0]!;
    const start = folded.start[at]!;
    const end = folded.end[at + needle.length - 1]!;
    // Only where the match is comes from normalization: newText is written exactly as the model gave it.
    return { index, start, end, replacement: newText };
  });

  for (const span of spans) {
    if (lf.text.slice(span.start, span.end) === span.replacement) {
      throw new EditError(
        `edits[${span.index}] changes nothing in ${path}: its newText equals the text it replaces. Drop it, or give the change you intend.`,
      );
    }
  }
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1]!;
    const cur = sorted[i]!;
    if (cur.start < prev.end) {
      throw new EditError(
        `edits[${prev.index}] and edits[${cur.index}] overlap in ${path}. Merge them into one edit whose oldText covers both changes.`,
      );
    }
  }

  const out: string[] = [bom];
  const newLf: string[] = [];
  let lfAt = 0;
  let origAt = 0;
  for (const span of sorted) {
    const origStart = lf.toOriginal(span.start);
    out.push(content.slice(origAt, origStart), eol === "\n" ? span.replacement : span.replacement.replace(/\n/g, eol));
    newLf.push(lf.text.slice(lfAt, span.start), span.replacement);
    origAt = lf.toOriginal(span.end);
    lfAt = span.end;
  }
  out.push(content.slice(origAt));
  newLf.push(lf.text.slice(lfAt));
  const { diff, firstChangedLine } = unifiedDiff(lf.text, newLf.join(""), path);
  return { text: out.join(""), diff, firstChangedLine, normalized };
}

function ambiguous(label: string, count: number, path: string): EditError {
  return new EditError(
    `${label} occurs ${count} times in ${path}. It must be unique: add surrounding lines to it so it matches exactly one place.`,
  );
}

/** Start offsets of every (possibly overlapping) occurrence of `needle`. */
function occurrences(haystack: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) found.push(at);
  return found;
}

/** The file's line ending: the one its first line uses (pi's rule), LF when it has none. */
function detectEol(text: string): "\n" | "\r\n" {
  const lf = text.indexOf("\n");
  return lf > 0 && text[lf - 1] === "\r" ? "\r\n" : "\n";
}

/** Text with CRLF turned into LF, and the way back from its offsets to the original's. */
interface LfText {
  text: string;
  toOriginal(offset: number): number;
}

function toLf(text: string): LfText {
  if (!text.includes("\r\n")) return { text, toOriginal: (offset) => offset };
  // Offsets (in the LF text) of every "\n" that was "\r\n"; each one before an offset shifts it by one.
  const crlf: number[] = [];
  const parts = text.split("\r\n");
  let at = 0;
  for (let i = 0; i < parts.length - 1; i++) {
    at += parts[i]!.length;
    crlf.push(at);
    at += 1;
  }
  return {
    text: parts.join("\n"),
    toOriginal(offset) {
      let lo = 0;
      let hi = crlf.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (crlf[mid]! < offset) lo = mid + 1;
        else hi = mid;
      }
      return offset + lo;
    },
  };
}

/** A normalized copy of a text; unit i of `text` came from `[start[i], end[i])` of the source. */
interface Folded {
  text: string;
  start: Int32Array;
  end: Int32Array;
}

const SINGLE_QUOTES = /[\u2018\u2019\u201A\u201B]/g;
const DOUBLE_QUOTES = /[\u201C\u201D\u201E\u201F]/g;
const DASHES = /[\p{Pd}\u2212]/gu;
const SPACES = /\p{Zs}/gu;
const MARK = /\p{M}/u;

/** White space dropped at the end of a line: what String.prototype.trimEnd drops after folding. */
function isTrailingSpace(unit: number): boolean {
  return (
    unit === 32 || (unit >= 9 && unit <= 13 && unit !== 10) || unit === 0x2028 || unit === 0x2029 || unit === 0xfeff
  );
}

function unitsToString(units: Uint16Array, length: number): string {
  const parts: string[] = [];
  for (let at = 0; at < length; at += 8192)
    parts.push(String.fromCharCode(...units.subarray(at, Math.min(length, at + 8192))));
  return parts.join("");
}

function foldChunk(chunk: string): string {
  return chunk
    .normalize("NFKC")
    .replace(SINGLE_QUOTES, "'")
    .replace(DOUBLE_QUOTES, '"')
    .replace(DASHES, "-")
    .replace(SPACES, " ");
}

/**
 * Normalize for matching: NFKC, smart quotes to ASCII, every dash to "-", special spaces
 * to " ", trailing white space of each line dropped. It works chunk by chunk (a code point
 * and its combining marks) so every output unit knows the source span it came from; the
 * same function folds the file and the oldText, so both sides always agree.
 */
function fold(text: string, withMap: boolean): Folded {
  const n = text.length;
  let capacity = n + 16;
  let units = new Uint16Array(capacity);
  let start = new Int32Array(withMap ? capacity : 0);
  let end = new Int32Array(withMap ? capacity : 0);
  let length = 0;
  // White space is appended as it comes and rolled back when a line break (or the end) shows it was trailing.
  let spaceFrom = -1;
  const append = (unit: number, from: number, to: number) => {
    if (length === capacity) {
      capacity *= 2;
      const grownUnits = new Uint16Array(capacity);
      grownUnits.set(units);
      units = grownUnits;
      if (withMap) {
        const grownStart = new Int32Array(capacity);
        grownStart.set(start);
        start = grownStart;
        const grownEnd = new Int32Array(capacity);
        grownEnd.set(end);
        end = grownEnd;
      }
    }
    if (unit === 10) {
      if (spaceFrom !== -1) length = spaceFrom;
      spaceFrom = -1;
    } else if (isTrailingSpace(unit)) {
      if (spaceFrom === -1) spaceFrom = length;
    } else {
      spaceFrom = -1;
    }
    units[length] = unit;
    if (withMap) {
      start[length] = from;
      end[length] = to;
    }
    length++;
  };
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    // ASCII not followed by a combining mark folds to itself: the common case, kept cheap.
    if (c < 0x80 && (i + 1 >= n || text.charCodeAt(i + 1) < 0x300)) {
      append(c, i, i + 1);
      i++;
      continue;
    }
    let j = i + (c >= 0xd800 && c <= 0xdbff && i + 1 < n ? 2 : 1);
    while (j < n) {
      const cp = text.codePointAt(j)!;
      if (cp < 0x300 || !MARK.test(String.fromCodePoint(cp))) break;
      j += cp > 0xffff ? 2 : 1;
    }
    const folded = foldChunk(text.slice(i, j));
    for (let k = 0; k < folded.length; k++) append(folded.charCodeAt(k), i, j);
    i = j;
  }
  if (spaceFrom !== -1) length = spaceFrom;
  return {
    text: unitsToString(units, length),
    start: withMap ? start.subarray(0, length) : start,
    end: withMap ? end.subarray(0, length) : end,
  };
}

/** A hit that starts or ends inside one source chunk (e.g. half of "ﬁ") cannot be mapped back. */
function onBoundary(folded: Folded, at: number, length: number): boolean {
  const last = at + length;
  const startsClean = at === 0 || folded.start[at] !== folded.start[at - 1];
  const endsClean = last === folded.text.length || folded.start[last] !== folded.start[last - 1];
  return startsClean && endsClean;
}

const EQUAL = 0;
const DELETE = 1;
const INSERT = 2;
type Op = typeof EQUAL | typeof DELETE | typeof INSERT;

/** Past this many differences the middle of a diff is shown as one delete + insert block. */
const MAX_DIFF_DISTANCE = 2000;

/** Edit script from `a` to `b` (Myers, common prefix and suffix trimmed first). */
function diffSequences(a: readonly string[], b: readonly string[]): Op[] {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const midA = a.slice(pre, a.length - suf);
  const midB = b.slice(pre, b.length - suf);
  const mid: Op[] = myers(midA, midB) ?? [...midA.map((): Op => DELETE), ...midB.map((): Op => INSERT)];
  return [...new Array<Op>(pre).fill(EQUAL), ...mid, ...new Array<Op>(suf).fill(EQUAL)];
}

function myers(a: readonly string[], b: readonly string[]): Op[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  // trace[d] keeps v[-d..d] after step d: O(D²) memory, bounded by MAX_DIFF_DISTANCE.
  const trace: Int32Array[] = [];
  for (let d = 0; d <= Math.min(max, MAX_DIFF_DISTANCE); d++) {
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1]! < v[off + k + 1]!) ? v[off + k + 1]! : v[off + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[off + k] = x;
      if (x >= n && y >= m) {
        trace.push(v.slice(off - d, off + d + 1));
        return backtrack(trace, n, m);
      }
    }
    trace.push(v.slice(off - d, off + d + 1));
  }
  return undefined;
}

function backtrack(trace: Int32Array[], n: number, m: number): Op[] {
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d > 0; d--) {
    const prev = trace[d - 1]!;
    const at = (k: number) => prev[k + d - 1]!;
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push(EQUAL);
      x--;
      y--;
    }
    if (down) {
      ops.push(INSERT);
      y--;
    } else {
      ops.push(DELETE);
      x--;
    }
  }
  while (x > 0 && y > 0) {
    ops.push(EQUAL);
    x--;
    y--;
  }
  return ops.reverse();
}

const NO_EOL = "\\ No newline at end of file";

/** Lines for diffing; a last line without "\n" gets a marker so "x" and "x\n" differ. */
function diffLines(text: string): string[] {
  if (text.length === 0) return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  else lines[lines.length - 1] += `\n${NO_EOL}`;
  return lines;
}

/**
 * A unified diff (`--- a/path`, `+++ b/path`, `@@` hunks with `context` lines) between two
 * LF texts, and the 1-based line in `after` where the first change is. Equal texts give "".
 */
export function unifiedDiff(
  before: string,
  after: string,
  path: string,
  context = 3,
): { diff: string; firstChangedLine: number } {
  const a = diffLines(before);
  const b = diffLines(after);
  const ops = diffSequences(a, b);
  // Old and new line index before each op, to cut hunks anywhere.
  const oldAt = new Int32Array(ops.length + 1);
  const newAt = new Int32Array(ops.length + 1);
  const changes: number[] = [];
  for (let k = 0; k < ops.length; k++) {
    oldAt[k + 1] = oldAt[k]! + (ops[k] === INSERT ? 0 : 1);
    newAt[k + 1] = newAt[k]! + (ops[k] === DELETE ? 0 : 1);
    if (ops[k] !== EQUAL) changes.push(k);
  }
  if (changes.length === 0) return { diff: "", firstChangedLine: 1 };
  const out = [`--- a/${path}`, `+++ b/${path}`];
  for (let c = 0; c < changes.length; ) {
    let last = changes[c]!;
    let next = c + 1;
    while (next < changes.length && changes[next]! - last <= 2 * context + 1) last = changes[next++]!;
    const from = Math.max(0, changes[c]! - context);
    const to = Math.min(ops.length, last + 1 + context);
    const oldCount = oldAt[to]! - oldAt[from]!;
    const newCount = newAt[to]! - newAt[from]!;
    const oldStart = oldCount === 0 ? oldAt[from]! : oldAt[from]! + 1;
    const newStart = newCount === 0 ? newAt[from]! : newAt[from]! + 1;
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`);
    for (let k = from; k < to; k++) {
      const op = ops[k]!;
      const line = op === INSERT ? b[newAt[k]!]! : a[oldAt[k]!]!;
      out.push((op === EQUAL ? " " : op === DELETE ? "-" : "+") + line);
    }
    c = next;
  }
  const first = changes[0]!;
  return { diff: out.join("\n"), firstChangedLine: Math.max(1, Math.min(newAt[first]! + 1, b.length)) };
}
