/**
 * The `grep` tool: search file contents under a path, with rg when it is on the PATH and
 * a pure-Node scan otherwise (same files, same order, same output; see `file-walk.ts`).
 * pi's `operations` move the path check and the context reads elsewhere.
 */
import { readFileSync, statSync } from "node:fs";
import { basename, dirname } from "node:path";
import type { Static } from "typebox";
import * as Type from "typebox/type";
import type { AgentTool, ToolContext, ToolResult } from "../types.js";
import {
  abortError,
  chooseBackend,
  compileGlob,
  rgWalkArgs,
  runRg,
  stripDotSlash,
  walkFiles,
  type PathGlob,
  type SearchBackend,
} from "./file-walk.js";
import { contextLines, countLimit } from "./numeric-args.js";
import { resolveToCwd } from "./path-utils.js";
import {
  DEFAULT_MAX_BYTES,
  formatSize,
  GREP_MAX_LINE_LENGTH,
  truncateHead,
  truncateLine,
  type TruncationResult,
} from "./truncate.js";

/** Matches shown when the model gives no limit. */
export const DEFAULT_GREP_LIMIT = 100;

/** Arguments of `grep`. */
export const GrepParams = Type.Object({
  pattern: Type.String({ description: "Search pattern (regex or literal string)" }),
  path: Type.Optional(Type.String({ description: "Directory or file to search (default: current directory)" })),
  glob: Type.Optional(
    Type.String({
      description:
        "Filter files by glob pattern relative to path, e.g. 'src/**/*.ts'. Without '/', e.g. '*.ts', it matches file names at any depth",
    }),
  ),
  ignoreCase: Type.Optional(Type.Boolean({ description: "Case-insensitive search (default: false)" })),
  literal: Type.Optional(
    Type.Boolean({ description: "Treat pattern as literal string instead of regex (default: false)" }),
  ),
  context: Type.Optional(
    Type.Number({ description: "Number of lines to show before and after each match (default: 0)" }),
  ),
  limit: Type.Optional(
    Type.Number({ description: `Maximum number of matches to return (default: ${DEFAULT_GREP_LIMIT})` }),
  ),
});
/** Arguments of `grep`, validated. */
export type GrepParams = Static<typeof GrepParams>;

/**
 * What `grep` reports besides its text, as pi 1.6: only what cut the output (absent when
 * nothing did): the match limit, the byte limit's truncation, lines cut to
 * GREP_MAX_LINE_LENGTH.
 */
export interface GrepDetails {
  /** The limit, when more matches exist than were shown. */
  matchLimitReached?: number;
  /** The output past the byte limit. */
  truncation?: TruncationResult;
  linesTruncated?: true;
}

/**
 * pi's `GrepOperations`: where `grep` checks the search path and reads the lines around a
 * match (an extension may do both over ssh). As in pi, the search itself stays local.
 * `isDirectory` throws when the path does not exist.
 */
export interface GrepOperations {
  isDirectory(absolutePath: string): Promise<boolean> | boolean;
  readFile(absolutePath: string): Promise<string> | string;
}

/** Options of `createGrepTool`. */
export interface GrepToolOptions {
  /** Force a backend (tests run both); default `auto`. */
  backend?: SearchBackend;
  /** pi's operations (see GrepOperations); the local file system when absent. */
  operations?: GrepOperations;
}

