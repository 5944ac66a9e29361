/**
 * A worker's malloc settings (shared/malloc-env.ts): what a supervisor adds to a worker's
 * environment, what it leaves to the user, and what the worker takes out again.
 */
import { describe, expect, it } from "vitest";
import { dropWorkerMallocEnv, onGlibc, WORKER_MALLOC_VAR, workerMallocEnv } from "../../shared/malloc-env.js";

describe("workerMallocEnv", () => {
  it("adds the trim threshold, the arena count and huge pages on glibc, with the marker naming them", () => {
    expect(workerMallocEnv({ PATH: "/bin" }, true)).toEqual({
      MALLOC_TRIM_THRESHOLD_: "131072",
      MALLOC_ARENA_MAX: "2",
      GLIBC_TUNABLES: "glibc.malloc.hugetlb=1",
      [WORKER_MALLOC_VAR]: "MALLOC_TRIM_THRESHOLD_,MALLOC_ARENA_MAX,GLIBC_TUNABLES",
    });
  });

  it("adds nothing off glibc", () => {
    expect(workerMallocEnv({}, false)).toEqual({});
  });

  it("keeps a user's own variable, or a GLIBC_TUNABLES setting of the same tunable, and names only what it adds", () => {
    expect(workerMallocEnv({ MALLOC_ARENA_MAX: "8" }, true)).toEqual({
      MALLOC_TRIM_THRESHOLD_: "131072",
      GLIBC_TUNABLES: "glibc.malloc.hugetlb=1",
      [WORKER_MALLOC_VAR]: "MALLOC_TRIM_THRESHOLD_,GLIBC_TUNABLES",
    });
    // A user's GLIBC_TUNABLES is left whole: no huge pages added to it.
    expect(
      workerMallocEnv({ GLIBC_TUNABLES: "glibc.pthread.rseq=0:glibc.malloc.trim_threshold=1048576" }, true),
    ).toEqual({ MALLOC_ARENA_MAX: "2", [WORKER_MALLOC_VAR]: "MALLOC_ARENA_MAX" });
    expect(
      workerMallocEnv(
        { MALLOC_ARENA_MAX: "8", MALLOC_TRIM_THRESHOLD_: "0", GLIBC_TUNABLES: "glibc.malloc.hugetlb=0" },
        true,
      ),
    ).toEqual({});
  });

  it("sets again what a marker in the environment says a pi-orch above added", () => {
    expect(workerMallocEnv({ MALLOC_ARENA_MAX: "2", [WORKER_MALLOC_VAR]: "MALLOC_ARENA_MAX" }, true)).toMatchObject({
      MALLOC_ARENA_MAX: "2",
      [WORKER_MALLOC_VAR]: "MALLOC_TRIM_THRESHOLD_,MALLOC_ARENA_MAX,GLIBC_TUNABLES",
    });
    expect(
      workerMallocEnv({ GLIBC_TUNABLES: "glibc.malloc.hugetlb=1", [WORKER_MALLOC_VAR]: "GLIBC_TUNABLES" }, true),
    ).toMatchObject({ GLIBC_TUNABLES: "glibc.malloc.hugetlb=1" });
  });
});

describe("dropWorkerMallocEnv", () => {
  it("removes the variables the marker names and the marker, and leaves the user's", () => {
    const env: NodeJS.ProcessEnv = {
      MALLOC_TRIM_THRESHOLD_: "131072",
      MALLOC_ARENA_MAX: "8",
      GLIBC_TUNABLES: "glibc.malloc.hugetlb=1",
      [WORKER_MALLOC_VAR]: "MALLOC_TRIM_THRESHOLD_,GLIBC_TUNABLES",
    };
    dropWorkerMallocEnv(env);
    expect(env).toEqual({ MALLOC_ARENA_MAX: "8" });
    const users: NodeJS.ProcessEnv = {
      GLIBC_TUNABLES: "glibc.pthread.rseq=0",
      [WORKER_MALLOC_VAR]: "MALLOC_ARENA_MAX",
    };
    dropWorkerMallocEnv(users);
    expect(users).toEqual({ GLIBC_TUNABLES: "glibc.pthread.rseq=0" });
  });

  it("removes nothing without the marker, and never a variable that is not a malloc setting of ours", () => {
    const env: NodeJS.ProcessEnv = { MALLOC_ARENA_MAX: "2", PATH: "/bin" };
    dropWorkerMallocEnv(env);
    expect(env).toEqual({ MALLOC_ARENA_MAX: "2", PATH: "/bin" });
    const marked: NodeJS.ProcessEnv = { PATH: "/bin", HOME: "/h", [WORKER_MALLOC_VAR]: "PATH,HOME" };
    dropWorkerMallocEnv(marked);
    expect(marked).toEqual({ PATH: "/bin", HOME: "/h" });
  });
});

describe("onGlibc", () => {
  it("says whether this process's libc is glibc's", () => {
    // Node's own report names the glibc it runs on (and nothing on musl or another OS).
    const report = process.report.getReport() as { header?: { glibcVersionRuntime?: string } };
    const glibc = process.platform === "linux" && report.header?.glibcVersionRuntime !== undefined;
    expect(onGlibc()).toBe(glibc);
  });
});
