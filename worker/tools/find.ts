/**
 * The `find` tool: list files matching a glob, with `rg --files` when rg is on the PATH
 * and the pure-Node walker otherwise (same files either way; see `file-walk.ts`), or
 * through the `glob` of pi's `operations`.
 */
import { relative as relativePath, sep } from "node:path";
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
  type SearchBackend,
} from "./file-walk.js";
import { countLimit } from "./numeric-args.js";
import { isDirectory, resolveToCwd } from "./path-utils.js";
import { listingResult } from "./listing.js";
import { DEFAULT_MAX_BYTES, type TruncationResult } from "./truncate.js";

/** Paths returned when the model gives no limit. */
export const DEFAULT_FIND_LIMIT = 1000;

/** Arguments of `find`. */
export const FindParams = Type.Object({
  pattern: Type.String({
    description:
      "Glob pattern relative to the search directory, e.g. 'src/**/*.ts'. Without '/', e.g. '*.ts', it matches file names at any depth",
  }),
  path: Type.Optional(Type.String({ description: "Directory to search in (default: current directory)" })),
  limit: Type.Optional(Type.Number({ description: `Maximum number of results (default: ${DEFAULT_FIND_LIMIT})` })),
});
/** Arguments of `find`, validated. */
export type FindParams = Static<typeof FindParams>;

/**
 * What `find` reports besides its text, as pi 1.6: only what cut the list (absent when
 * nothing did).
 */
export interface FindDetails {
  /** The limit, when more files match than were listed. */
  resultLimitReached?: number;
  /** The list past the byte limit. */
  truncation?: TruncationResult;
}

/**
 * pi's `FindOperations`: with `glob`, `find` lists files through it (an extension may
 * search over ssh) and checks the path with `exists`; without `glob` it searches locally,
 * as pi does. `glob` returns absolute paths or paths relative to `cwd`.
 */
export interface FindOperations {
  exists(absolutePath: string): Promise<boolean> | boolean;
  glob?(pattern: string, cwd: string, options: { ignore: string[]; limit: number }): Promise<string[]> | string[];
}

/** Options of `createFindTool`. */
export interface FindToolOptions {
  /** Force a backend (tests run both); default `auto`. */
  backend?: SearchBackend;
  /** pi's operations (see FindOperations). */
  operations?: FindOperations;
}

/**
 * The list as pi 1.6 shows it: `found` (at most `limit` paths), byte-truncated, with the
 * notice of each limit that cut it, `limitReached` when more paths match.
 */
function listResult(found: string[], limit: number, limitReached: boolean): ToolResult<FindDetails | undefined> {
  if (found.length === 0)
    return { content: [{ type: "text", text: "No files found matching pattern" }], details: undefined };
  return listingResult<FindDetails>(
    found,
    limitReached
      ? {
          notice: `${limit} results limit reached. Use limit=${limit * 2} for more, or refine pattern`,
          details: { resultLimitReached: limit },
        }
      : null,
  );
}

/**
 * `find` through an extension's `glob`, as pi 0.73.1 does it: the results in the order
 * given, relative to the search folder, byte-truncated, with pi's notices.
 */
async function findWith(
  ops: FindOperations,
  glob: NonNullable<FindOperations["glob"]>,
  args: FindParams,
  ctx: ToolContext,
): Promise<ToolResult<FindDetails | undefined>> {
  const root = resolveToCwd(args.path ?? ".", ctx.cwd);
  const limit = countLimit(args.limit, DEFAULT_FIND_LIMIT);
  if (!(await ops.exists(root))) throw new Error(`Path not found: ${args.path ?? "."} (resolved to ${root}).`);
  if (ctx.signal.aborted) throw abortError();
  const results = await glob.call(ops, args.pattern, root, { ignore: ["**/node_modules/**", "**/.git/**"], limit });
  if (ctx.signal.aborted) throw abortError();
  if (results.length === 0)
    return { content: [{ type: "text", text: "No files found matching pattern" }], details: undefined };
  const relative = results.map((p) =>
    (p.startsWith(root) ? p.slice(root.length + 1) : relativePath(root, p)).split(sep).join("/"),
  );
  return listingResult<FindDetails>(
    relative,
    relative.length >= limit
      ? { notice: `${limit} results limit reached`, details: { resultLimitReached: limit } }
      : null,
  );
}

async function runFind(
  args: FindParams,
  ctx: ToolContext,
  backend: "rg" | "node",
): Promise<ToolResult<FindDetails | undefined>> {
  if (ctx.signal.aborted) throw abortError();
  const root = resolveToCwd(args.path ?? ".", ctx.cwd);
  if (!isDirectory(root)) throw new Error(`Not a directory: ${args.path ?? "."} (resolved to ${root}).`);
  const limit = countLimit(args.limit, DEFAULT_FIND_LIMIT);
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
    const exit = await runRg([...rgWalkArgs(glob), "--files", "./"], root, ctx.signal, (line) =>
      take(stripDotSlash(line)),
    );
    if (!exit.stopped && exit.code === 2 && found.length === 0) {
      throw new Error(`rg failed: ${exit.stderr.trim() || "exit code 2"}`);
    }
  } else {
    await walkFiles(root, { signal: ctx.signal, onFile: (rel) => take(rel) });
  }
  if (ctx.signal.aborted) throw abortError();
  return listResult(found.sort(), limit, limitReached);
}

/** A `find` tool bound to a backend; `findTool` is the default (rg when available). */
export function createFindTool(options: FindToolOptions = {}): AgentTool<typeof FindParams> {
  return {
    name: "find",
    label: "find",
    description: `Search for files by glob pattern. Returns matching file paths relative to the search directory. Respects .gitignore. Output is truncated to ${DEFAULT_FIND_LIMIT} results or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first).`,
    snippet: "Find files by glob pattern (respects .gitignore)",
    parameters: FindParams,
    execute: (args, ctx) => {
      const ops = options.operations;
      if (ops?.glob) return findWith(ops, ops.glob, args, ctx);
      return runFind(args, ctx, chooseBackend(options.backend));
    },
  };
}

/** The default `find` tool. */
export const findTool = createFindTool();
