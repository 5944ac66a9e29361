/**
 * Random (version 4) UUIDs from the kernel's random source, read directly. A worker
 * needs one id at start-up (its session's), and node:crypto's randomUUID would load
 * crypto and WebCrypto for it: ~0.7 MB more resident memory in every idle worker.
 * Where /dev/urandom cannot be read as the kernel's device (Windows), node:crypto's randomUUID.
 */
import { randomUUID } from "node:crypto";
import { closeSync, fstatSync, openSync, readSync } from "node:fs";

/**
 * Random bytes read ahead for the next ids: a worker's start makes three (its session's,
 * its first entry's, its process tag) and each read of /dev/urandom is an open, a stat, a
 * read and a close. Bytes are handed out once each (not zeroed after: the id they make is
 * no secret, and Buffer's fill, first used here, cost a start ~0.8 ms of CPU), and read in
 * the process that uses them: never while a startup snapshot builds, whose heap every
 * worker started from it shares.
 */
const pool = { bytes: Buffer.alloc(16 * 16), used: 16 * 16 };

/** A v4 UUID (RFC 9562): 122 random bits, lower-case hex. */
export function randomUuid(): string {
  if (pool.used + 16 > pool.bytes.length) {
    if (process.execArgv.includes("--build-snapshot") || !readUrandom(pool.bytes)) return unpooledUuid();
    pool.used = 0;
  }
  const bytes = pool.bytes.subarray(pool.used, pool.used + 16);
  pool.used += 16;
  return formatUuidV4(bytes);
}

/** A UUID from a read of its own. */
function unpooledUuid(): string {
  const bytes = Buffer.alloc(16);
  if (!readUrandom(bytes)) return randomUUID();
  return formatUuidV4(bytes);
}

/** The v4 UUID spelled by 16 random bytes: version and variant bits set, the rest kept. */
export function formatUuidV4(bytes: Uint8Array): string {
  const b = Buffer.from(bytes.subarray(0, 16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = b.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Fill `into` from /dev/urandom; false where there is none to read (Windows, where the
 * path would name a file on the current drive; a file that is not the device; a read error).
 */
function readUrandom(into: Buffer): boolean {
  if (process.platform === "win32") return false;
  let fd: number;
  try {
    fd = openSync("/dev/urandom", "r");
  } catch {
    return false;
  }
  try {
    if (!fstatSync(fd).isCharacterDevice()) return false;
    let got = 0;
    while (got < into.length) {
      const n = readSync(fd, into, got, into.length - got, null);
      if (n === 0) return false;
      got += n;
    }
    return true;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}
