/**
 * The machine's CPU use during a measurement, split into this benchmark's own
 * process tree and everything else (other people's builds on a shared machine), from
 * /proc (Linux). Benches print it next to their figures so a noisy run shows as one.
 */
import { readdirSync, readFileSync } from "node:fs";
import { cpus } from "node:os";

/** CPU use over a window, in cores (0 to the number of CPUs). */
export interface LoadReading {
  cores: number;
  /** Busy cores, all processes. */
  busy: number;
  /** Busy cores of this process and its descendants (the benchmark itself). */
  ours: number;
  /** Busy cores of everything else: `busy - ours`. */
  other: number;
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

interface Snapshot {
  at: number;
  busyTicks: number;
  oursTicks: number;
}

/** Busy ticks of all CPUs together from /proc/stat (idle and iowait left out). */
function machineBusyTicks(): number {
  const fields = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = fields;
  return user! + nice! + system! + irq! + softirq! + (steal ?? 0);
}

/** utime+stime+cutime+cstime of this process and every live descendant. */
function treeTicks(): number {
  const stats = new Map<number, { ppid: number; ticks: number }>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let text: string;
    try {
      text = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue;
    }
    // After the command in parentheses: state ppid ... utime(14) stime cutime cstime.
    const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
    stats.set(Number(name), {
      ppid: Number(rest[1]),
      ticks: Number(rest[11]) + Number(rest[12]) + Number(rest[13]) + Number(rest[14]),
    });
  }
  // A reaped child's time is in its parent's cutime, so exits inside the window still count.
  const ours = new Set([process.pid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, s] of stats) {
      if (!ours.has(pid) && ours.has(s.ppid)) {
        ours.add(pid);
        grew = true;
      }
    }
  }
  let ticks = 0;
  for (const pid of ours) ticks += stats.get(pid)?.ticks ?? 0;
  return ticks;
}

function snapshot(): Snapshot | null {
  try {
    return { at: performance.now(), busyTicks: machineBusyTicks(), oursTicks: treeTicks() };
  } catch {
    return null;
  }
}

/** Start measuring; the returned function ends the window (null where there is no /proc). */
export function startLoadMeter(): () => LoadReading | null {
  const start = snapshot();
  return () => {
    const end = snapshot();
    if (!start || !end) return null;
    const ms = end.at - start.at;
    const busy = ((end.busyTicks - start.busyTicks) * TICK_MS) / ms;
    const ours = ((end.oursTicks - start.oursTicks) * TICK_MS) / ms;
    return { cores: cpus().length, busy, ours, other: Math.max(0, busy - ours) };
  };
}

/** "0.85 of 2 cores" for a table cell; "n/a" without a reading. */
export function fmtOther(reading: LoadReading | null): string {
  return reading ? `${reading.other.toFixed(2)} of ${reading.cores}` : "n/a";
}

/** Median of the other CPU use of several readings, as `fmtOther` writes it. */
export function medianOther(readings: (LoadReading | null)[]): LoadReading | null {
  const real = readings.filter((r): r is LoadReading => r !== null).sort((a, b) => a.other - b.other);
  return real.length === 0 ? null : real[Math.floor(real.length / 2)]!;
}

/** CPU time (user + system) one process has used so far, in ms; NaN when it is gone. */
export function processCpuMs(pid: number): number {
  const { user, kernel } = processCpuSplitMs(pid);
  return user + kernel;
}

/** CPU time one process has used so far in its own code (`user`) and in the kernel's system calls for it (`kernel`), in ms; NaN when it is gone. */
export function processCpuSplitMs(pid: number): { user: number; kernel: number } {
  try {
    const rest = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = rest.slice(rest.lastIndexOf(")") + 2).split(" ");
    return { user: Number(fields[11]) * TICK_MS, kernel: Number(fields[12]) * TICK_MS };
  } catch {
    return { user: NaN, kernel: NaN };
  }
}
