/**
 * pi 1.6's `structuredContent` of a `bash` result: the command's output for programmatic
 * callers (an extension's `tool_result` handler, a client reading `tool_execution_end`),
 * not cut to the model's 50 KB tail but bounded at 1 MB (its head and tail, with the
 * bytes left out counted between them), with the exit code and the wall time.
 */
import { open } from "node:fs/promises";

/** pi's `STRUCTURED_OUTPUT_MAX_BYTES`: callers decide how much of the output reaches the model. */
export const STRUCTURED_OUTPUT_MAX_BYTES = 1024 * 1024;

/** What `bash` gives as `structuredContent` (pi 1.6's field names). */
export interface BashStructuredContent {
  output: string;
  /** The output was longer than the bound: `output` is its head and tail. */
  truncated: boolean;
  /** The file with the whole output, when `output` is not all of it. */
  full_output_path?: string;
  exit_code: number;
  wall_time_seconds: number;
}

/** The whole output, from memory or from the spill file, bounded at `maxBytes` as pi reads it. */
export async function fullOutput(
  inMemory: string,
  spillPath: string | undefined,
  maxBytes: number = STRUCTURED_OUTPUT_MAX_BYTES,
): Promise<{ content: string; truncated: boolean }> {
  if (!spillPath) return { content: inMemory, truncated: false };
  const file = await open(spillPath, "r");
  try {
    const size = (await file.stat()).size;
    if (size <= maxBytes) return { content: new TextDecoder().decode(await file.readFile()), truncated: false };
    const head = Buffer.alloc(Math.floor(maxBytes / 2));
    const tail = Buffer.alloc(maxBytes - head.length);
    await file.read(head, 0, head.length, 0);
    await file.read(tail, 0, tail.length, size - tail.length);
    // Cut at character boundaries: the head's incomplete last character is held back by the
    // streaming decode, the tail skips the continuation bytes it starts with.
    let tailStart = 0;
    while (tailStart < tail.length && (tail[tailStart]! & 0xc0) === 0x80) tailStart++;
    const omitted = size - head.length - tail.length;
    const headText = new TextDecoder().decode(head, { stream: true });
    const tailText = new TextDecoder().decode(tail.subarray(tailStart));
    return { content: `${headText}\n\n[... ${omitted} bytes omitted ...]\n\n${tailText}`, truncated: true };
  } finally {
    await file.close();
  }
}

/** A finished command's structured result; `startedAt` is its `performance.now()` at the start. */
export async function bashStructuredContent(
  run: { output: string; truncated: boolean; fullOutputPath?: string },
  exitCode: number,
  startedAt: number,
): Promise<BashStructuredContent> {
  // pi rounds to tenths of a second.
  const wallTimeSeconds = Math.round((performance.now() - startedAt) / 100) / 10;
  const whole = await fullOutput(run.output, run.truncated ? run.fullOutputPath : undefined).catch(() => ({
    // The spill file could not be read back (removed meanwhile): the tail is what is left.
    content: run.output,
    truncated: true,
  }));
  return {
    output: whole.content,
    truncated: whole.truncated,
    ...(whole.truncated && run.fullOutputPath ? { full_output_path: run.fullOutputPath } : {}),
    exit_code: exitCode,
    wall_time_seconds: wallTimeSeconds,
  };
}
