/**
 * A worker flooding stdout with non-JSON lines, as one transition of the agent table handles
 * the window's end: what was dropped is reported, and a calm worker's status loses its
 * protocol problem. Counting the lines is protocol-flood.ts (pure, over the window state).
 */
import { closeWindow, type FloodLimits } from "./protocol-flood.js";
import type { StepWriter } from "./step-writer.js";

/** Wake at the end of the flood window, to see whether the worker calmed down. */
export function armFloodTimer(w: StepWriter, limits: FloodLimits): void {
  const s = w.s;
  const at = (s.flood.windowStart ?? w.now) + limits.windowMs;
  w.timer("flood", Math.max(0, at - w.now), { kind: "flood_tick", gen: s.worker?.gen ?? s.gen });
}

/** The flood window ended: report what it dropped; a calm worker loses its protocol problem, else wait another window. */
export function onFloodTick(w: StepWriter, limits: FloodLimits): void {
  const s = w.s;
  const closed = closeWindow(s.flood, w.now);
  s.flood = closed.state;
  if (closed.summarise > 0) reportDropped(w, closed.summarise);
  if (!closed.calm) return armFloodTimer(w, limits);
  s.protocolProblem = null;
  w.setStatus(s.record.status);
}

/** Summarise what the open window dropped now (the worker ends, or is restarted for it). */
export function summariseFlood(w: StepWriter): void {
  const s = w.s;
  if (s.flood.dropped > 0) reportDropped(w, s.flood.dropped);
  s.flood = { ...s.flood, dropped: 0 };
}

/** Tell the stream how many non-JSON lines were dropped. */
export function reportDropped(w: StepWriter, dropped: number): void {
  w.report({
    type: "protocol_error",
    message: `dropped ${dropped} non-JSON lines of a flooding worker`,
    dropped,
  });
}
