/**
 * V8 code caches that name the node they were made for. V8 accepts a cache only from the
 * same V8 version and flags, and says so only after compiling; a cache made for another
 * node (the build ran on Node 20, the user runs Node 22) would make every start compile
 * the whole bundle. So each cache file begins with one key line (node version, arch, V8),
 * read before compiling: a cache for another node is never offered to V8, and a start
 * without a usable cache (none for its node, or one V8 rejected for its flags) writes one
 * for its node and flags, once, in the user's cache folder (`PI_ORCH_CACHE_DIR`, else
 * `$XDG_CACHE_HOME/pi-orch`, else `~/.cache/pi-orch`), which later starts look for first.
 */
import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** The node this process runs: its version, its arch and its V8 (the build's cache names these). */
export function nodeCacheKey(): string {
  return `node=${process.version} arch=${process.arch} v8=${process.versions.v8}`;
}

/**
 * The node and its flags, from the command line and NODE_OPTIONS: V8 rejects a cache made
 * under other V8 flags (e.g. `--max-semi-space-size`), so a cache a start writes for itself
 * names them all. Node's own options (a preload, `--cpu-prof`) are in it too: they only mean
 * one more file where the build's cache was rejected, which they never cause.
 */
export function nodeFlagsCacheKey(
  env: NodeJS.ProcessEnv = process.env,
  execArgv: readonly string[] = process.execArgv,
): string {
  const options = (env.NODE_OPTIONS ?? "").split(/\s+/).filter((w) => w !== "");
  // One line: the key is the file's first line.
  return `${nodeCacheKey()} flags=${JSON.stringify([...execArgv, ...options])}`.replace(/\n/g, " ");
}

/** The folder where caches made at run time go. */
export function userCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PI_ORCH_CACHE_DIR) return env.PI_ORCH_CACHE_DIR;
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, "pi-orch");
  return join(env.HOME || homedir(), ".cache", "pi-orch");
}

/**
 * A file name in the user's cache folder for `identity` (a bundle's path, size and time,
 * and the node's flags key). Two 32-bit FNV-1a hashes, not node's crypto: every start
 * looks for this file, and loading crypto would cost it ~1 ms. The key line inside the
 * file is what is checked; the name only has to differ.
 */
export function userCacheFile(dir: string, prefix: string, identity: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < identity.length; i++) {
    const c = identity.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x811c9dc5) >>> 0;
  }
  return join(dir, `${prefix}-${a.toString(16).padStart(8, "0")}${b.toString(16).padStart(8, "0")}.cache`);
}

/** Where the worker's code cache for this node is, if anywhere. */
export interface FoundCache {
  /** The key line of the data found, or of the file a start writes for itself. */
  key: string;
  data: Buffer | undefined;
  /** Why there is none: no file, or the build's was made for another node (or is no keyed cache). */
  status: "missing" | "stale";
  /** Where the data came from, when not from the build's file beside the bundle. */
  from?: string;
  /** The user's cache file for this bundle, node and flags. */
  userFile: string;
}

/**
 * The cache a start on this node and with these flags wrote in the user's cache folder
 * (named after the bundle's path, size and time too, so a rebuilt bundle never meets an
 * old cache), which exists only where the build's was not for it; else the build's cache
 * beside the bundle when it was made for this node. `own` names the node and flags of the
 * start that will run the bundle (this process's unless said).
 */
export function findCache(bundle: string, own: string = nodeFlagsCacheKey()): FoundCache {
  const st = statSync(bundle);
  const userFile = userCacheFile(userCacheDir(), "pi-worker", `${bundle} ${st.size} ${st.mtimeMs} ${own}`);
  const mine = readKeyedCache(userFile);
  if (typeof mine !== "string" && mine.key === own) {
    return { key: own, data: mine.data, status: "missing", from: userFile, userFile };
  }
  const key = nodeCacheKey();
  const built = readKeyedCache(`${bundle}.cache`);
  if (typeof built !== "string" && built.key === key) return { key, data: built.data, status: "missing", userFile };
  return { key: own, data: undefined, status: built === "missing" ? "missing" : "stale", userFile };
}

/** What was in a cache file: its key line and V8's data after it. */
export type KeyedCache = { key: string; data: Buffer } | "missing" | "unkeyed";

/** Read a keyed cache file; "missing" when there is none, "unkeyed" when it has no key line. */
export function readKeyedCache(file: string): KeyedCache {
  let raw: Buffer;
  try {
    raw = readFileSync(file);
  } catch {
    return "missing";
  }
  const nl = raw.indexOf(10);
  if (nl < 0 || nl > 4096) return "unkeyed";
  return { key: raw.subarray(0, nl).toString("utf8"), data: raw.subarray(nl + 1) };
}

/** The bytes of a keyed cache file. */
export function keyedCacheBytes(key: string, data: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${key}\n`, "utf8"), data]);
}

/** How long a writer's claim on a cache file holds before another may take over (a writer killed mid-write). */
const CLAIM_MS = 60_000;

/**
 * Write a keyed cache file for this node, once even when many workers start together:
 * one claims the file (`<file>.lock`, created exclusively), writes a temp file and renames
 * it into place; the others see the claim and leave it. Returns the error when the folder
 * cannot be written (read-only home, full disk), undefined when written or left to another.
 */
export function writeKeyedCache(file: string, key: string, data: () => Buffer): Error | undefined {
  const dir = join(file, "..");
  const lock = `${file}.lock`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    try {
      closeSync(openSync(lock, "wx", 0o600));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      if (Date.now() - statSync(lock).mtimeMs < CLAIM_MS) return undefined;
      unlinkSync(lock);
      closeSync(openSync(lock, "wx", 0o600));
    }
    const tmp = `${file}.${process.pid}.tmp`;
    try {
      const bytes = keyedCacheBytes(key, data());
      const fd = openSync(tmp, "w", 0o600);
      try {
        let offset = 0;
        while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, file);
    } finally {
      rmSync(tmp, { force: true });
      rmSync(lock, { force: true });
    }
    return undefined;
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}
