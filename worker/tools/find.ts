/**
 * The `find` tool: list files matching a glob, with `rg --files` when rg is on the PATH
 * and the pure-Node walker otherwise (same files either way; see `file-walk.ts`).
 */
import { Type, type Static } from "typebox";
import type { AgentTool, ToolContext, ToolResult } from "../types.js";
import {
  abortError,
  chooseBackend,
  compileGlob,
  rgWalkArgs,
  runRg,
  stripDotSlash,
  walkFiles,
  type SearchBackend,
} from "./file-walk.js";
import { isDirectory, resolveToCwd } from "./path-utils.js";

/** Paths returned when the model gives no limit. */
export const DEFAULT_FIND_LIMIT = 1000;

/** Arguments of `find`. */
export const FindParams = Type.Object({
  pattern: Type.String({
    description: "Glob to match, e.g. '*.ts' (any depth), '**/*.json' or 'src/**/*.spec.ts' (from the search directory)",
  }),
  path: Type.Optional(Type.String({ description: "Directory to search (default: the working directory)" })),
  limit: Type.Optional(Type.Integer({ minimum: 1, description: `Maximum number of results (default: ${DEFAULT_FIND_LIMIT})` })),
});
/** Arguments of `find`, validated. */
export type FindParams = Static<typeof FindParams>;

/** What `find` reports besides its text. */
export interface FindDetails {
  count: number;
  /** More files match than were listed. */
  limitReached: boolean;
  backend: "rg" | "node";
}

/** Options of `createFindTool`. */
export interface FindToolOptions {
  /** Force a backend (tests run both); default `auto`. */
  backend?: SearchBackend;
}

async function runFind(args: FindParams, ctx: ToolContext, backend: "rg" | "node"): Promise<ToolResult<FindDetails>> {
  if (ctx.signal.aborted) throw abortError();
  const root = resolveToCwd(args.path ?? ".", ctx.cwd);
  if (!isDirectory(root)) throw new Error(`Not a directory: ${args.path ?? "."} (resolved to ${root}).`);
  const limit = args.limit ?? DEFAULT_FIND_LIMIT;
  const glob = compileGlob(args.pattern);
  const found: string[] = [];
  let limitReached = false;
  // Walk order is deterministic (sorted per directory), so the first `limit` files are
  // the same in both backends; one extra tells whether the limit cut anything.
  const take = (rel: string): boolean => {
    if (!glob.matches(rel)) return true;
    if (found.length === limit) {
      limitReached = true;
      return false;
    }
    found.push(rel);
    return true;
  };
  if (backend === "rg") {
    const exit = await runRg([...rgWalkArgs(glob), "--files", "./"], root, ctx.signal, (line) => take(stripDotSlash(line)));
    if (!exit.stopped && exit.code === 2 && found.length === 0) {
      throw new Error(`rg failed: ${exit.stderr.trim() || "exit code 2"}`);
    }
  } else {
    await walkFiles(root, { signal: ctx.signal, onFile: (rel) => take(rel) });
  }
  if (ctx.signal.aborted) throw abortError();
  const details: FindDetails = { count: found.length, limitReached, backend };
  if (found.length === 0) return { content: [{ type: "text", text: "No files found matching pattern" }], details };
  found.sort();
  const notice = limitReached
    ? `\n\n[Showing ${limit} files; more match. Use a narrower pattern or path, or raise limit.]`
    : "";
  return { content: [{ type: "text", text: found.join("\n") + notice }], details };
}

/** A `find` tool bound to a backend; `findTool` is the default (rg when available). */
export function createFindTool(options: FindToolOptions = {}): AgentTool<typeof FindParams> {
  return {
    name: "find",
    label: "find",
    description: `Find files by glob pattern. Returns paths relative to the search directory, sorted; respects .gitignore, skips .git and node_modules. At most ${DEFAULT_FIND_LIMIT} results by default.`,
    guidelines: ["Use find to locate files by name pattern instead of listing directories one by one."],
    parameters: FindParams,
    execute: (args, ctx) => runFind(args, ctx, chooseBackend(options.backend)),
  };
}

/** The default `find` tool. */
export const findTool = createFindTool();
