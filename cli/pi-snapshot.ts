/**
 * The entry of the worker's V8 startup snapshot (shared/startup-snapshot.ts), built as
 * dist/cli/pi-snapshot.cjs and run only by `node --snapshot-blob FILE --build-snapshot`.
 * It evaluates the worker bundle (compiled with a code cache of this node, so the
 * functions a start runs are compiled in the snapshot too) without running it, and makes
 * the worker's `start` the snapshot's main function. What depends on the process (argv,
 * env, cwd, stdio, the files it reads) is read only once `start` runs, in each worker;
 * the bundle reads nothing of it while it evaluates.
 *
 * The code cache comes from a warm-up run of this same file in the same snapshot-building
 * mode (`PI_ORCH_SNAPSHOT_WARM=FILE`, made by shared/startup-snapshot.ts first): while it
 * builds a snapshot, Node 22's V8 rejects a cache made by a usual run, so its snapshot held
 * none of what a start runs and every start compiled it (134 KB of bytecode, ~7 ms).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire, isBuiltin } from "node:module";
import { join } from "node:path";
import { startupSnapshot } from "node:v8";
import { Script } from "node:vm";
import { findCache, nodeFlagsCacheKey } from "../shared/code-cache.js";
import { SNAPSHOT_HOOK } from "../shared/snapshot-hook.js";

const bundle = join(__dirname, "pi-worker.cjs");
// The bundle's own require: node's built-ins while this builds (all it may load here), the
// bundle's module resolution in a worker (the model SDKs, jiti, when they are needed).
// A built-in the build loaded is in the snapshot already: a worker takes it from there, the
// very object node's require would return. Anything else (the model SDKs, jiti, and the
// built-ins the bundle loads on first use, through node's loader as a preload hooking it
// expects) goes through a require for the bundle's folder, made when first needed: made up
// front it cost every start ~1.2 ms of CPU, and a sandboxed worker may never need it.
const builtins = new Map<string, unknown>();
let load: NodeRequire | undefined;
const bundleRequire = ((id: string) => {
  if (builtins.has(id)) return builtins.get(id);
  if (startupSnapshot.isBuildingSnapshot()) {
    // A file of ours or a package would be a module of node's loader in the blob: a worker
    // loads those itself (the bundle's chunks, dist/cli/pi-worker-*.cjs, on first use).
    if (!isBuiltin(id))
      throw new Error(`${bundle} required ${id} while its startup snapshot was built; rebuild it (npm run build)`);
    const loaded: unknown = require(id);
    builtins.set(id, loaded);
    return loaded;
  }
  load ??= createRequire(bundle);
  return load(id);
}) as NodeRequire;

/** Run the bundle's wrapper function (the build wrapped it in node's CommonJS one) with `req`. */
function evaluate(script: Script, req: NodeRequire): void {
  const main = script.runInThisContext() as (...args: unknown[]) => void;
  const module = { exports: {} };
  main.call(module.exports, module.exports, req, module, bundle, __dirname, `file://${bundle}`);
}

/**
 * The warm-up: run the worker as a supervisor starts it (RPC, answering what arrives on
 * stdin), in this snapshot-building process, and write the code cache of what it compiled
 * to `out` as it exits, which it does before any snapshot is written.
 */
function warmUp(out: string): void {
  const script = new Script(readFileSync(bundle, "utf8"), { filename: bundle });
  process.argv = [process.argv[0]!, join(__dirname, "pi.cjs"), "--mode", "rpc", "--provider", "faux", "--no-session"];
  process.on("exit", () => writeFileSync(out, script.createCachedData()));
  evaluate(script, createRequire(bundle));
}

/**
 * The cache to compile the bundle with: the warm-up's (PI_ORCH_SNAPSHOT_CACHE), else the one
 * a worker start would use. A worker runs with no node flags of its own (the supervisor's
 * command line), and V8 reads NODE_OPTIONS: the cache for that start, not for this build's
 * own command line.
 */
function buildCache(): Buffer | undefined {
  const warm = process.env.PI_ORCH_SNAPSHOT_CACHE;
  return warm ? readFileSync(warm) : findCache(bundle, nodeFlagsCacheKey(process.env, [])).data;
}

/** Evaluate the bundle without running it, and make its `start` the snapshot's main function. */
function buildHeap(): void {
  const cachedData = buildCache();
  const script = new Script(readFileSync(bundle, "utf8"), { filename: bundle, cachedData });
  if (process.env.PI_ORCH_CODE_CACHE === "report") {
    const status = cachedData === undefined ? "missing" : script.cachedDataRejected ? "rejected" : "accepted";
    process.stderr.write(`pi-snapshot: code cache ${status}\n`);
  }
  let start: ((startedAs: { fromSnapshot: boolean }) => void) | undefined;
  const hooks = globalThis as { [SNAPSHOT_HOOK]?: (run: (startedAs: { fromSnapshot: boolean }) => void) => void };
  hooks[SNAPSHOT_HOOK] = (run) => {
    start = run;
  };
  evaluate(script, bundleRequire);
  delete hooks[SNAPSHOT_HOOK];
  if (!start) throw new Error(`${bundle} did not hand over its start; rebuild it (npm run build)`);
  const run = start;

  startupSnapshot.setDeserializeMainFunction(() => {
    // What the launcher (dist/cli/pi.cjs) does before the bundle, and the snapshot cannot:
    // start a sandbox, or the interactive mode on a terminal. The supervisor's workers never
    // need either; a start that does runs the launcher itself, as without a snapshot.
    const unboxed =
      process.env.PI_ORCH_SANDBOXED !== undefined ||
      (process.env.PI_ORCH_SANDBOX === "off" &&
        !process.argv.some((a) => a === "--sandbox" || a.startsWith("--sandbox=")));
    if (!unboxed || (process.stdin.isTTY && process.stdout.isTTY)) {
      load ??= createRequire(bundle);
      load(join(__dirname, "pi.cjs"));
      return;
    }
    if (process.env.PI_ORCH_CODE_CACHE === "report") process.stderr.write("pi: started from a startup snapshot\n");
    run({ fromSnapshot: true });
  });
}

const warmOut = process.env.PI_ORCH_SNAPSHOT_WARM;
if (warmOut !== undefined) warmUp(warmOut);
else buildHeap();
