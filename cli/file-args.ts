/**
 * `pi @notes.md @shot.png "question"`: pi 0.73's `@file` arguments. A text file's content
 * goes into the prompt, before the message, as `<file name="ABS">\nCONTENT\n</file>\n`; an
 * image (png, jpeg, gif, webp, by its bytes) is attached and named by an empty
 * `<file name="ABS"></file>\n`; an empty file is skipped; a missing one is an error.
 */
import { readFileSync, statSync } from "node:fs";
import type { ImageContent } from "../shared/schema/messages.js";
import { resolveExistingPath } from "../worker/tools/path-utils.js";
import { sniffImageType } from "../worker/tools/read.js";

/** The `@file` arguments (without their `@`) and the words that remain, in order. Pure. */
export function splitFileArgs(words: readonly string[]): { files: string[]; rest: string[] } {
  const files: string[] = [];
  const rest: string[] = [];
  for (const word of words) {
    if (word.startsWith("@") && word.length > 1) files.push(word.slice(1));
    else rest.push(word);
  }
  return { files, rest };
}

/** One `@file` read: its bytes, or null for an empty file. */
export interface FileArg {
  path: string;
  bytes: Buffer | null;
}

/**
 * The prompt text and attachments of the files, as pi builds them. Pure: the files
 * come read (`readFileArgs`).
 */
export function fileArgsContent(files: readonly FileArg[]): { text: string; images: ImageContent[] } {
  let text = "";
  const images: ImageContent[] = [];
  for (const { path, bytes } of files) {
    if (bytes === null) continue;
    const mimeType = sniffImageType(bytes);
    if (mimeType) {
      images.push({ type: "image", mimeType, data: bytes.toString("base64") });
      text += `<file name="${path}"></file>\n`;
    } else {
      text += `<file name="${path}">\n${bytes.toString("utf8")}\n</file>\n`;
    }
  }
  return { text, images };
}

/** Read the `@file` arguments relative to `cwd`; throws naming the file that is missing or unreadable. */
export function readFileArgs(files: readonly string[], cwd: string): FileArg[] {
  return files.map((file) => {
    const path = resolveExistingPath(file, cwd);
    let size: number;
    try {
      size = statSync(path).size;
    } catch {
      throw new Error(`file not found: ${path} (from @${file})`);
    }
    if (size === 0) return { path, bytes: null };
    try {
      return { path, bytes: readFileSync(path) };
    } catch (err) {
      throw new Error(`could not read file ${path}: ${(err as Error).message}`);
    }
  });
}
