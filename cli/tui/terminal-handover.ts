/**
 * Lending the terminal to another program and taking it back, for `pi`'s Ctrl+G (an
 * external editor) and Ctrl+Z (the shell, until `fg`): the key reader leaves raw mode and
 * stops reading (the other program gets every key), the screen stops drawing and the
 * normal screen shows; afterwards the alternate screen, raw mode and a full redraw
 * come back.
 */

/** What the handover switches. */
export interface HandoverParts {
  /** Writes to the terminal (the screen switches). */
  write(text: string): unknown;
  /** Leave (`false`) and re-enter (`true`) the alternate screen's drawing. */
  drawing(on: boolean): void;
  /** Escape sequences that enter and leave the alternate screen. */
  enter: string;
  leave: string;
  /** The terminal's input, which must stop reading while the other program reads it. */
  input: NodeJS.ReadStream;
}

/** The terminal's owner while the TUI runs; `lend` gives it away for the length of `use`. */
export class TerminalHandover {
  private rawMode: ((on: boolean) => void) | null = null;
  private lent = false;

  constructor(private readonly parts: HandoverParts) {}

  /** The key reader's raw-mode switch (ink's `setRawMode`), while it is mounted. */
  attach(setRawMode: ((on: boolean) => void) | null): void {
    this.rawMode = setRawMode;
  }

  /** Run `use` with the terminal given away; the TUI draws again when it settles, also when it throws. */
  async lend<T>(use: () => Promise<T>): Promise<T> {
    if (this.lent) throw new Error("the terminal is already lent to another program");
    this.lent = true;
    this.parts.drawing(false);
    this.rawMode?.(false);
    stopReading(this.parts.input);
    this.parts.write(this.parts.leave);
    try {
      // A read the stream restarts in the ticks after its listener left is stopped too.
      await new Promise((resolve) => setImmediate(resolve));
      stopReading(this.parts.input);
      return await use();
    } finally {
      this.parts.write(this.parts.enter);
      this.rawMode?.(true);
      startReading(this.parts.input);
      this.parts.drawing(true);
      this.lent = false;
    }
  }
}

/**
 * Stop reading a terminal's input now. Without a listener, and paused, Node still has a
 * read pending on the tty and takes the next key from under the other program (in tmux
 * 2 of 5 Enters typed into a child editor were lost; pi 1.6.0 only pauses).
 */
function stopReading(input: NodeJS.ReadStream): void {
  input.pause();
  const handle = ttyHandle(input);
  if (handle?.reading) {
    handle.readStop();
    handle.reading = false;
  }
}

/** Read the terminal again: the stream still counts the read it had pending as running, so it would not start one. */
function startReading(input: NodeJS.ReadStream): void {
  const handle = ttyHandle(input);
  if (handle && !handle.reading) {
    handle.reading = true;
    handle.readStart();
  }
}

/** Node's handle under a tty stream (the one place that stops a pending read). */
function ttyHandle(
  input: NodeJS.ReadStream,
): { reading?: boolean; readStop(): number; readStart(): number } | undefined {
  const handle = (
    input as unknown as { _handle?: { reading?: boolean; readStop?: () => number; readStart?: () => number } }
  )._handle;
  return handle?.readStop && handle.readStart
    ? (handle as { reading?: boolean; readStop(): number; readStart(): number })
    : undefined;
}

/**
 * Stop this process group as a shell's Ctrl+Z would (SIGTSTP), and resolve once `fg`
 * continues it (SIGCONT). Meanwhile an interval keeps Node alive (the stopped key reader
 * holds nothing) and SIGINT is ignored, as pi does. On Windows there is no job control.
 */
export function suspendToShell(): Promise<void> {
  if (process.platform === "win32") return Promise.reject(new Error("suspend needs a shell with job control"));
  return new Promise((resolve, reject) => {
    const keepAlive = setInterval(() => {}, 2 ** 30);
    const ignore = () => {};
    process.on("SIGINT", ignore);
    const done = () => {
      clearInterval(keepAlive);
      process.off("SIGINT", ignore);
    };
    process.once("SIGCONT", () => {
      done();
      resolve();
    });
    try {
      process.kill(0, "SIGTSTP");
    } catch (err) {
      done();
      reject(err);
    }
  });
}
