/**
 * Reading a session file's bytes, pure: split into lines, tolerate a torn last line
 * (what a crash mid-write leaves), validate the header and each entry, and check the
 * tree links. The store applies the repair this reports; nothing here touches the disk.
 */
import { checker } from "../../shared/validate.js";
import {
  EntryBase,
  isKnownEntry,
  KNOWN_ENTRY_SCHEMAS,
  SessionHeader,
  type SessionEntry,
} from "./entries.js";

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
 * Parse and validate a whole session file. Throws `SessionFileError` naming the line
 * and entry for anything but a torn last line: a damaged middle line, a bad header,
 * an invalid known entry, a duplicate id, or a parent that does not precede its child.
 */
export function parseSessionFile(path: string, bytes: Buffer): ParsedSession {
  const lines = splitLines(bytes);
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
      throw new SessionFileError(
        path,
        `line ${line.number} is not valid JSON, and it is not the last line, so this is not a torn write; ` +
          `repair or remove that line by hand`,
      );
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

  const seen = new Set<string>();
  const entries: SessionEntry[] = [];
  for (const { value, line } of values) {
    const entry = checkEntry(path, value, line.number);
    if (seen.has(entry.id)) {
      throw new SessionFileError(path, `entry "${entry.id}" (line ${line.number}) reuses an id that appears earlier`);
    }
    if (entry.parentId !== null && !seen.has(entry.parentId)) {
      throw new SessionFileError(
        path,
        `entry "${entry.id}" (line ${line.number}) has parentId "${entry.parentId}", which is not an earlier entry of this file; ` +
          `the file was edited or truncated in the middle`,
      );
    }
    seen.add(entry.id);
    entries.push(entry);
  }

  const lastKept = values.at(-1)?.line ?? first.line;
  return { header: header.value, entries, torn, missingNewline: !lastKept.terminated };
}

function checkEntry(path: string, value: unknown, lineNumber: number): SessionEntry {
  const base = checkBase(value);
  if (!base.ok) {
    throw new SessionFileError(path, `line ${lineNumber} is not a session entry (${base.errors.join("; ")})`);
  }
  const entry = value as SessionEntry;
  if (!isKnownEntry(entry)) return entry;
  normalizePiFields(entry);
  const known = checker(KNOWN_ENTRY_SCHEMAS[entry.type])(entry);
  if (!known.ok) {
    throw new SessionFileError(
      path,
      `entry "${entry.id}" (line ${lineNumber}) is not a valid ${entry.type} entry: ${known.errors.join("; ")}`,
    );
  }
  return entry;
}

/** pi leaves a cancelled bash command's `exitCode` out (undefined); our schema says null. */
function normalizePiFields(entry: SessionEntry): void {
  if (entry.type !== "message") return;
  const message = (entry as { message: Record<string, unknown> }).message;
  if (message.role === "bashExecution" && message.exitCode === undefined) message.exitCode = null;
}
