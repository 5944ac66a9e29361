/**
 * The `edit` tool: targeted replacements in one file. Matching lives in `edit-match.ts`;
 * this file does the I/O around it under the file's write queue.
 */
import { readFile, writeFile } from "node:fs/promises";
import type { Static } from "typebox";
import * as Type from "typebox/type";
import type { AgentTool, ToolContext, ToolResult } from "../types.js";
import { applyEdits } from "./edit-match.js";
import { withFileLock } from "./file-queue.js";
import { resolveToCwd } from "./path-utils.js";
import { sandboxWriteDenial } from "./sandbox-denial.js";

const Replacement = Type.Object(
  {
    oldText: Type.String({
      description:
        "Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call.",
    }),
    newText: Type.String({ description: "Replacement text for this targeted edit." }),
  },
  {},
);

/**
 * Arguments of `edit`. Open objects and no `minItems`, as pi 1.6's schema: a field pi ignores
 * is ignored here too, and an empty `edits` fails in `execute` with pi's words, not in
 * validation.
 */
export const EditParams = Type.Object(
  {
    path: Type.String({ description: "Path to the file to edit (relative or absolute)" }),
    edits: Type.Array(Replacement, {
      description:
        "One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead.",
    }),
  },
  {},
);
/** Arguments of `edit`, validated. */
export type EditParams = Static<typeof EditParams>;

/** What `edit` reports besides its text. */
export interface EditDetails {
  diff: string;
  firstChangedLine: number;
}

/** Whether `value` is one `{oldText, newText}` replacement, both strings. */
function isSingleEdit(value: unknown): value is { oldText: string; newText: string } {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const edit = value as Record<string, unknown>;
  return typeof edit.oldText === "string" && typeof edit.newText === "string";
}

/**
 * Reshape the argument forms models really send, as pi 1.6 does (its validation error then
 * shows the reshaped arguments): `edits` as a JSON string of a list or of one replacement,
 * one replacement object instead of a list, and a top-level `oldText`/`newText` pair
 * (appended to `edits`). Anything else passes through unchanged for the validator to judge.
 * As pi's, a reshaped `edits` is set on `raw` itself: the tool call keeps it, so the model's
 * later requests carry its call with `edits` as a list (pi 1.6's requests, compared).
 */
export function prepareEditArguments(raw: unknown): unknown {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return raw;
  const args = raw as Record<string, unknown>;
  if (typeof args.edits === "string") {
    try {
      const parsed: unknown = JSON.parse(args.edits);
      if (Array.isArray(parsed)) args.edits = parsed;
      else if (isSingleEdit(parsed)) args.edits = [parsed];
    } catch {
      // Leave the string: validation then says that edits must be an array.
    }
  } else if (isSingleEdit(args.edits)) {
    args.edits = [args.edits];
  }
  if (typeof args.oldText === "string" && typeof args.newText === "string") {
    const { oldText, newText, ...rest } = args;
    const edits = Array.isArray(rest.edits) ? [...(rest.edits as unknown[])] : [];
    edits.push({ oldText, newText });
    return { ...rest, edits };
  }
  return args;
}

/** Checked after every await: an abort never interrupts an I/O call half way, it stops at the next step. */
function checkAborted(signal: AbortSignal, path: string, written: boolean): void {
  if (!signal.aborted) return;
  throw new Error(
    written ? `Aborted after writing ${path}: the edit is already on disk.` : `Aborted: ${path} was not changed.`,
  );
}

/** pi's `EditOperations`: how `edit` reaches files (local by default; an extension may edit over ssh). */
export interface EditOperations {
  readFile(absolutePath: string): Promise<Buffer>;
  writeFile(absolutePath: string, content: string): Promise<void>;
  /** Throws when the file is not readable and writable. */
  access(absolutePath: string): Promise<void>;
}

/** Options of an `edit` tool (pi's `EditToolOptions`). */
export interface EditToolOptions {
  operations?: EditOperations;
}

async function runEdit(
  args: EditParams,
  ctx: ToolContext,
  ops: EditOperations | undefined,
): Promise<ToolResult<EditDetails>> {
  if (args.edits.length === 0)
    throw new Error("Edit tool input is invalid. edits must contain at least one replacement.");
  const absolute = resolveToCwd(args.path, ctx.cwd);
  checkAborted(ctx.signal, args.path, false);
  // The queue is released only when this callback settles, and it never settles while a
  // read or write is pending: aborts are only observed between awaits.
  return withFileLock(absolute, async () => {
    checkAborted(ctx.signal, args.path, false);
    let bytes: Buffer;
    try {
      if (ops) await ops.access(absolute);
      bytes = ops ? Buffer.from(await ops.readFile(absolute)) : await readFile(absolute);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
      throw new Error(
        code === "ENOENT"
          ? `Cannot edit ${args.path}: the file does not exist (use write to create it).`
          : `Cannot read ${args.path}: ${code}.`,
      );
    }
    checkAborted(ctx.signal, args.path, false);
    const original = bytes.toString("utf8");
    if (!Buffer.from(original, "utf8").equals(bytes)) {
      throw new Error(`Cannot edit ${args.path}: it is not valid UTF-8 text. Use bash to change binary files.`);
    }
    const result = applyEdits(original, args.edits, args.path);
    try {
      if (ops) await ops.writeFile(absolute, result.text);
      else await writeFile(absolute, result.text, "utf8");
    } catch (error) {
      const denial = sandboxWriteDenial(args.path, absolute, (error as NodeJS.ErrnoException).code);
      throw denial ? new Error(denial) : error;
    }
    checkAborted(ctx.signal, args.path, true);
    const count = args.edits.length === 1 ? "1 replacement" : `${args.edits.length} replacements`;
    const how = result.normalized ? " (matched after normalizing quotes, dashes and white space)" : "";
    return {
      content: [{ type: "text", text: `Edited ${args.path}: ${count}${how}.\n\n${result.diff}` }],
      details: { diff: result.diff, firstChangedLine: result.firstChangedLine },
    };
  });
}

/** An `edit` tool; the options are pi's, for extensions that build their own (`createEditTool`). */
export function createEditTool(options: EditToolOptions = {}): AgentTool<typeof EditParams> {
  return {
    name: "edit",
    label: "edit",
    description:
      "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file. If two changes affect the same block or nearby lines, merge them into one edit instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes.",
    snippet: "Make precise file edits with exact text replacement, including multiple disjoint edits in one call",
    guidelines: [
      "Use edit for targeted changes. Batch changes to one file in a single call.",
      "Each edits[].oldText must exactly and uniquely match the original file. Keep matches short and non-overlapping; merge nearby changes without including large unchanged regions.",
    ],
    parameters: EditParams,
    prepareArguments: prepareEditArguments,
    execute: (args, ctx) => runEdit(args, ctx, options.operations),
  };
}

/** Replace exact, unique, non-overlapping spans of one file; writes to one real path are serialized. */
export const editTool = createEditTool();
