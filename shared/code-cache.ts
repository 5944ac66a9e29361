/**
 * V8 code caches that name the node they were made for. V8 accepts a cache only from the
 * same V8 version and flags, and says so only after compiling; a cache made for another
 * node (the build ran on Node 20, the user runs Node 22) would make every start compile
 * the whole bundle. So each cache file begins with one key line (node version, arch,
 * node's flags), read before compiling: a cache for another node is never offered to V8,
 * and a start without a usable cache writes one for its node, once, in the user's cache
 * folder (`PI_ORCH_CACHE_DIR`, else `$XDG_CACHE_HOME/pi-orch`, else `~/.cache/pi-orch`).
 */
import { createHash } from "node:crypto";
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

/**
 * Node's own options, which V8 never sees (a preload, a loader, the inspector, warnings):
 * they do not change whether V8 takes a cache, so they stay out of the key. With the
 * ones that take their value as the next word.
 */
const NODE_ONLY =
  /^(-r|--require|--import|--loader|--experimental-loader|--inspect[-a-z]*|--enable-source-maps|--no-warnings|--trace-warnings|--title|--env-file)(=|$)/;
const TAKES_NEXT = new Set([
  "-r",
  "--require",
  "--import",
  "--loader",
  "--experimental-loader",
  "--title",
  "--env-file",
]);

/** The flags among `words` that reach V8, in order. */
function v8Flags(words: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (NODE_ONLY.test(w)) {
      if (TAKES_NEXT.has(w)) i++;
      continue;
    }
    out.push(w);
  }
  return out;
}

/**
 * The node this process runs, as far as V8's acceptance of a cache goes: its version, its
 * arch, and the flags on its command line and in NODE_OPTIONS (V8 rejects a cache made
 * under other flags, e.g. `--max-semi-space-size`).
 */
export function nodeCacheKey(
  env: NodeJS.ProcessEnv = process.env,
  execArgv: readonly string[] = process.execArgv,
): string {
  const options = (env.NODE_OPTIONS ?? "").split(/\s+/).filter((w) => w !== "");
  const flags = [...v8Flags(execArgv), ...v8Flags(options)];
  // One line: the key is the file's first line.
  return `node=${process.version} arch=${process.arch} v8=${process.versions.v8} flags=${JSON.stringify(flags)}`.replace(
    /\n/g,
    " ",
  );
}

/** The folder where caches made at run time go. */
export function userCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PI_ORCH_CACHE_DIR) return env.PI_ORCH_CACHE_DIR;
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, "pi-orch");
  return join(env.HOME || homedir(), ".cache", "pi-orch");
}

/** A file name in the user's cache folder for `what` (a bundle's path and identity, plus the node key). */
export function userCacheFile(dir: string, prefix: string, identity: string): string {
  return join(dir, `${prefix}-${createHash("sha256").update(identity).digest("hex").slice(0, 24)}.cache`);
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
