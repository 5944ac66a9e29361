/**
 * The `read` tool: a text file's lines (head kept when too long, with the offset to
 * continue from), or an image file as an image attachment.
 */
import { readFile, stat } from "node:fs/promises";
import type { Static } from "typebox";
import * as Type from "typebox/type";
import type { AgentTool, ToolContext, ToolResult } from "../types.js";
import { startLine } from "./numeric-args.js";
import { resolveExistingPath, resolveToCwd } from "./path-utils.js";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize, truncateHead, type TruncationResult } from "./truncate.js";

/** Arguments of `read`. */
export const ReadParams = Type.Object({
  path: Type.String({ description: "Path to the file to read (relative or absolute)" }),
  offset: Type.Optional(Type.Number({ description: "Line number to start reading from (1-indexed)" })),
  limit: Type.Optional(Type.Number({ description: "Maximum number of lines to read" })),
});
/** Arguments of `read`, validated. */
export type ReadParams = Static<typeof ReadParams>;

/**
 * What `read` reports besides its text, as pi 1.6: the truncation when one cut the text,
 * or for an image the model the run talks to when that model takes no images (absent otherwise).
 */
export interface ReadDetails {
  truncation?: TruncationResult;
  imageUnsupportedByModel?: string;
}

// The file is read whole (V8 strings top out near 512 MB); far below that, loading it
// is already a bad trade for a tool whose output is capped at 50 KB.
const MAX_FILE_BYTES = 256 * 1024 * 1024;

/** The image type of `bytes` from its magic number, or null when it is not an image we send. */
export function sniffImageType(bytes: Uint8Array): string | null {
  const starts = (sig: number[], at = 0) => sig.every((b, i) => bytes[at + i] === b);
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (starts([0xff, 0xd8, 0xff])) return "image/jpeg";
  if (starts([0x47, 0x49, 0x46, 0x38]) && (bytes[4] === 0x37 || bytes[4] === 0x39) && bytes[5] === 0x61) {
    return "image/gif";
  }
  if (starts([0x52, 0x49, 0x46, 0x46]) && starts([0x57, 0x45, 0x42, 0x50], 8)) return "image/webp";
  return null;
}

function abortError(): Error {
  return new Error("Operation aborted");
}

async function statOrExplain(path: string, absolute: string) {
  try {
    return await stat(absolute);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") {
      throw new Error(
        `File not found: ${path} (resolved to ${absolute}). Check the path, or use ls/find to locate it.`,
      );
    }
    if (code === "EACCES") throw new Error(`Permission denied reading ${path} (resolved to ${absolute}).`);
    throw error;
  }
}

/** Text of the requested line window, head-truncated, with a notice saying how to go on. */
function renderLines(text: string, args: ReadParams): ToolResult<ReadDetails> {
  // As pi 1.6: the file's text as it is, a final newline included (it leaves an empty last
  // line, which counts in the total, as pi counts it).
  const lines = text.split("\n");
  const total = lines.length;
  // As pi 1.6: any number; 0 or below starts at the first line, a limit below 0 counts from
  // the end (slice's rule), and a fraction stays in the notices' arithmetic.
  const start = startLine(args.offset);
  if (start >= total) throw new Error(`Offset ${args.offset} is beyond end of file (${total} lines total)`);
  const stop = args.limit === undefined ? total : Math.min(start + args.limit, total);
  const window = lines.slice(start, stop);
  const truncation = truncateHead(window.join("\n"), { maxLines: DEFAULT_MAX_LINES, maxBytes: DEFAULT_MAX_BYTES });
  let out = truncation.content;
  const end = start + truncation.outputLines;
  const next = end + 1;

  if (truncation.firstLineExceedsLimit) {
    // As pi 1.6: nothing of the line, its size, and the bash command that shows its start.
    const lineBytes = Buffer.byteLength(window[0]!, "utf8");
    out =
      `[Line ${start + 1} is ${formatSize(lineBytes)}, exceeds ${formatSize(DEFAULT_MAX_BYTES)} limit. ` +
      `Use bash: sed -n '${start + 1}p' ${args.path} | head -c ${DEFAULT_MAX_BYTES}]`;
  } else if (truncation.truncated) {
    const byBytes = truncation.truncatedBy === "bytes" ? ` (${formatSize(DEFAULT_MAX_BYTES)} limit)` : "";
    out += `\n\n[Showing lines ${start + 1}-${end} of ${total}${byBytes}. Use offset=${next} to continue.]`;
  } else if (stop < total) {
    // Only a limit stops early without truncation (pi's notice).
    out += `\n\n[${total - stop} more lines in file. Use offset=${stop + 1} to continue.]`;
  }
  return {
    content: [{ type: "text", text: out }],
    details: truncation.truncated ? { truncation } : undefined,
  };
}

