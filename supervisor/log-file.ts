/**
 * One rotating log file of the supervisor (an agent's events or its worker's stderr):
 * the durable line file (`shared/line-file.ts`) with rotation by size (`.1`, `.2`, ...)
 * and its refusals told as `disk full: PATH`.
 */
import { existsSync, renameSync, rmSync } from "node:fs";
import { type BacklogLine, LineFile } from "../shared/line-file.js";

/** Default most bytes of log lines kept in memory while the disk refuses writes; the least important are dropped (and counted). */
export const DEFAULT_BACKLOG_BYTES = 4 * 1024 * 1024;

/**
 * What a log file reports about the disk: a write refused (with the reason), or writing
 * again (null, with the number of lines the bounded backlog had to drop meanwhile).
 * Called after the write that found out, never inside it, so the listener may log.
 */
export type WriteProblemListener = (problem: string | null, droppedLines: number) => void;

/** Options of a `LogFile` whose refused lines carry tags of type `T`. */
export interface LogFileOptions<T> {
  maxBytes: number;
  keep: number;
  backlogBytes?: number;
  onProblem?: WriteProblemListener;
  /**
   * Told, at once, each time a line waiting in the backlog leaves it: written (`true`,
   * always the oldest waiting line) or dropped by the bound (`false`, the least
   * important first), with the tag `write` kept it with.
   */
  onBacklogLeft?: (tag: T | undefined, written: boolean) => void;
}

/**
 * Append-only log that rotates when it passes `maxBytes` (`.1`, `.2`, ... up to `keep`),
 * on the durable line file: whole lines only, a bounded backlog of refused writes.
 */
export class LogFile<T = undefined> {
  private readonly file: LineFile<T>;

  constructor(
    readonly path: string,
    opts: LogFileOptions<T>,
  ) {
    const listener = opts.onProblem;
    this.file = new LineFile(path, {
      backlogBytes: opts.backlogBytes ?? DEFAULT_BACKLOG_BYTES,
      rotation: { maxBytes: opts.maxBytes, rotate: () => this.rotate(opts.keep) },
      onRefused: listener && ((error) => listener(problemOf(path, error), 0)),
      onResumed: listener && ((resumed) => listener(null, resumed.droppedLines)),
      onLeft: opts.onBacklogLeft,
    });
  }

  /**
   * Write `text` (whole lines) now; true when the OS has it, false when it waits in the
   * backlog (as the lines `split` gives, each with its priority and tag, or whole).
   */
  write(text: string, split?: () => readonly BacklogLine<T>[]): boolean {
    return this.file.write(text, split);
  }

  /** Try to write the backlog now; true when it is empty. */
  flushBacklog(): boolean {
    return this.file.flush();
  }

  /** Try the backlog a last time and close the file. */
  close(): void {
    this.file.close();
  }

  private rotate(keep: number): void {
    rmSync(`${this.path}.${keep}`, { force: true });
    for (let i = keep - 1; i >= 1; i--) {
      if (existsSync(`${this.path}.${i}`)) renameSync(`${this.path}.${i}`, `${this.path}.${i + 1}`);
    }
    if (keep >= 1) renameSync(this.path, `${this.path}.1`);
    else rmSync(this.path, { force: true });
  }
}

/** What the owner is told when the disk refuses a log: `disk full: PATH` or the error's code. */
function problemOf(path: string, error: NodeJS.ErrnoException): string {
  const code = error.code ?? "EIO";
  return code === "ENOSPC" || code === "EDQUOT" ? `disk full: ${path}` : `cannot write ${path}: ${code}`;
}
