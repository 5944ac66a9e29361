/**
 * The TUI's own terminal writer. Ink lays out and draws the frame into `inkStdout`
 * (footer, dialogs, input lines, and blank boxes where the grid's header and panes go);
 * the panes are painted as finished rows (`pane-rows.ts`). The screen puts both on
 * the terminal with cursor addressing, rewriting only the rows that changed, inside
 * one synchronized update. Ink's own output stage then handles a mostly blank frame,
 * and a streaming pane costs a string per changed row instead of a pass over cells.
 */
import { EventEmitter } from "node:events";
import { createContext, useContext } from "react";

/** The real terminal: where bytes go, its size, and its resize event. */
export interface Terminal {
  write(chunk: string): unknown;
  readonly columns?: number;
  readonly rows?: number;
  on(event: "resize", listener: () => void): unknown;
  off(event: "resize", listener: () => void): unknown;
}

/** A pane painted at a screen position (cells, origin top-left). */
export interface PaintedPane {
  x: number;
  y: number;
  rows: readonly string[];
}

const CSI = "\x1b[";
// Synchronized output: the terminal shows the update at once, not row by row.
const BEGIN = `${CSI}?2026h${CSI}?25l${CSI}?7l`;
// Autowrap stays off while painting, so a row wider than expected is clipped at the edge, not wrapped into the next.
const END = `${CSI}?7h${CSI}?2026l`;

/** The stream ink renders into (debug mode: each write is a whole frame). */
class InkSink extends EventEmitter {
  readonly isTTY = true;
  constructor(
    private readonly term: Terminal,
    private readonly onFrame: (frame: string) => void,
  ) {
    super();
  }
  get columns(): number {
    return this.term.columns ?? 80;
  }
  get rows(): number {
    return this.term.rows ?? 24;
  }
  write(frame: string): boolean {
    this.onFrame(frame);
    return true;
  }
}

/** Composes ink's frame and the painted panes onto the terminal. */
export class Screen {
  /** Pass as ink's `stdout` with `debug: true`. */
  readonly inkStdout: NodeJS.WriteStream;
  private inkLines: string[] = [];
  private readonly panes = new Map<string, PaintedPane>();
  /** What each terminal row last received (the exact bytes), to skip unchanged rows. */
  private written: string[] = [];
  private cleared = false;
  private scheduled = false;
  private disposed = false;
  /** Off while another program has the terminal (Ctrl+G, Ctrl+Z). */
  private drawing = true;

  constructor(private readonly term: Terminal) {
    const sink = new InkSink(term, (frame) => {
      this.inkLines = frame.split("\n");
      this.schedule();
    });
    this.inkStdout = sink as unknown as NodeJS.WriteStream;
    term.on("resize", this.onResize);
  }

  /** Show `pane` under `id` from the next flush on (replacing what `id` showed). */
  setPane(id: string, pane: PaintedPane): void {
    this.panes.set(id, pane);
    this.schedule();
  }

  /** Stop showing `id`; ink's frame shows through where it was. */
  removePane(id: string): void {
    if (this.panes.delete(id)) this.schedule();
  }

  /** The panes shown now. */
  painted(): IterableIterator<PaintedPane> {
    return this.panes.values();
  }

  /** Write the rows that changed since the last flush (runs by itself once per batch of changes). */
  flush(): void {
    this.scheduled = false;
    if (this.disposed || !this.drawing) return;
    const height = this.term.rows ?? 24;
    const segments: { x: number; text: string }[][] = Array.from({ length: height }, () => []);
    for (const p of this.panes.values()) {
      for (let i = 0; i < p.rows.length; i++) segments[p.y + i]?.push({ x: p.x, text: p.rows[i]! });
    }
    let out = "";
    for (let y = 0; y < height; y++) {
      // Erase first, then write: an erase after a full-width line would take its last column too.
      let row = `${CSI}${y + 1};1H${CSI}0m${CSI}2K${this.inkLines[y] ?? ""}`;
      const segs = segments[y]!;
      if (segs.length > 1) segs.sort((a, b) => a.x - b.x);
      for (const s of segs) row += `${CSI}${y + 1};${s.x + 1}H${s.text}`;
      if (this.written[y] === row) continue;
      this.written[y] = row;
      out += row;
    }
    if (out === "") return;
    const clear = this.cleared ? "" : `${CSI}2J`;
    this.cleared = true;
    this.term.write(`${BEGIN + clear + out}${CSI}0m${END}`);
  }

  /** Clear the terminal and draw everything again (something else wrote onto it). */
  redraw(): void {
    this.written = [];
    this.cleared = false;
    this.schedule();
  }

  /** Stop drawing (another program has the terminal), or draw everything again. */
  setDrawing(on: boolean): void {
    this.drawing = on;
    if (on) this.redraw();
  }

  /** Stop listening to the terminal and show the cursor again. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.term.off("resize", this.onResize);
    this.term.write(`${CSI}0m${CSI}?7h${CSI}?25h`);
  }

  private schedule(): void {
    if (this.scheduled || this.disposed) return;
    this.scheduled = true;
    // Ink writes its frame during React's commit and the panes report in the commit's
    // layout effects: one flush after both shows them together.
    queueMicrotask(() => this.flush());
  }

  /** A resized terminal may have reflowed or dropped what was on it: clear and redraw all. */
  private readonly onResize = (): void => {
    this.inkStdout.emit("resize");
    this.redraw();
  };
}

/** The screen the grid paints its panes on; null: ink draws every pane itself. */
export const ScreenContext = createContext<Screen | null>(null);

/** The current screen, if any. */
export function useScreen(): Screen | null {
  return useContext(ScreenContext);
}
