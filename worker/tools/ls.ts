/**
 * The `ls` tool: the entries of one folder, sorted case-insensitively, folders marked
 * with a trailing `/`, dotfiles included.
 */
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Static } from "typebox";
import * as Type from "typebox/type";
import type { AgentTool, ToolContext, ToolResult } from "../types.js";
import { countLimit } from "./numeric-args.js";
import { resolveToCwd } from "./path-utils.js";
import { DEFAULT_MAX_BYTES, formatSize, truncateHead } from "./truncate.js";

/** Entries listed when the model gives no limit. */
export const DEFAULT_LS_LIMIT = 500;

/** Arguments of `ls`. */
export const LsParams = Type.Object({
  path: Type.Optional(Type.String({ description: "Directory to list (default: the working directory)" })),
  limit: Type.Optional(Type.Number({ description: `Maximum number of entries (default: ${DEFAULT_LS_LIMIT})` })),
});
/** Arguments of `ls`, validated. */
export type LsParams = Static<typeof LsParams>;

/** What `ls` reports besides its text. */
export interface LsDetails {
  /** Entries in the folder. */
  total: number;
  /** The entry limit cut the list. */
  limitReached: boolean;
  /** The 50 KB output cap cut the list. */
  bytesLimitReached: boolean;
}

/**
 * Case-insensitive order that does not depend on the machine's locale; names equal
 * but for case fall back to code-point order so the listing is stable.
 */
export function compareNames(a: string, b: string): number {
  const la = a.toLowerCase();
  const lb = b.toLowerCase();
  if (la !== lb) return la < lb ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** pi's `LsOperations`: how `ls` reaches folders (local by default; an extension may list over ssh). */
export interface LsOperations {
  exists(absolutePath: string): Promise<boolean> | boolean;
  /** Throws when the path does not exist. */
  stat(absolutePath: string): Promise<{ isDirectory(): boolean }> | { isDirectory(): boolean };
  readdir(absolutePath: string): Promise<string[]> | string[];
}

/** Options of an `ls` tool (pi's `LsToolOptions`). */
export interface LsToolOptions {
  operations?: LsOperations;
}

/** The listing of `names` (folders already marked with `/`) out of `total` entries. */
function render(names: string[], total: number, limit: number): ToolResult<LsDetails> {
  if (names.length === 0) {
    return {
      content: [{ type: "text", text: "(empty directory)" }],
      details: { total: 0, limitReached: false, bytesLimitReached: false },
    };
  }
  const limitReached = total > limit;
  const truncation = truncateHead(names.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER, maxBytes: DEFAULT_MAX_BYTES });
  const notices: string[] = [];
  if (limitReached) notices.push(`${limit} of ${total} entries shown. Use limit=${limit * 2} for more`);
  if (truncation.truncated)
    notices.push(`${formatSize(DEFAULT_MAX_BYTES)} output limit reached after ${truncation.outputLines} entries`);
  const text = notices.length > 0 ? `${truncation.content}\n\n[${notices.join("; ")}]` : truncation.content;
  return {
    content: [{ type: "text", text }],
    details: { total, limitReached, bytesLimitReached: truncation.truncated },
  };
}

async function listLocal(args: LsParams, ctx: ToolContext): Promise<ToolResult<LsDetails>> {
  if (ctx.signal.aborted) throw new Error("Operation aborted");
  const shown = args.path ?? ".";
  const absolute = resolveToCwd(shown, ctx.cwd);
  const info = await stat(absolute).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT" || error.code === "ENOTDIR") {
      throw new Error(`Path not found: ${shown} (resolved to ${absolute}).`);
    }
    throw error;
  });
  if (!info.isDirectory()) throw new Error(`Not a directory: ${shown} is a file; use read to view it.`);

  const entries = await readdir(absolute, { withFileTypes: true });
  entries.sort((a, b) => compareNames(a.name, b.name));
  const limit = countLimit(args.limit, DEFAULT_LS_LIMIT);
  const names: string[] = [];
  for (const entry of entries.slice(0, limit)) {
    if (ctx.signal.aborted) throw new Error("Operation aborted");
    let isDir = entry.isDirectory();
    // A symlink is listed as what it points to; a dangling one as a plain name.
    if (entry.isSymbolicLink())
      isDir = await stat(join(absolute, entry.name)).then(
        (s) => s.isDirectory(),
        () => false,
      );
    names.push(isDir ? `${entry.name}/` : entry.name);
  }
  return render(names, entries.length, limit);
}

/** `ls` through extension operations, in pi's order: exists, stat, readdir, a stat per entry. */
async function listWith(ops: LsOperations, args: LsParams, ctx: ToolContext): Promise<ToolResult<LsDetails>> {
  if (ctx.signal.aborted) throw new Error("Operation aborted");
  const shown = args.path ?? ".";
  const absolute = resolveToCwd(shown, ctx.cwd);
  if (!(await ops.exists(absolute))) throw new Error(`Path not found: ${shown} (resolved to ${absolute}).`);
  if (!(await ops.stat(absolute)).isDirectory())
    throw new Error(`Not a directory: ${shown} is a file; use read to view it.`);
  const entries = [...(await ops.readdir(absolute))].sort(compareNames);
  const limit = countLimit(args.limit, DEFAULT_LS_LIMIT);
  const names: string[] = [];
  for (const name of entries.slice(0, limit)) {
    if (ctx.signal.aborted) throw new Error("Operation aborted");
    const isDir = await Promise.resolve()
      .then(() => ops.stat(join(absolute, name)))
      .then(
        (s) => s.isDirectory(),
        () => false,
      );
    names.push(isDir ? `${name}/` : name);
  }
  return render(names, entries.length, limit);
}

/** An `ls` tool; the options are pi's, for extensions that build their own (`createLsTool`). */
export function createLsTool(options: LsToolOptions = {}): AgentTool<typeof LsParams> {
  const ops = options.operations;
  return {
    name: "ls",
    label: "ls",
    description: `List a directory's entries (sorted, folders end in '/', dotfiles included; up to ${DEFAULT_LS_LIMIT} by default).`,
    guidelines: ["Use ls to look at one folder; use find to search a tree by name."],
    parameters: LsParams,
    execute: (args, ctx) => (ops ? listWith(ops, args, ctx) : listLocal(args, ctx)),
  };
}

/** List one folder. */
export const lsTool = createLsTool();
