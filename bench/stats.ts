/** Small statistics helpers for the benchmarks. */

/** Median of a list of numbers. */
export function median(values: number[]): number {
  return percentile(values, 50);
}

/** The p-th percentile (nearest rank) of a list of numbers. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/** Format a number with a fixed number of decimals. */
export function fmt(value: number, digits = 1): string {
  return Number.isFinite(value) ? value.toFixed(digits) : "n/a";
}

/** A markdown table. */
export function table(header: string[], rows: (string | number)[][]): string {
  const lines = [`| ${header.join(" | ")} |`, `| ${header.map(() => "---").join(" | ")} |`];
  for (const row of rows) lines.push(`| ${row.join(" | ")} |`);
  return lines.join("\n");
}

/**
 * CPU time (ms) a live process has run so far, all its threads (V8's compiler and GC
 * threads too), from the kernel's nanosecond scheduler accounting; NaN where /proc has
 * none. Unlike wall time, the machine's other load barely changes it.
 */
export async function cpuMs(pid: number): Promise<number> {
  const { readFile, readdir } = await import("node:fs/promises");
  try {
    let ns = 0;
    for (const tid of await readdir(`/proc/${pid}/task`)) {
      ns += Number((await readFile(`/proc/${pid}/task/${tid}/schedstat`, "utf8")).split(" ")[0]);
    }
    return ns / 1e6;
  } catch {
    return NaN;
  }
}

/** Resident set size of a process in MB, from /proc (Linux). */
export async function rssMb(pid: number): Promise<number> {
  const { readFile } = await import("node:fs/promises");
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
    return kb / 1024;
  } catch {
    return NaN;
  }
}

/**
 * Private dirty memory of a process in MB (/proc/PID/smaps_rollup): what no other process
 * shares with it, what a fleet of them adds up to. NaN where /proc has none.
 */
export async function privateDirtyMb(pid: number): Promise<number> {
  const { readFile } = await import("node:fs/promises");
  try {
    const rollup = await readFile(`/proc/${pid}/smaps_rollup`, "utf8");
    return Number(/Private_Dirty:\s+(\d+)/.exec(rollup)?.[1] ?? NaN) / 1024;
  } catch {
    return NaN;
  }
}
