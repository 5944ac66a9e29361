/**
 * Workers run at a lower CPU weight than the supervisor and its clients, so routing
 * events and drawing the TUI never wait behind busy agents. While CPUs are free this
 * costs an agent nothing; only when the machine is saturated do agents yield first.
 */
import { setPriority } from "node:os";
import { setAutogroupNice } from "../shared/autogroup.js";

/**
 * The nice of workers unless `PI_ORCH_WORKER_NICE` says otherwise: the lowest weight.
 * Each worker is an autogroup of its own, and the kernel weighs autogroups one against
 * another: one at nice 0 (the supervisor's, the TUI's) weighs 1024, one at nice 10 110,
 * at nice 19 15. At 10, ten busy agents outweighed the supervisor; at 19 it takes 68, and
 * with 64 streaming agents on a busy 2-core machine the TUI's p99 frame took 52–81 ms against
 * 231–703 ms at 10 (BENCHMARKS.md, "TUI rendering").
 */
export const DEFAULT_WORKER_NICE = 19;

/**
 * The worker nice from the text of `PI_ORCH_WORKER_NICE`: an integer 0–19 (0 leaves
 * workers at the supervisor's weight); absent or blank is the default. Null when invalid.
 */
export function parseWorkerNice(text: string | undefined): number | null {
  if (text === undefined || text.trim() === "") return DEFAULT_WORKER_NICE;
  const nice = Number(text);
  return Number.isInteger(nice) && nice >= 0 && nice <= 19 ? nice : null;
}

/**
 * Lower a just-spawned worker to `nice`: its process nice (which its children inherit, and
 * which is what counts among the processes of one autogroup, or where autogroups are off)
 * and, for a worker in a session of its own (`ownAutogroup`), its autogroup (Linux: what
 * weighs against the supervisor's). The workers' shared session has its nice set once, by
 * its launcher (worker-launcher.ts). Failures are ignored: a worker at full weight still works.
 */
export function lowerWorkerPriority(pid: number, nice: number, ownAutogroup = true): void {
  if (nice <= 0) return;
  if (ownAutogroup) setAutogroupNice(pid, nice);
  try {
    setPriority(pid, nice);
  } catch {
    // Gone already, or not permitted here: the worker runs at the supervisor's weight.
  }
}
