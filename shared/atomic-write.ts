/**
 * Replace a file so that a reader (or a crash) only ever sees the old or the new
 * content: write a temp file beside it (0600), fsync, rename, fsync the folder.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Write `text` to `path` atomically; the parent folder is created 0700 when missing.
 * When the disk refuses (full, quota) the old file stays and no temp file is left.
 */
export function writeFileAtomic(path: string, text: string | Buffer): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    const fd = openSync(tmp, "w", 0o600);
    try {
      const bytes = typeof text === "string" ? Buffer.from(text, "utf8") : text;
      let offset = 0;
      while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
  // The rename is durable only once the directory entry is on disk.
  try {
    const dirFd = openSync(dirname(path), "r");
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  } catch {
    // Some filesystems refuse fsync on a directory; the file itself is already synced.
  }
}
