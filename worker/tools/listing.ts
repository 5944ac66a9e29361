/**
 * A list of paths as `find` and `ls` answer it, as pi 1.6 does: one per line, cut at the byte
 * limit only (the tool's own count limit caps the lines already), with a notice in brackets
 * for each limit that cut it, and `details` naming those limits (none: no details).
 */
import type { ToolResult } from "../types.js";
import { DEFAULT_MAX_BYTES, formatSize, truncateHead, type TruncationResult } from "./truncate.js";

/** What a listing cut by its count limit says, and which details field names the limit. */
export interface CountLimitCut<D> {
  notice: string;
  details: Partial<D>;
}

/** The tool's answer for `lines`; `cut` when the tool's count limit left paths out. */
export function listingResult<D extends { truncation?: TruncationResult }>(
  lines: readonly string[],
  cut: CountLimitCut<D> | null,
): ToolResult<D | undefined> {
  const truncation = truncateHead(lines.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER });
  const details: Partial<D> = {};
  const notices: string[] = [];
  if (cut) {
    notices.push(cut.notice);
    Object.assign(details, cut.details);
  }
  if (truncation.truncated) {
    notices.push(`${formatSize(DEFAULT_MAX_BYTES)} limit reached`);
    details.truncation = truncation;
  }
  const text = truncation.content + (notices.length > 0 ? `\n\n[${notices.join(". ")}]` : "");
  return { content: [{ type: "text", text }], details: Object.keys(details).length > 0 ? (details as D) : undefined };
}
