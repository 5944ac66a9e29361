/**
 * A running command's output, bounded: the newest lines in memory (an editor's count,
 * pi's limits), everything else spilled to a private temp file once it no longer fits,
 * so the model sees the tail and the person can open the whole. Used by `runBash` for the
 * tool and for the RPC `bash` command.
 */
import { createWriteStream, type WriteStream } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { spillFilePath } from "./spill-dir.js";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, truncateTail, type TruncationResult, utf8Suffix } from "./truncate.js";

/** The truncation of a command's output: pi's fields, but lines counted as an editor shows them ("a\nb\n" is 2). */
export interface OutputTruncation
  extends Pick<
    TruncationResult,
    "truncated" | "truncatedBy" | "totalLines" | "totalBytes" | "outputLines" | "outputBytes"
  > {
  /** The one line kept is longer than the byte limit: only its end is shown. */
  partialLine: boolean;
}

/**
 * The tail of `text` as an editor counts lines: a final newline ends the last line (pi's
 * truncateTail would count an empty line after it) and is kept, so a notice appended
 * after the output starts on its own line.
 */
function editorTail(
  text: string,
  maxLines: number,
  maxBytes: number,
): { content: string; truncatedBy: "lines" | "bytes" | null; outputLines: number; partialLine: boolean } {
  if (text === "") return { content: "", truncatedBy: null, outputLines: 0, partialLine: false };
  const newline = text.endsWith("\n") ? "\n" : "";
  const cut = truncateTail(newline ? text.slice(0, -1) : text, { maxLines, maxBytes: maxBytes - newline.length });
  const content = cut.outputLines > 0 ? cut.content + newline : "";
  return { content, truncatedBy: cut.truncatedBy, outputLines: cut.outputLines, partialLine: cut.lastLinePartial };
}

/** A view of the output so far: the tail to show, and where the whole output is when it did not fit. */
export interface OutputSnapshot {
  text: string;
  truncation: OutputTruncation;
  fullOutputPath?: string;
}

/** Limits of an `OutputTail`; the defaults are the tool output limits. */
export interface OutputTailOptions {
  maxLines?: number;
  maxBytes?: number;
  /** Where the full output goes once it exceeds the limits; default a file in this worker's spill folder. */
  spillPath?: () => string;
  /** The most bytes the spill file keeps; the rest is counted, not written. Default `MAX_SPILL_BYTES`. */
  maxSpillBytes?: number;
}

/**
 * A command's spill file stops growing here (the command goes on; its tail is still
 * shown). A runaway `yes` must not fill the disk the session and the event log live on.
 */
export const MAX_SPILL_BYTES = 256 * 1024 * 1024;

/**
 * Collects a command's raw output with bounded memory: a decoded rolling tail of at
 * most about twice `maxBytes`, and, from the moment the output no longer fits the
 * limits, every byte (including the earlier ones) written to a temp file.
 */
export class OutputTail {
  private readonly maxLines: number;
  private readonly maxBytes: number;
  private readonly spillPath: () => string;
  private readonly decoder = new StringDecoder("utf8");
  private tail = "";
  private tailBytes = 0;
  /** The tail's first line lost its beginning to a trim. */
  private midLine = false;
  private totalBytes = 0;
  private newlines = 0;
  private endsWithNewline = false;
  /** Raw chunks kept only until the output first exceeds the limits. */
  private pending: Buffer[] = [];
  private file: WriteStream | undefined;
  private filePath: string | undefined;
  private fileFailed = false;
  private readonly maxSpillBytes: number;
  private spilledBytes = 0;
  /** The spill file reached `maxSpillBytes` and was closed with a note. */
  private spillCapped = false;
  /** The capped spill file's flush, which `finish` waits for. */
  private closing: Promise<void> | undefined;

  constructor(options: OutputTailOptions = {}) {
    this.maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.spillPath = options.spillPath ?? spillFilePath;
    this.maxSpillBytes = options.maxSpillBytes ?? MAX_SPILL_BYTES;
  }

  /**
   * Add a chunk. Returns false when the temp file wants the producer to wait: pause the
   * source and resume on `onDrain`, or memory grows with the file's write buffer.
   */
  append(chunk: Buffer): boolean {
    this.totalBytes += chunk.length;
    this.addText(this.decoder.write(chunk));
    if (this.file === undefined && !this.fileFailed && !this.spillCapped && this.exceedsLimits()) this.openFile();
    if (this.file) return this.spill(chunk);
    if (!this.fileFailed && !this.spillCapped) this.pending.push(chunk);
    return true;
  }

