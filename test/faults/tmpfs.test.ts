/**
 * The disk-full tests' tmpfs helper when mounting fails: the mount point it was given
 * is removed and the error says why, whether mount refuses (root only: a size mount
 * rejects) or cannot be run at all (no mount on PATH).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { mountSmallDisk, tmpfsUnavailable } from "./tmpfs.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function mountPoint(): string {
  const path = mkdtempSync(join(tmpdir(), "po-disk-fail-"));
  dirs.push(path);
  return path;
}

describe("mountSmallDisk when the mount fails", () => {
  it("mount cannot be run: the mount point is removed and the error names the cause", () => {
    const path = mountPoint();
    const empty = mountPoint();
    const saved = process.env.PATH;
    process.env.PATH = empty;
    let error: Error | undefined;
    try {
      mountSmallDisk(path, 1024);
    } catch (err) {
      error = err as Error;
    } finally {
      process.env.PATH = saved;
    }
    expect(error?.message).toMatch(new RegExp(`^mount -t tmpfs at ${path} failed: could not run mount: .*ENOENT`));
    expect(existsSync(path)).toBe(false);
  });

  it.skipIf(tmpfsUnavailable() !== null)(
    "mount refuses the options: the mount point is removed and mount's message is given",
    () => {
      const path = mountPoint();
      expect(() => mountSmallDisk(path, Number.NaN)).toThrow(new RegExp(`^mount -t tmpfs at ${path} failed: \\S`));
      expect(existsSync(path)).toBe(false);
    },
  );
});
