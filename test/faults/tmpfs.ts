/**
 * A small tmpfs for disk-full faults: mounted by the test (root only), filled to the
 * last byte on demand, freed again, and always unmounted by the test's cleanup.
 */
import { spawnSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";

/** Why disk-full tests cannot run here, or null when they can (root with a working `mount -t tmpfs`). */
export function tmpfsUnavailable(): string | null {
  if (process.platform !== "linux") return "disk-full tests need Linux (tmpfs)";
  if (process.getuid?.() !== 0) return "disk-full tests mount a tmpfs and need root";
  const probe = spawnSync("mount", ["--version"], { encoding: "utf8" });
  if (probe.status !== 0) return "disk-full tests need the mount command";
  return null;
}

/** A mounted tmpfs of a fixed size. */
export interface SmallDisk {
  path: string;
  /** Fill every free byte with a filler file; returns the bytes written. */
  fill(): number;
  /** Remove the filler: the space is back. */
  free(): void;
  /** Unmount (lazily if busy) and remove the mount point. Safe to call twice. */
  unmount(): void;
}

/**
 * Mount a tmpfs of `sizeKb` at `path` (created). When mount fails or cannot be run, the
 * mount point is removed (as `unmount` would: the caller gets no disk to clean up) and
 * the error gives mount's message.
 */
export function mountSmallDisk(path: string, sizeKb: number): SmallDisk {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${sizeKb}k,mode=0700`, "tmpfs", path], {
    encoding: "utf8",
  });
  if (mounted.status !== 0) {
    rmSync(path, { recursive: true, force: true });
    const why = mounted.error
      ? `could not run mount: ${mounted.error.message}`
      : (mounted.stderr ?? "").trim() || `exit status ${mounted.status}, signal ${mounted.signal}`;
    throw new Error(`mount -t tmpfs at ${path} failed: ${why}`);
  }
  const filler = join(path, ".filler");
  let isMounted = true;
  return {
    path,
    fill() {
      const fd = openSync(filler, "a");
      let written = 0;
      try {
        // Large pieces first, then ever smaller ones, so the last page is used too.
        for (let size = 256 * 1024; size >= 1; size = Math.floor(size / 4)) {
          const chunk = Buffer.alloc(size, 0x2e);
          for (;;) {
            try {
              const n = writeSync(fd, chunk);
              written += n;
              if (n < size) break;
            } catch {
              break;
            }
          }
        }
      } finally {
        closeSync(fd);
      }
      return written;
    },
    free() {
      rmSync(filler, { force: true });
    },
    unmount() {
      if (!isMounted) return;
      const done = spawnSync("umount", [path]);
      if (done.status !== 0) spawnSync("umount", ["-l", path]);
      isMounted = false;
      rmSync(path, { recursive: true, force: true });
    },
  };
}
