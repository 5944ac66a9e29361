/**
 * A CommonJS file run as require() would run it, but compiled with a V8 code cache: the
 * build's, beside it, or the one an earlier start of this node and flags wrote in the user's
 * cache folder (shared/code-cache.ts). For jiti's 190 KB dist file and the worker's chunks
 * (dist/cli/pi-worker-*.cjs), which an extension's first load compiles: without a cache,
 * compiling them was the largest part of that load. Each cache's key line begins with a hash
 * of the exact source it was made from (shared/checksum.ts), because V8 itself compares only
 * the source's length.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { checksum } from "./checksum.js";
import Module, { createRequire } from "node:module";
import { dirname } from "node:path";
import { startupSnapshot } from "node:v8";
import { Script } from "node:vm";
import {
  keyedCacheBytes,
  nodeCacheKey,
  nodeFlagsCacheKey,
  readKeyedCache,
  userCacheDir,
  userCacheFile,
  writeKeyedCache,
} from "./code-cache.js";

/** What became of the cache on a load: what `PI_ORCH_CODE_CACHE=report` prints. */
export type CacheStatus = "accepted" | "rejected" | "missing" | "stale";

/** How to load one file. */
export interface CachedLoad {
  /** The build's cache for it (made by the build's run with `write`). */
  cacheFile: string;
  /** The name of its cache files in the user's cache folder, and in what a failure says. */
  name: string;
  /** The build's run: write `cacheFile` at exit with what compiled by then. */
  write: boolean;
  /** The require the file's code gets (jiti's, with built-ins loaded on first use). */
  wrapRequire?: (real: NodeJS.Require) => NodeJS.Require;
}

/**
 * Run `file` as a CommonJS module compiled with its cache; its module (registered in
 * require's cache under `file`, so a later require() of it finds this one) and the status.
 * Without an accepted cache, that start writes one for its node in the user's cache folder
 * once its first second is over (or at exit), which the next start takes first.
 */
export function runCachedCommonJs(file: string, load: CachedLoad): { module: NodeJS.Module; status: CacheStatus } {
  const raw = readFileSync(file);
  // Not sha256: node:crypto would cost each start that loads a chunk or jiti ~1 ms to load.
  const sourceKey = `${load.name}-fnv128:${checksum(raw)}`;
  const own = `${sourceKey} ${nodeFlagsCacheKey()}`;
  const userFile = userCacheFile(userCacheDir(), load.name, `${file} ${own}`);
  const mine = readKeyedCache(userFile);
  const built = readKeyedCache(load.cacheFile);
  let cachedData: Buffer | undefined;
  if (typeof mine !== "string" && mine.key === own) cachedData = mine.data;
  else if (typeof built !== "string" && built.key === `${sourceKey} ${nodeCacheKey()}`) cachedData = built.data;
  // Node's own CommonJS wrapper, so the file runs exactly as require() would run it.
  const script = new Script(
    `(function (exports, require, module, __filename, __dirname) { ${raw.toString("utf8")}\n})`,
    {
      filename: file,
      cachedData,
    },
  );
  const mod = new Module(file, undefined);
  mod.filename = file;
  mod.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(dirname(file));
  const fn = script.runInThisContext() as (...args: unknown[]) => void;
  const require = createRequire(file);
  fn.call(mod.exports, mod.exports, load.wrapRequire ? load.wrapRequire(require) : require, mod, file, dirname(file));
  mod.loaded = true;
  require.cache[file] = mod;
  const status: CacheStatus =
    cachedData === undefined
      ? built === "missing"
        ? "missing"
        : "stale"
      : script.cachedDataRejected
        ? "rejected"
        : "accepted";
  if (load.write) {
    // The build's run: what compiled by exit (the load, what the extensions ran of it) goes in.
    process.on("exit", () =>
      writeFileSync(load.cacheFile, keyedCacheBytes(`${sourceKey} ${nodeCacheKey()}`, script.createCachedData())),
    );
  } else if (status !== "accepted" && !startupSnapshot.isBuildingSnapshot()) {
    // Not while a startup snapshot is built (the extension chunks of its `extensions` kind):
    // the timer and the exit listener would be in every worker started from it.
    let done = false;
    const save = (): void => {
      if (done) return;
      done = true;
      const err = writeKeyedCache(userFile, own, () => script.createCachedData());
      if (err)
        process.stderr.write(
          `pi: could not write ${load.name}'s code cache for node ${process.version}: ${err.message}\n`,
        );
    };
    setTimeout(save, 1_000).unref();
    process.once("exit", save);
  }
  if (status !== "accepted" && process.env.PI_ORCH_CODE_CACHE === "report") {
    process.stderr.write(`pi: ${load.name} code cache for this node goes to ${userFile}\n`);
  }
  return { module: mod, status };
}
