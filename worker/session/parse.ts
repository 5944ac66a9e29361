/**
 * Reading a session file's bytes, pure: split into lines, tolerate a torn last line
 * (what a crash mid-write leaves), validate the header and each entry, and check the
 * tree links. Damage in the middle is tolerated as pi tolerates it (a line that is not
 * JSON is skipped, an entry whose parent is missing is a root) and reported as warnings
 * naming the line: refusing the whole file would lose a user's work. Nothing here
 * touches the disk; the store applies the repair this reports.
 */
import { checker } from "../../shared/validate.js";
import { EntryBase, KNOWN_ENTRY_SCHEMAS, SessionHeader, type SessionEntry } from "../../shared/schema/session.js";
import { isKnownEntry, markInvalid } from "./entries.js";

/** A session file that cannot be loaded (or written), with a message saying what and where. */
export class SessionFileError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`session file ${path}: ${message}`);
    this.name = "SessionFileError";
  }
}

/** The result of reading a session file's bytes. */
export interface ParsedSession {
  header: SessionHeader;
  entries: SessionEntry[];
  /** Set when the last line was not valid JSON: it was dropped, and the file should be cut to `keepBytes`. */
  torn?: { lineNumber: number; keepBytes: number };
  /** The last kept line has no newline yet; the next append must start with one. */
  missingNewline: boolean;
  /** What was skipped or reinterpreted, one message per line concerned. */
  warnings: string[];
}

interface Line {
  text: string;
  number: number;
  start: number;
  terminated: boolean;
}

const LF = 0x0a;

function splitLines(bytes: Buffer): Line[] {
  const lines: Line[] = [];
  let start = 0;
  let number = 1;
  while (start < bytes.length) {
    const end = bytes.indexOf(LF, start);
    const stop = end < 0 ? bytes.length : end;
    let text = bytes.toString("utf8", start, stop);
    if (text.endsWith("\r")) text = text.slice(0, -1);
    lines.push({ text, number, start, terminated: end >= 0 });
    if (end < 0) break;
    start = end + 1;
    number++;
  }
  return lines.filter((line) => line.text.trim() !== "");
}

const checkHeader = checker(SessionHeader);
const checkBase = checker(EntryBase);

/**
 * Parse and validate a whole session file. Throws `SessionFileError` only when there is
 * no usable session header; every other problem is a warning naming its line: a middle
 * line that is not JSON or not an entry is skipped, a repeated id keeps the first entry,
 * a known entry that fails its schema is kept uninterpreted, and an entry whose parent
 * is not in the file is treated as a root.
 */
export function parseSessionFile(path: string, bytes: Buffer): ParsedSession {
  const lines = splitLines(bytes);
  const warnings: string[] = [];
  let torn: ParsedSession["torn"];
  const values: { value: unknown; line: Line }[] = [];
  lines.forEach((line, index) => {
    try {
      values.push({ value: JSON.parse(line.text), line });
    } catch {
      if (index === lines.length - 1) {
        torn = { lineNumber: line.number, keepBytes: line.start };
        return;
      }
      warnings.push(`line ${line.number} is not valid JSON; it is skipped (the lines around it load)`);
    }
  });

  const first = values.shift();
  if (!first) {
    throw new SessionFileError(path, "has no complete session header (the file is empty or its only line is torn)");
  }
  const header = checkHeader(first.value);
  if (!header.ok) {
    throw new SessionFileError(
      path,
      `line ${first.line.number} is not a session header (${header.errors.join("; ")}); is this a pi session file?`,
    );
  }
  if (header.value.version < 2) {
    throw new SessionFileError(
      path,
      `is a version ${header.value.version} session (linear, without entry ids); open it once with pi to migrate it to version 3`,
    );
  }

  const byId = new Map<string, { entry: SessionEntry; line: number }>();
  const entries: SessionEntry[] = [];
  for (const { value, line } of values) {
    const entry = checkEntry(value, line.number, warnings);
    if (!entry) continue;
    if (byId.has(entry.id)) {
      warnings.push(
        `line ${line.number}: entry "${entry.id}" reuses the id of line ${byId.get(entry.id)!.line}; it is skipped`,
      );
      continue;
    }
    byId.set(entry.id, { entry, line: line.number });
    entries.push(entry);
  }
  for (const entry of entries) {
    if (entry.parentId !== null && entry.parentId !== entry.id && !byId.has(entry.parentId)) {
      warnings.push(
        `line ${byId.get(entry.id)!.line}: entry "${entry.id}" has parentId "${entry.parentId}", which is not in this file; it is treated as a root`,
      );
    }
  }

  const lastKept = values.at(-1)?.line ?? first.line;
  return { header: header.value, entries, torn, missingNewline: !lastKept.terminated, warnings };
}

function checkEntry(value: unknown, lineNumber: number, warnings: string[]): SessionEntry | undefined {
  const base = checkBase(value);
  if (!base.ok) {
    warnings.push(`line ${lineNumber} is not a session entry (${base.errors.join("; ")}); it is skipped`);
    return undefined;
  }
  const entry = value as SessionEntry;
  if (!isKnownEntry(entry)) return entry;
  normalizePiFields(entry);
  const known = checker(KNOWN_ENTRY_SCHEMAS[entry.type])(entry);
  if (!known.ok) {
    warnings.push(
      `line ${lineNumber}: entry "${entry.id}" is not a valid ${entry.type} entry (${known.errors.join("; ")}); it is kept but not shown to the model`,
    );
    markInvalid(entry);
  }
  return entry;
}
/** pi leaves a cancelled bash command's `exitCode` out (undefined); our schema says null. */
function normalizePiFields(entry: SessionEntry): void {
  if (entry.type !== "message") return;
  const message = (entry as { message: Record<string, unknown> }).message;
  if (message.role === "bashExecution" && message.exitCode === undefined) message.exitCode = null;
}
