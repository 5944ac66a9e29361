/**
 * The `write` tool: create or overwrite a file with the given content, creating its
 * folders. Writes to one real path are serialised with the other mutating tools.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { Static } from "typebox";
import * as Type from "typebox/type";
import type { AgentTool, ToolContext, ToolResult } from "../types.js";
import { withFileLock } from "./file-queue.js";
import { resolveToCwd } from "./path-utils.js";
import { sandboxWriteDenial } from "./sandbox-denial.js";

/** Arguments of `write`. */
export const WriteParams = Type.Object({
  path: Type.String({ description: "Path to the file to write (relative or absolute)" }),
  content: Type.String({ description: "Content to write to the file" }),
});
/** Arguments of `write`, validated. */
export type WriteParams = Static<typeof WriteParams>;

/** pi's `WriteOperations`: how `write` reaches files (local by default; an extension may write over ssh). */
export interface WriteOperations {
  writeFile(absolutePath: string, content: string): Promise<void>;
  mkdir(dir: string): Promise<void>;
}

/** Options of a `write` tool (pi's `WriteToolOptions`). */
export interface WriteToolOptions {
  operations?: WriteOperations;
}

const LOCAL_WRITE: WriteOperations = {
  writeFile: (path, content) => writeFile(path, content, "utf8"),
  mkdir: async (dir) => {
    await mkdir(dir, { recursive: true });
  },
};

/** A `write` tool; the options are pi's, for extensions that build their own (`createWriteTool`). */
export function createWriteTool(options: WriteToolOptions = {}): AgentTool<typeof WriteParams> {
  const ops = options.operations ?? LOCAL_WRITE;
  return {
    name: "write",
    label: "write",
    description:
      "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.",
    snippet: "Create or overwrite files",
    guidelines: ["Use write only for new files or complete rewrites."],
    parameters: WriteParams,
    async execute(args: WriteParams, ctx: ToolContext): Promise<ToolResult> {
      if (ctx.signal.aborted) throw new Error("Operation aborted");
      const absolute = resolveToCwd(args.path, ctx.cwd);
      await withFileLock(absolute, async () => {
        // Checked again inside the queue: an abort may arrive while waiting behind another write.
        if (ctx.signal.aborted) throw new Error("Operation aborted");
        try {
          await ops.mkdir(dirname(absolute));
          await ops.writeFile(absolute, args.content);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          const denial = sandboxWriteDenial(args.path, absolute, code);
          if (denial) throw new Error(denial);
          if (code === "EISDIR") throw new Error(`Cannot write ${args.path}: it is a directory.`);
          if (code === "EACCES" || code === "EPERM")
            throw new Error(`Permission denied writing ${args.path} (resolved to ${absolute}).`);
          if (code === "ENOTDIR") throw new Error(`Cannot write ${args.path}: a parent of it is a file, not a folder.`);
          throw error;
        }
      });
      // pi 1.6's wording (0.73 named the byte count).
      return { content: [{ type: "text", text: `Successfully wrote to ${args.path}` }] };
    },
  };
}

/** Write a whole file, creating parent folders. */
export const writeTool = createWriteTool();
