/**
 * Holds the TUI state and tells the view about changes at most `frameMs` apart
 * (default 50 ms: ≤ 20 frames/s), however fast events arrive. Every event is
 * reduced at once; only the notifications are coalesced.
 */
import { initialState, reduce, type TuiAction, type TuiState } from "./state.js";

/** Options of a store; tests and the bench shorten or observe the frame clock. */
export interface StoreOptions {
  frameMs?: number;
  /** While something runs, re-render this often so spinners and elapsed times move. */
  tickMs?: number;
  /** Called with how long each notification (one frame: React render, layout, write) took. */
  onFrame?: (ms: number) => void;
  now?: () => number;
}

/** A state container with throttled change notifications (for `useSyncExternalStore`). */
export class TuiStore {
  private state: TuiState;
  private readonly listeners = new Set<() => void>();
  private readonly frameMs: number;
  private readonly now: () => number;
  private lastEmit = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly ticker: NodeJS.Timeout;

  constructor(private readonly opts: StoreOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.frameMs = opts.frameMs ?? 50;
    this.state = initialState(this.now());
    this.ticker = setInterval(() => {
      if (this.isActive()) this.dispatch({ type: "tick", now: this.now() });
    }, opts.tickMs ?? 250);
    this.ticker.unref();
  }

  /** The current state (a new object after every change). */
  getState = (): TuiState => this.state;

  /** Listen for (throttled) changes; returns the unsubscribe function. */
  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** Reduce one action now; the view hears of it by the next frame. */
  dispatch = (action: TuiAction): void => {
    const next = reduce(this.state, action);
    if (next === this.state) return;
    this.state = next;
    this.schedule();
  };

  /** Stop the timers (the view is gone). */
  dispose(): void {
    clearInterval(this.ticker);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.listeners.clear();
  }

  private isActive(): boolean {
    if (this.state.connection.state !== "connected") return true;
    for (const name of this.state.order) {
      const a = this.state.agents[name]!;
      if (!a.hidden && (a.status === "busy" || a.status === "starting" || a.tools.length > 0)) return true;
    }
    return false;
  }

  private schedule(): void {
    if (this.timer) return;
    const wait = this.lastEmit + this.frameMs - this.now();
    if (wait <= 0) {
      this.emit();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      this.emit();
    }, wait);
  }

  private emit(): void {
    this.lastEmit = this.now();
    const started = performance.now();
    for (const listener of this.listeners) listener();
    this.opts.onFrame?.(performance.now() - started);
  }
}