interface Match {
  /** As shown: relative to the searched directory, or the file name for a single file. */
  display: string;
  absolute: string;
  line: number;
  text: string;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** JS reading of the pattern; "u" first (closest to rg's Unicode regexes), plain as a fallback. */
function compilePattern(args: GrepParams, extraFlags: string): RegExp {
  const source = args.literal ? escapeRegExp(args.pattern) : args.pattern;
  const flags = (args.ignoreCase ? "i" : "") + extraFlags;
  try {
    return new RegExp(source, `${flags}u`);
  } catch {
    try {
      return new RegExp(source, flags);
    } catch (error) {
      throw new Error(
        `Invalid regular expression ${JSON.stringify(args.pattern)}: ${(error as Error).message}. Fix it, or pass literal: true to search for the text as is.`,
      );
    }
  }
}

function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  for (let i = 0; i < lines.length; i++) if (lines[i]!.endsWith("\r")) lines[i] = lines[i]!.slice(0, -1);
  return lines;
}

/** Search one file in pure Node; pushes matching lines, returns false once `enough` says stop. */
function scanFile(
  absolute: string,
  display: string,
  lineRe: RegExp,
  wholeRe: RegExp,
  literal: Buffer | undefined,
  enough: (match: Match) => boolean,
): boolean {
  let bytes: Buffer;
  try {
    bytes = readFileSync(absolute);
  } catch {
    return true;
  }
  if (literal !== undefined && bytes.indexOf(literal) === -1) return true;
  // rg skips files with a NUL byte as binary; so do we.
  if (bytes.indexOf(0) !== -1) return true;
  const text = bytes.toString("utf8");
  // One pass over the whole file rejects most files before it is split into lines.
  if (!wholeRe.test(text)) return true;
  const lines = splitLines(text);
  for (let i = 0; i < lines.length; i++) {
    if (lineRe.test(lines[i]!) && enough({ display, absolute, line: i + 1, text: lines[i]! })) return false;
  }
  return true;
}

async function searchNode(
  args: GrepParams,
  root: string,
  isDir: boolean,
  glob: PathGlob | undefined,
  signal: AbortSignal,
  enough: (match: Match) => boolean,
): Promise<void> {
  const lineRe = compilePattern(args, "");
  const wholeRe = compilePattern(args, "m");
  // A pattern without regex syntax is a literal too: files without its bytes are skipped undecoded.
  const plain = args.literal === true || !/[\\^$.*+?()[\]{}|]/.test(args.pattern);
  const literal = plain && !args.ignoreCase && args.pattern !== "" ? Buffer.from(args.pattern, "utf8") : undefined;
  if (!isDir) {
    scanFile(root, basename(root), lineRe, wholeRe, literal, enough);
    return;
  }
  await walkFiles(root, {
    signal,
    onFile: (rel, absolute) => {
      if (glob !== undefined && !glob.matches(rel)) return true;
      return scanFile(absolute, rel, lineRe, wholeRe, literal, enough);
    },
  });
}

interface RgText {
  text?: string;
  bytes?: string;
}

function rgText(value: RgText | undefined): string {
  if (value?.text !== undefined) return value.text;
  return value?.bytes !== undefined ? Buffer.from(value.bytes, "base64").toString("utf8") : "";
}

async function searchRg(
  args: GrepParams,
  root: string,
  isDir: boolean,
  glob: PathGlob | undefined,
  signal: AbortSignal,
  enough: (match: Match) => boolean,
): Promise<void> {
  const flags = ["--json", "--crlf", `--regexp=${args.pattern}`];
  if (args.ignoreCase) flags.push("--ignore-case");
  if (args.literal) flags.push("--fixed-strings");
  const cwd = isDir ? root : dirname(root);
  const target = isDir ? "./" : basename(root);
  let found = 0;
  const exit = await runRg([...rgWalkArgs(isDir ? glob : undefined), ...flags, "--", target], cwd, signal, (line) => {
    if (!line.startsWith('{"type":"match"')) return true;
    const event = JSON.parse(line) as {
      data: { path: RgText; lines: RgText; line_number: number };
    };
    const rel = stripDotSlash(rgText(event.data.path));
    if (isDir && glob !== undefined && !glob.matches(rel)) return true;
    found++;
    const text = rgText(event.data.lines).replace(/\r?\n$/, "");
    const absolute = isDir ? `${root}/${rel}` : root;
    return !enough({ display: isDir ? rel : basename(root), absolute, line: event.data.line_number, text });
  });
  // 1 is "no match"; 2 is also used for unreadable files while other results are fine.
  if (!exit.stopped && exit.code === 2 && found === 0) {
    throw new Error(`rg failed: ${exit.stderr.trim() || "exit code 2"}`);
  }
}

/** A file's lines for context through `ops`, split as pi splits them (a final newline leaves an empty last line). */
async function linesThrough(ops: GrepOperations, absolute: string): Promise<string[]> {
  try {
    return (await ops.readFile(absolute)).replace(/\r\n/g, "\n").replace(/\r/g, "\n").split("\n");
  } catch {
    return [];
  }
}

/**
 * Render matches as pi does when an extension gives operations: with context, one block
 * per match whose every line (the match's too) is read through `ops.readFile`.
 */
async function renderThrough(
  ops: GrepOperations,
  matches: Match[],
  context: number,
): Promise<{ lines: string[]; linesTruncated: boolean }> {
  const out: string[] = [];
  let linesTruncated = false;
  const cut = (text: string) => {
    const line = truncateLine(text);
    linesTruncated ||= line.wasTruncated;
    return line.text;
  };
  const cache = new Map<string, string[]>();
  for (const m of matches) {
    if (context === 0) {
      out.push(`${m.display}:${m.line}: ${cut(m.text)}`);
      continue;
    }
    let lines = cache.get(m.absolute);
    if (!lines) cache.set(m.absolute, (lines = await linesThrough(ops, m.absolute)));
    if (lines.length === 0) {
      out.push(`${m.display}:${m.line}: (unable to read file)`);
      continue;
    }
    for (let line = Math.max(1, m.line - context); line <= Math.min(lines.length, m.line + context); line++) {
      const text = cut((lines[line - 1] ?? "").replace(/\r/g, ""));
      out.push(line === m.line ? `${m.display}:${line}: ${text}` : `${m.display}-${line}- ${text}`);
    }
  }
  return { lines: out, linesTruncated };
}

/** Render matches as `path:line: text`, context lines as `path-line- text`, each line once. */
function render(matches: Match[], context: number): { lines: string[]; linesTruncated: boolean } {
  const out: string[] = [];
  let linesTruncated = false;
  const emit = (display: string, line: number, text: string, isMatch: boolean) => {
    const cut = truncateLine(text);
    linesTruncated ||= cut.wasTruncated;
    out.push(isMatch ? `${display}:${line}: ${cut.text}` : `${display}-${line}- ${cut.text}`);
  };
  for (let i = 0; i < matches.length; ) {
    let j = i;
    while (j < matches.length && matches[j]!.absolute === matches[i]!.absolute) j++;
    const group = matches.slice(i, j);
    const first = group[0]!;
    if (context === 0) {
      for (const m of group) emit(m.display, m.line, m.text, true);
    } else {
      let fileLines: string[];
      try {
        fileLines = splitLines(readFileSync(first.absolute, "utf8"));
      } catch {
        fileLines = [];
      }
      const hits = new Set(group.map((m) => m.line));
      let next = 1;
      for (const m of group) {
        const from = Math.max(next, m.line - context);
        const to = Math.min(Math.max(fileLines.length, m.line), m.line + context);
        for (let line = from; line <= to; line++) {
          const text = hits.has(line) ? (group.find((g) => g.line === line)?.text ?? "") : (fileLines[line - 1] ?? "");
          emit(first.display, line, text, hits.has(line));
        }
        next = Math.max(next, to + 1);
      }
    }
    i = j;
  }
  return { lines: out, linesTruncated };
}

async function runGrep(
  args: GrepParams,
  ctx: ToolContext,
  backend: "rg" | "node",
  ops: GrepOperations | undefined,
): Promise<ToolResult<GrepDetails | undefined>> {
  if (ctx.signal.aborted) throw abortError();
  const root = resolveToCwd(args.path ?? ".", ctx.cwd);
  let isDir: boolean;
  try {
    isDir = ops ? await ops.isDirectory(root) : statSync(root).isDirectory();
  } catch {
    throw new Error(`Path not found: ${args.path ?? "."} (resolved to ${root}).`);
  }
  const limit = countLimit(args.limit, DEFAULT_GREP_LIMIT);
  const context = contextLines(args.context);
  const glob = args.glob !== undefined && args.glob !== "" ? compileGlob(args.glob) : undefined;
  const matches: Match[] = [];
  let limitReached = false;
  // Take one match past the limit, so "more exist" is known rather than guessed.
  const enough = (match: Match): boolean => {
    if (matches.length === limit) {
      limitReached = true;
      return true;
    }
    matches.push(match);
    return false;
  };
  if (backend === "rg") await searchRg(args, root, isDir, glob, ctx.signal, enough);
  else await searchNode(args, root, isDir, glob, ctx.signal, enough);
  if (ctx.signal.aborted) throw abortError();
  if (matches.length === 0) return { content: [{ type: "text", text: "No matches found" }], details: undefined };

  const rendered = ops ? await renderThrough(ops, matches, context) : render(matches, context);
  // The match limit already caps the lines, so only the bytes are limited here (pi's rule).
  const truncation = truncateHead(rendered.lines.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER });
  const details: GrepDetails = {};
  const notices: string[] = [];
  if (limitReached) {
    notices.push(`${limit} matches limit reached. Use limit=${limit * 2} for more, or refine pattern`);
    details.matchLimitReached = limit;
  }
  if (truncation.truncated) {
    notices.push(`${formatSize(DEFAULT_MAX_BYTES)} limit reached`);
    details.truncation = truncation;
  }
  if (rendered.linesTruncated) {
    notices.push(`Some lines truncated to ${GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines`);
    details.linesTruncated = true;
  }
  const text = truncation.content + (notices.length > 0 ? `\n\n[${notices.join(". ")}]` : "");
  return { content: [{ type: "text", text }], details: Object.keys(details).length > 0 ? details : undefined };
}

/** A `grep` tool bound to a backend; `grepTool` is the default (rg when available). */
export function createGrepTool(options: GrepToolOptions = {}): AgentTool<typeof GrepParams> {
  return {
    name: "grep",
    label: "grep",
    description: `Search file contents for a pattern. Returns matching lines with file paths and line numbers. Respects .gitignore. Output is truncated to ${DEFAULT_GREP_LIMIT} matches or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first). Long lines are truncated to ${GREP_MAX_LINE_LENGTH} chars.`,
    snippet: "Search file contents for patterns (respects .gitignore)",
    parameters: GrepParams,
    execute: (args, ctx) => runGrep(args, ctx, chooseBackend(options.backend), options.operations),
  };
}

/** The default `grep` tool. */
export const grepTool = createGrepTool();