  /** Write to the spill file up to its cap; at the cap, end it with a note saying what was left out. */
  private spill(chunk: Buffer): boolean {
    const file = this.file!;
    const room = this.maxSpillBytes - this.spilledBytes;
    if (chunk.length <= room) {
      this.spilledBytes += chunk.length;
      return file.write(chunk);
    }
    if (room > 0) file.write(chunk.subarray(0, room));
    this.spilledBytes = this.maxSpillBytes;
    this.spillCapped = true;
    this.file = undefined;
    this.closing = new Promise<void>((resolve) => {
      file.once("error", () => resolve());
      file.once("close", () => resolve());
    });
    file.end(
      `\n[pi-orch: this file keeps the first ${this.maxSpillBytes} bytes of the output; the rest was not kept]\n`,
    );
    return true;
  }

  /** Call `resume` once the temp file has flushed its write buffer. */
  onDrain(resume: () => void): void {
    if (this.file?.writableNeedDrain) this.file.once("drain", resume);
    else resume();
  }

  /** The tail-truncated output so far. */
  snapshot(): OutputSnapshot {
    let text = this.tail;
    let wholeTailIsOneLine = false;
    if (this.midLine) {
      // Drop the fragment the last trim left, unless the tail is nothing but that one line.
      const nl = text.indexOf("\n");
      if (nl !== -1 && nl < text.length - 1) text = text.slice(nl + 1);
      else wholeTailIsOneLine = true;
    }
    const cut = editorTail(text, this.maxLines, this.maxBytes);
    const totalLines = this.totalLines();
    const truncated = this.exceedsLimits();
    const truncation: OutputTruncation = {
      truncated,
      truncatedBy: truncated ? (cut.truncatedBy ?? (this.totalBytes > this.maxBytes ? "bytes" : "lines")) : null,
      totalLines,
      totalBytes: this.totalBytes,
      outputLines: cut.outputLines,
      outputBytes: Buffer.byteLength(cut.content, "utf8"),
      partialLine: cut.partialLine || (wholeTailIsOneLine && cut.outputLines > 0),
    };
    return { text: cut.content, truncation, ...(this.filePath ? { fullOutputPath: this.filePath } : {}) };
  }

  /** Flush the decoder and close the temp file; the snapshot after this is final. */
  async finish(): Promise<void> {
    this.addText(this.decoder.end());
    await this.closing;
    const file = this.file;
    if (!file) return;
    this.file = undefined;
    await new Promise<void>((resolve) => {
      file.end(() => resolve());
      file.once("error", () => resolve());
    });
  }

  private totalLines(): number {
    if (this.totalBytes === 0) return 0;
    return this.newlines + (this.endsWithNewline ? 0 : 1);
  }

  private exceedsLimits(): boolean {
    return this.totalBytes > this.maxBytes || this.totalLines() > this.maxLines;
  }

  private addText(text: string): void {
    if (text.length === 0) return;
    for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) this.newlines++;
    this.endsWithNewline = text.endsWith("\n");
    this.tail += text;
    this.tailBytes += Buffer.byteLength(text, "utf8");
    if (this.tailBytes > 2 * this.maxBytes) this.trim();
  }

  /** Shrink the tail to its last `maxBytes`, which is all a snapshot can ever show. */
  private trim(): void {
    const kept = utf8Suffix(this.tail, this.maxBytes);
    const cutAt = this.tail.length - kept.length;
    this.midLine = this.tail[cutAt - 1] !== "\n";
    this.tail = kept;
    this.tailBytes = Buffer.byteLength(kept, "utf8");
  }

  private openFile(): void {
    this.filePath = this.spillPath();
    // The output may hold anything the command printed: readable by this user only.
    const file = createWriteStream(this.filePath, { mode: 0o600 });
    // A full disk must not fail the command: keep the tail, stop keeping the rest.
    file.on("error", () => {
      this.fileFailed = true;
      this.file = undefined;
      this.filePath = undefined;
      file.destroy();
    });
    this.file = file;
    const pending = this.pending;
    this.pending = [];
    for (const chunk of pending) if (this.file) this.spill(chunk);
  }
}
