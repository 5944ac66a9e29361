/**
 * What to do with a worker's non-JSON stdout lines. A few are reported one by one; past
 * `perWindow` in a window the worker is flooding: its lines are only counted, one summary
 * per window says how many were dropped (so garbage cannot rotate the agent's history out
 * of the logs), and past `restartAfterDropped` the worker is restarted by policy. Pure.
 */

/** Bounds of a worker's non-JSON lines. */
export interface FloodLimits {
  /** Lines reported one by one per window before the rest are counted instead. */
  perWindow: number;
  /** Length of a window; a flooding worker gets one summary event per window. */
  windowMs: number;
  /** Dropped lines (over the worker's life) after which it is restarted. */
  restartAfterDropped: number;
}

/** Defaults: 10 lines reported a second, one summary a second, restart after 100,000 dropped lines. */
export const DEFAULT_FLOOD_LIMITS: FloodLimits = { perWindow: 10, windowMs: 1_000, restartAfterDropped: 100_000 };

/** A worker's garbage so far. */
export interface FloodState {
  /** Start of the open window, or null when none is open. */
  windowStart: number | null;
  /** Lines seen in the open window. */
  inWindow: number;
  /** Lines dropped in the open window (not yet summarised). */
  dropped: number;
  /** Lines dropped since the worker started. */
  totalDropped: number;
  /** The previous window dropped lines: every line is dropped until a window without any. */
  flooding: boolean;
}

/** A worker that wrote no garbage yet. */
export const NO_FLOOD: FloodState = { windowStart: null, inWindow: 0, dropped: 0, totalDropped: 0, flooding: false };

/**
 * One non-JSON line at `now`: `report` it as an event, `drop` it (counted), or `restart`
 * (this drop reached the limit). `floodStarted` is true on the first drop of a flood:
 * the caller marks the agent and asks for `closeWindow` at `windowStart + windowMs`.
 */
export function noteBadLine(
  state: FloodState,
  limits: FloodLimits,
  now: number,
): { state: FloodState; action: "report" | "drop" | "restart"; floodStarted: boolean } {
  // A quiet window (nothing dropped, so no timer) ends by itself once its time is up.
  const open =
    state.windowStart !== null && (state.flooding || state.dropped > 0 || now - state.windowStart < limits.windowMs);
  const s: FloodState = open
    ? { ...state, inWindow: state.inWindow + 1 }
    : { ...state, windowStart: now, inWindow: 1, dropped: 0 };
  if (!s.flooding && s.inWindow <= limits.perWindow) return { state: s, action: "report", floodStarted: false };
  const floodStarted = !s.flooding && s.dropped === 0;
  const next = { ...s, dropped: s.dropped + 1, totalDropped: s.totalDropped + 1 };
  const action = next.totalDropped === limits.restartAfterDropped ? "restart" : "drop";
  return { state: next, action, floodStarted };
}

/**
 * The window's time is up: `summarise` the lines it dropped (0: nothing to say). When
 * it dropped some, the flood goes on and a new window opens at `now` (ask again at its
 * end); when it dropped none, the flood is over (`calm`).
 */
export function closeWindow(state: FloodState, now: number): { state: FloodState; summarise: number; calm: boolean } {
  if (state.dropped > 0)
    return {
      state: { ...state, windowStart: now, inWindow: 0, dropped: 0, flooding: true },
      summarise: state.dropped,
      calm: false,
    };
  return { state: { ...state, windowStart: null, inWindow: 0, flooding: false }, summarise: 0, calm: true };
}
