/**
 * The `pi` bin as built (`dist/cli/pi.cjs`): loads the worker bundle with the V8 code
 * cache `npm run build` made for it, so a start skips compiling ~1 MB of JavaScript.
 * CommonJS on purpose: Node's ESM loader alone costs a start tens of milliseconds.
 * The cache names the node it was made for (shared/code-cache.ts): on another node (or
 * with other node flags) the bundle compiles as usual, slower, never wrong, and that start
 * writes a cache for its node in the user's cache folder, which the next start uses. On a terminal it runs the ESM
 * build instead: only that one can load ink for the interactive mode (ink is ESM-only,
 * and Node 20 cannot require it); supervisors and scripts always use pipes.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Script } from "node:vm";
import { findCache, keyedCacheBytes, nodeCacheKey, nodeFlagsCacheKey, writeKeyedCache } from "../shared/code-cache.js";

/** Compile the bundle next to this launcher with its cache, and run it. */
function runCached(): void {
  const bundle = join(__dirname, "pi-worker.cjs");
  // The build wrapped the bundle in the CommonJS function Node itself uses (plus the
  // bundle's stand-in for import.meta.url), so the file is compiled as read, no copy.
  const source = readFileSync(bundle, "utf8");
  const found = findCache(bundle);
  let cachedData = found.data;
  // No importModuleDynamically: V8 drops that callback for a script loaded from a code
  // cache, so the build compiles the bundle's import()s to require() instead.
  const script = new Script(source, { filename: bundle, cachedData });
  const status = cachedData === undefined ? found.status : script.cachedDataRejected ? "rejected" : "accepted";
  const report = process.env.PI_ORCH_CODE_CACHE === "report";
  if (report) process.stderr.write(`pi: code cache ${status}${found.from ? ` (${found.from})` : ""}\n`);
  if (process.env.PI_ORCH_CODE_CACHE === "write") {
    // The build's run: what compiled by exit (start-up and the first answer) goes into the cache.
    process.on("exit", () =>
      writeFileSync(`${bundle}.cache`, keyedCacheBytes(nodeCacheKey(), script.createCachedData())),
    );
  } else if (status !== "accepted") {
    // No cache for this node and flags: make one, from what a start compiled, for the next start.
    rebuildLater(script, found.userFile, nodeFlagsCacheKey(), report);
  }
  // Not held while the bundle runs: the first young GC of the start-up then frees the
  // cache's ~0.8 MB, which otherwise stays until the first full GC, seconds later.
  cachedData = undefined;
  found.data = undefined;
  const main = script.runInThisContext() as (...args: unknown[]) => void;
  const module = { exports: {} };
  main.call(
    module.exports,
    module.exports,
    createRequire(bundle),
    module,
    bundle,
    dirname(bundle),
    pathToFileURL(bundle).href,
  );
}

/** How long after start a long-running worker writes the cache: past its first answers. */
const REBUILD_AFTER_MS = 1_000;

/**
 * Write this node's cache a second after start, or at exit if that comes first (a worker
 * that answered one command and had its stdin closed), never for `--version` or `--help`,
 * which compile too little to be worth keeping. A folder that cannot be written is said
 * on stderr, since every start then stays slow.
 */
function rebuildLater(script: Script, file: string, key: string, report: boolean): void {
  if (process.argv.slice(2).some((a) => a === "--version" || a === "-v" || a === "--help" || a === "-h")) return;
  let done = false;
  const write = (): void => {
    if (done) return;
    done = true;
    const err = writeKeyedCache(file, key, () => script.createCachedData());
    if (err) {
      process.stderr.write(
        `pi: no code cache for node ${process.version}, and none could be written (${err.message}); every start compiles the worker. Set PI_ORCH_CACHE_DIR to a writable folder.\n`,
      );
    } else if (report) process.stderr.write(`pi: code cache written to ${file}\n`);
  };
  setTimeout(write, REBUILD_AFTER_MS).unref();
  process.once("exit", write);
}

/**
 * Outside a sandbox, unless `--sandbox off` (or PI_ORCH_SANDBOX=off) says otherwise: start
 * again inside one, before the bundle loads (cli/sandbox-exec.ts). Where none can run, pi
 * runs unboxed after a notice, and marks that decision for the bundle it loads.
 */
function wantsSandbox(): boolean {
  if (process.env.PI_ORCH_SANDBOXED) return false;
  const { sandboxFlags, execInSandbox, chooseSandbox } =
    require("./sandbox-exec.js") as typeof import("./sandbox-exec.js");
  const flags = sandboxFlags(process.argv.slice(2));
  const choice = chooseSandbox(flags, process.env);
  if (choice.warning) process.stderr.write(`${choice.warning}\n`);
  if (choice.mode === "off") {
    if (choice.notice) {
      process.stderr.write(`${choice.notice}\n`);
      process.env.PI_ORCH_SANDBOX = "off";
    }
    return false;
  }
  execInSandbox(choice.mode, flags);
  return true;
}

if (wantsSandbox()) {
  // the sandboxed pi runs; this one waits for it
} else if (process.stdin.isTTY && process.stdout.isTTY) {
  const esm = join(__dirname, "pi.js");
  import(pathToFileURL(esm).href).catch((err: unknown) => {
    process.stderr.write(
      `pi: could not load ${esm}: ${err instanceof Error ? err.message : String(err)}; run npm run build\n`,
    );
    process.exit(1);
  });
} else {
  runCached();
}
