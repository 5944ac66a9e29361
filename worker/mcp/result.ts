/**
 * An MCP `CallToolResult` as the model sees it, as pi 1.6.0 converts it: text and images
 * pass through, embedded text resources become text and image resources images, other
 * blocks a short note; a result with no content but `structuredContent` is that JSON.
 * Text past 20 KB keeps its start and end around a `…N chars truncated…` marker, and the
 * whole text goes to a file (in the worker's spill folder) named in the result.
 */
import { writeFileSync } from "node:fs";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ImageContent, TextContent } from "../../shared/schema/messages.js";
import { spillFilePath } from "../tools/spill-dir.js";

/** Model-facing text of an MCP result beyond this is cut in the middle. */
export const MCP_OUTPUT_MAX_BYTES = 20 * 1024;

type Content = TextContent | ImageContent;
type Block = CallToolResult["content"][number];

function blockContent(block: Block): Content {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "image":
      return { type: "image", data: block.data, mimeType: block.mimeType };
    case "audio":
      return { type: "text", text: `[audio ${block.mimeType} omitted]` };
    case "resource_link":
      return { type: "text", text: `${block.name}: ${block.uri}` };
    case "resource": {
      const resource = block.resource;
      if ("text" in resource) return { type: "text", text: resource.text };
      if (resource.mimeType?.startsWith("image/"))
        return { type: "image", data: resource.blob, mimeType: resource.mimeType };
      return {
        type: "text",
        text: `[binary resource ${resource.uri} (${resource.mimeType ?? "unknown type"}) omitted]`,
      };
    }
    default:
      return { type: "text", text: `[unsupported MCP content ${(block as { type: string }).type}]` };
  }
}

/** `text` with its middle cut to fit `maxBytes` (at character boundaries); undefined when it fits. Pure. */
export function truncateMiddle(
  text: string,
  maxBytes: number,
): { content: string; totalBytes: number; totalLines: number } | undefined {
  const buf = Buffer.from(text, "utf8");
  if (buf.length <= maxBytes) return undefined;
  // Continuation bytes (10xxxxxx) do not start a character.
  const isBoundary = (i: number) => i >= buf.length || (buf[i] & 0xc0) !== 0x80;
  let headEnd = Math.floor(maxBytes / 2);
  while (headEnd > 0 && !isBoundary(headEnd)) headEnd--;
  let tailStart = buf.length - (maxBytes - Math.floor(maxBytes / 2));
  while (tailStart < buf.length && !isBoundary(tailStart)) tailStart++;
  const removed = Array.from(buf.subarray(headEnd, tailStart).toString("utf8")).length;
  const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  return {
    content: `${buf.subarray(0, headEnd).toString("utf8")}…${removed} chars truncated…${buf.subarray(tailStart).toString("utf8")}`,
    totalBytes: buf.length,
    totalLines: lines,
  };
}

/** The content a model gets for `result`, and the file holding the whole text when it was cut. */
export function modelContent(
  server: string,
  tool: string,
  result: CallToolResult,
): { content: Content[]; fullOutputPath?: string } {
  const content: Content[] = (result.content ?? []).map(blockContent);
  if (content.length === 0 && result.structuredContent !== undefined)
    content.push({ type: "text", text: JSON.stringify(result.structuredContent, null, 2) });
  const text = content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");
  if (result.isError && text === "")
    content.push({ type: "text", text: `MCP tool ${server}/${tool} returned an error` });
  const cut = truncateMiddle(text, MCP_OUTPUT_MAX_BYTES);
  if (!cut) return { content };
  let where: string;
  let fullOutputPath: string | undefined;
  try {
    fullOutputPath = spillFilePath();
    writeFileSync(fullOutputPath, text);
    where = `\n\n[Full output: ${fullOutputPath} (read it with offset/limit)]`;
  } catch (err) {
    fullOutputPath = undefined;
    where = `\n\n[Could not save the full output: ${(err as Error).message}]`;
  }
  const tokens = Math.ceil(cut.totalBytes / 4);
  return {
    content: [
      {
        type: "text",
        text: `Warning: truncated output (original token count: ${tokens})\nTotal output lines: ${cut.totalLines}\n\n${cut.content}${where}`,
      },
      ...content.filter((b) => b.type === "image"),
    ],
    ...(fullOutputPath ? { fullOutputPath } : {}),
  };
}
