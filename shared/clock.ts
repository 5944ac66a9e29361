/**
 * The supervisor's two clocks. Durations (stalls, presence, dialog and flood windows,
 * restart intensity, deadlines) are measured on `steadyNow()`: milliseconds since the
 * epoch as they were when this process started, advanced by the monotonic clock, so a
 * wall-clock jump (NTP, a suspended laptop, `date -s`) neither stalls a healthy agent nor
 * hides a silent one. Times a person reads (last seen, last exit, started) are kept on
 * the same steady scale and turned into wall-clock times where they leave the process
 * (`toWall`), so they stay right after a jump too.
 */
const wallAtStart = Date.now();
const monoAtStart = performance.now();

/** Milliseconds on the steady scale: the wall clock at start plus monotonic time since. */
export function steadyNow(): number {
  return wallAtStart + (performance.now() - monoAtStart);
}

/** A steady time as the wall clock reads it now (null stays null). */
export function toWall<T extends number | null | undefined>(steady: T): T {
  if (typeof steady !== "number") return steady;
  return (steady + (Date.now() - steadyNow())) as T;
}

/** A wall-clock time (from a file, another process) on the steady scale. */
export function fromWall(wall: number): number {
  return wall - (Date.now() - steadyNow());
}
