/**
 * glibc malloc settings for our own workers, through the environment glibc reads before
 * `main`: an idle worker then gives freed malloc memory back to the kernel (2.4 MB of its
 * ~11 MB private memory; BENCHMARKS.md, "Worker start-up"). They are the worker's alone: a
 * marker names the variables that were added, and the worker removes those (and the
 * marker) from its environment before it starts anything, so a user's build in the bash
 * tool never runs with two malloc arenas. A value the user set is kept as set, not named
 * in the marker, and reaches the tools as before. A user's GLIBC_TUNABLES, whatever it sets,
 * is left whole, and then no huge pages are asked for.
 */
import { readFileSync } from "node:fs";

/** The marker: the names of the malloc variables a supervisor (or `pi`'s sandbox start) added. */
export const WORKER_MALLOC_VAR = "PI_ORCH_MALLOC";

/**
 * What a worker gets, with the glibc tunable each variable stands for. A trim threshold
 * set explicitly turns off glibc's dynamic one, which grows after a large chunk is freed
 * and then keeps up to that much free memory at the top of the heap; two arenas (the main
 * thread's and one for V8's and libuv's threads) instead of up to 8 per core; and malloc's
 * large blocks in transparent huge pages where the kernel allows them (`madvise`, glibc 2.35
 * and later; older ones ignore the tunable). A start from the startup snapshot is mostly page
 * faults on this kind of machine: node reads the ~6 MB blob into a buffer that it grows by
 * copying, then copies V8's part and its built-ins' code cache out of it, each into fresh
 * pages. With huge pages that is ~1,500 of ~5,500 faults fewer, ~15% of the start's CPU
 * (BENCHMARKS.md, "Worker start-up"), for ~0.2-0.9 MB more resident.
 */
export const WORKER_MALLOC_SETTINGS: Readonly<Record<string, { value: string; tunable: string }>> = {
  MALLOC_TRIM_THRESHOLD_: { value: "131072", tunable: "glibc.malloc.trim_threshold" },
  MALLOC_ARENA_MAX: { value: "2", tunable: "glibc.malloc.arena_max" },
  GLIBC_TUNABLES: { value: "glibc.malloc.hugetlb=1", tunable: "glibc.malloc.hugetlb" },
};

let glibc: boolean | undefined;

/** Whether this process runs on glibc (its libc.so.6 is mapped): elsewhere the variables mean nothing. */
export function onGlibc(): boolean {
  if (glibc === undefined) {
    try {
      glibc = process.platform === "linux" && /\/libc\.so\.6$/m.test(readFileSync("/proc/self/maps", "utf8"));
    } catch {
      glibc = false;
    }
  }
  return glibc;
}

/**
 * The variables to add to `env` (the environment a worker will have) for a worker's
 * malloc, with the marker naming them; none off glibc. A setting the user made, as the
 * variable or in GLIBC_TUNABLES, is left as it is; variables a marker in `env` names
 * (left by a pi-orch above) are not the user's and are set again.
 */
export function workerMallocEnv(env: NodeJS.ProcessEnv, glibcHere: boolean = onGlibc()): Record<string, string> {
  if (!glibcHere) return {};
  const ours = new Set((env[WORKER_MALLOC_VAR] ?? "").split(","));
  // A GLIBC_TUNABLES a marker names is ours (a pi-orch above set it): no setting of the user's.
  const tunables = ours.has("GLIBC_TUNABLES") ? "" : (env.GLIBC_TUNABLES ?? "");
  const out: Record<string, string> = {};
  for (const [name, { value, tunable }] of Object.entries(WORKER_MALLOC_SETTINGS)) {
    const userSet =
      (env[name] !== undefined && !ours.has(name)) || tunables.split(":").some((t) => t.startsWith(`${tunable}=`));
    if (!userSet) out[name] = value;
  }
  const names = Object.keys(out);
  return names.length === 0 ? {} : { ...out, [WORKER_MALLOC_VAR]: names.join(",") };
}

/**
 * Take the variables the marker names (only ours: WORKER_MALLOC_SETTINGS) and the marker
 * out of `env`, so that nothing this process starts inherits them. glibc read them at
 * this process's start already.
 */
export function dropWorkerMallocEnv(env: NodeJS.ProcessEnv = process.env): void {
  const named = env[WORKER_MALLOC_VAR];
  if (named === undefined) return;
  delete env[WORKER_MALLOC_VAR];
  for (const name of named.split(",")) if (Object.hasOwn(WORKER_MALLOC_SETTINGS, name)) delete env[name];
}
