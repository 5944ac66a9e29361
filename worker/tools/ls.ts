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
import { listingResult } from "./listing.js";
import { DEFAULT_MAX_BYTES, type TruncationResult } from "./truncate.js";

/** Entries listed when the model gives no limit. */
export const DEFAULT_LS_LIMIT = 500;

/** Arguments of `ls`. */
export const LsParams = Type.Object({
  path: Type.Optional(Type.String({ description: "Directory to list (default: current directory)" })),
  limit: Type.Optional(
    Type.Number({ description: `Maximum number of entries to return (default: ${DEFAULT_LS_LIMIT})` }),
  ),
});
/** Arguments of `ls`, validated. */
export type LsParams = Static<typeof LsParams>;

/**
 * What `ls` reports besides its text, as pi 1.6: only what cut the listing (absent when
 * nothing did).
 */
export interface LsDetails {
  /** The limit, when more entries exist than were listed. */
  entryLimitReached?: number;
  /** The listing past the byte limit. */
  truncation?: TruncationResult;
}

/**
 * `localeCompare`'s collation (the process's locale), made at the first listing and kept: it
 * compares the same, several times faster. Not at load: the worker's startup snapshot
 * evaluates this module, and V8 cannot put an ICU object in a snapshot (the build fails with
 * "global handle not serialized"); a start would also load ICU's data for no listing.
 */
let collator: Intl.Collator | undefined;

/**
 * pi 1.6's order: the lower-cased names by the locale's collation (pi's `localeCompare`;
 * the worker runs in the user's locale as pi does). Names equal but for case fall back to
 * code-point order, so the listing does not depend on the order readdir gives them in.
 */
export function compareNames(a: string, b: string): number {
  collator ??= new Intl.Collator();
  const byLocale = collator.compare(a.toLowerCase(), b.toLowerCase());
  if (byLocale !== 0) return byLocale;
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

/**
 * The listing of the sorted `entries` as pi 1.6 makes it: up to `limit` names, a folder
 * (also through a symlink) marked with `/`, an entry `isDir` cannot tell (pi's `stat`
 * failed: a dangling symlink) left out; the entry limit and the byte limit in one notice.
 */
async function list(
  entries: readonly string[],
  limit: number,
  isDir: (name: string) => Promise<boolean | undefined>,
  signal: AbortSignal,
): Promise<ToolResult<LsDetails | undefined>> {
  const names: string[] = [];
  let entryLimitReached = false;
  for (const name of entries) {
    if (names.length >= limit) {
      entryLimitReached = true;
      break;
    }
    if (signal.aborted) throw new Error("Operation aborted");
    const folder = await isDir(name);
    if (folder !== undefined) names.push(folder ? `${name}/` : name);
  }
  if (names.length === 0) return { content: [{ type: "text", text: "(empty directory)" }], details: undefined };
  return listingResult<LsDetails>(
    names,
    entryLimitReached
      ? {
          notice: `${limit} entries limit reached. Use limit=${limit * 2} for more`,
          details: { entryLimitReached: limit },
        }
      : null,
  );
}

async function listLocal(args: LsParams, ctx: ToolContext): Promise<ToolResult<LsDetails | undefined>> {
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
  const byName = new Map(entries.map((e) => [e.name, e]));
  // The entry's own type where it has one; only a symlink needs the stat pi makes of every entry.
  const isDir = (name: string): Promise<boolean | undefined> => {
    const entry = byName.get(name)!;
    if (!entry.isSymbolicLink()) return Promise.resolve(entry.isDirectory());
    return stat(join(absolute, name)).then(
      (s) => s.isDirectory(),
      () => undefined,
    );
  };
  const names = entries.map((e) => e.name).sort(compareNames);
  return list(names, countLimit(args.limit, DEFAULT_LS_LIMIT), isDir, ctx.signal);
}

/** `ls` through extension operations, in pi's order: exists, stat, readdir, a stat per entry. */
async function listWith(
  ops: LsOperations,
  args: LsParams,
  ctx: ToolContext,
): Promise<ToolResult<LsDetails | undefined>> {
  if (ctx.signal.aborted) throw new Error("Operation aborted");
  const shown = args.path ?? ".";
  const absolute = resolveToCwd(shown, ctx.cwd);
  if (!(await ops.exists(absolute))) throw new Error(`Path not found: ${shown} (resolved to ${absolute}).`);
  if (!(await ops.stat(absolute)).isDirectory())
    throw new Error(`Not a directory: ${shown} is a file; use read to view it.`);
  const entries = [...(await ops.readdir(absolute))].sort(compareNames);
  const isDir = (name: string): Promise<boolean | undefined> =>
    Promise.resolve()
      .then(() => ops.stat(join(absolute, name)))
      .then(
        (s) => s.isDirectory(),
        () => undefined,
      );
  return list(entries, countLimit(args.limit, DEFAULT_LS_LIMIT), isDir, ctx.signal);
}

/** An `ls` tool; the options are pi's, for extensions that build their own (`createLsTool`). */
export function createLsTool(options: LsToolOptions = {}): AgentTool<typeof LsParams> {
  const ops = options.operations;
  return {
    name: "ls",
    label: "ls",
    description: `List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. Includes dotfiles. Output is truncated to ${DEFAULT_LS_LIMIT} entries or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first).`,
    snippet: "List directory contents",
    parameters: LsParams,
    execute: (args, ctx) => (ops ? listWith(ops, args, ctx) : listLocal(args, ctx)),
  };
}

/** List one folder. */
export const lsTool = createLsTool();