/**
 * pi's `ReadOperations`: how `read` reaches files (the local file system by default;
 * an extension may read over ssh). `access` throws when the file is not readable;
 * `detectImageMimeType` returns an image type, or null/undefined for text.
 */
export interface ReadOperations {
  readFile(absolutePath: string): Promise<Buffer>;
  access(absolutePath: string): Promise<void>;
  detectImageMimeType?(absolutePath: string): Promise<string | null | undefined>;
}

/** Options of a `read` tool (pi's `ReadToolOptions`; images are sent as they are). */
export interface ReadToolOptions {
  operations?: ReadOperations;
  autoResizeImages?: boolean;
}

/** An image as pi 1.6 returns one it need not resize: its type in the text, the model told of when it cannot see it. */
function imageResult(bytes: Buffer, mimeType: string, ctx: ToolContext): ToolResult<ReadDetails> {
  const unsupported = ctx.model && !ctx.model.input.includes("image");
  return {
    content: [
      { type: "text", text: `Read image file [${mimeType}]` },
      { type: "image", data: bytes.toString("base64"), mimeType },
    ],
    ...(unsupported ? { details: { imageUnsupportedByModel: ctx.model!.id } } : {}),
  };
}

/** `read` on the local file system: checks, size cap, abortable read, image sniffing. */
async function readLocal(args: ReadParams, ctx: ToolContext): Promise<ToolResult<ReadDetails>> {
  if (ctx.signal.aborted) throw abortError();
  const absolute = resolveExistingPath(args.path, ctx.cwd);
  const info = await statOrExplain(args.path, absolute);
  if (info.isDirectory()) throw new Error(`${args.path} is a directory, not a file; use ls to list it.`);
  if (info.size > MAX_FILE_BYTES) {
    throw new Error(
      `${args.path} is ${formatSize(info.size)}, too large to read whole; use bash (head, tail, sed -n 'A,Bp') to read parts of it.`,
    );
  }
  const bytes = await readFile(absolute, { signal: ctx.signal }).catch((error: unknown) => {
    throw ctx.signal.aborted ? abortError() : error;
  });
  if (ctx.signal.aborted) throw abortError();
  const mimeType = sniffImageType(bytes);
  return mimeType ? imageResult(bytes, mimeType, ctx) : renderLines(bytes.toString("utf8"), args);
}

/** `read` through extension operations, in pi's order: access, image type, contents. */
async function readWith(ops: ReadOperations, args: ReadParams, ctx: ToolContext): Promise<ToolResult<ReadDetails>> {
  if (ctx.signal.aborted) throw abortError();
  const absolute = resolveToCwd(args.path, ctx.cwd);
  await ops.access(absolute);
  if (ctx.signal.aborted) throw abortError();
  const mimeType = ops.detectImageMimeType ? await ops.detectImageMimeType(absolute) : undefined;
  const bytes = Buffer.from(await ops.readFile(absolute));
  if (ctx.signal.aborted) throw abortError();
  return mimeType ? imageResult(bytes, mimeType, ctx) : renderLines(bytes.toString("utf8"), args);
}

/** pi 1.6's `structuredContent` of `read`: the text, or for an image its data with the text as a note. */
function readOutput(content: ToolResult["content"]): unknown {
  const text = content.find((c) => c.type === "text")?.text ?? "";
  const image = content.find((c) => c.type === "image");
  return image ? { type: "image", data: image.data, mimeType: image.mimeType, note: text } : text;
}

/** A `read` tool; the options are pi's, for extensions that build their own (`createReadTool`). */
export function createReadTool(options: ReadToolOptions = {}): AgentTool<typeof ReadParams> {
  const ops = options.operations;
  return {
    name: "read",
    label: "read",
    description:
      "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). Images are sent as " +
      `attachments. For text files, output is truncated to ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB ` +
      "(whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset " +
      "until complete.",
    snippet: "Read file contents",
    guidelines: ["Use read to examine files instead of cat or sed."],
    parameters: ReadParams,
    // A codemode script gets the text (or the image block), as in pi 1.6.
    outputSchema: {
      anyOf: [
        { type: "string" },
        {
          type: "object",
          properties: {
            type: { const: "image" },
            data: { type: "string" },
            mimeType: { type: "string" },
            note: { type: "string" },
          },
        },
      ],
    },
    execute: async (args, ctx) => {
      const result = await (ops ? readWith(ops, args, ctx) : readLocal(args, ctx));
      return { ...result, structuredContent: readOutput(result.content) };
    },
  };
}

/** Read a text file (by lines) or an image file. */
export const readTool = createReadTool();
