/**
 * How many workers may be starting at once. A worker starts at full CPU weight in an
 * autogroup of its own (priority.ts lowers it only once it answered), and the kernel
 * shares the CPU between autogroups first: 64 workers starting together leave the
 * supervisor one 65th of the machine, so a `list` waits seconds behind them. Starting
 * them a few at a time takes the same CPU in all and keeps the supervisor served.
 * Slots are granted in the order they were asked for.
 */
import { availableParallelism } from "node:os";

/** The variable that sets how many workers may start at once (a positive integer). */
export const START_CONCURRENCY_VAR = "PI_ORCH_START_CONCURRENCY";

/**
 * Workers starting at once by default: two per CPU, so the CPUs stay busy while a start
 * waits on the disk, yet the supervisor's autogroup keeps at least a third of the machine.
 */
export function defaultStartConcurrency(cpus = availableParallelism()): number {
  return Math.max(2, 2 * cpus);
}

/** The start concurrency from the text of `PI_ORCH_START_CONCURRENCY`; absent or blank is the default, null when invalid. */
export function parseStartConcurrency(text: string | undefined, cpus?: number): number | null {
  if (text === undefined || text.trim() === "") return defaultStartConcurrency(cpus);
  const n = Number(text);
  return Number.isInteger(n) && n >= 1 ? n : null;
}

/** A counting semaphore with a FIFO queue, for worker starts. */
export class StartGate {
  private running = 0;
  private readonly waiting = new Set<() => void>();

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`start concurrency must be 1 or more, not ${limit}`);
  }

  /** Starts under way now. */
  get active(): number {
    return this.running;
  }

  /** Starts waiting for a slot. */
  get queued(): number {
    return this.waiting.size;
  }

  /**
   * Ask for a slot: `grant` is called once one is free (now, when one is). Returns a
   * cancel for a request still waiting; it does nothing once granted (then `release`).
   */
  acquire(grant: () => void): () => void {
    if (this.running < this.limit) {
      this.running++;
      grant();
      return () => undefined;
    }
    this.waiting.add(grant);
    return () => void this.waiting.delete(grant);
  }

  /** Give a granted slot back; the longest waiting request gets it. */
  release(): void {
    const [next] = this.waiting;
    if (next === undefined) {
      this.running = Math.max(0, this.running - 1);
      return;
    }
    this.waiting.delete(next);
    next();
  }
}
