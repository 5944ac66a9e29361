/**
 * Loads jiti for the extension loader, with the V8 code cache `npm run build` wrote for
 * it when there is one: compiling jiti's 190 KB dist/jiti.cjs was the largest single
 * cost a start with extensions paid before the first extension ran. The cache lies next
 * to the worker bundle (dist/cli/jiti.cjs.cache) and begins with a hash of the jiti file
 * it was made from, because V8 itself compares only the source's length, and the node it
 * was made for (shared/code-cache.ts). Missing, made from another jiti or for another node,
 * or rejected by V8: jiti compiles as usual, slower, never wrong, and that start writes
 * one for its node in the user's cache folder, which the next start uses.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import type Module from "node:module";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCachedCommonJs } from "../../shared/cached-commonjs.js";
import { recordingFs, recordingVm } from "./jiti-record.js";

type CreateJiti = typeof import("jiti").createJiti;

let jitiWasLoaded = false;

/** What jiti's entry hands its dist's createJiti: how to import natively, report errors, make a require. */
interface JitiContext {
  onError: (err: unknown) => never;
  nativeImport: (id: string) => Promise<unknown>;
  createRequire: typeof createRequire;
}

/** jiti's dist/jiti.cjs export: createJiti with the context, for a top jiti and for the one of each module it runs. */
type InternalCreateJiti = (
  id: string,
  opts: object,
  context: JitiContext & { parentModule?: Module; parentCache?: Record<string, Module> },
  normalized?: boolean,
) => import("jiti").Jiti;

let internalCreate: InternalCreateJiti | undefined;
let jitiContext: JitiContext | undefined;

/**
 * The jiti that jiti itself makes for a module it runs (its evalModule: same options,
 * the module as parent, the import's shared module cache), for `filename`, whose module
 * `parentModule` came from our module cache: that module's `require`, `import.meta.resolve`
 * and imports the cache did not note behave as under jiti, sharing its modules. Needs a
 * top jiti made by loadJiti's createJiti (its `options`, normalized); undefined where jiti
 * did not load through loadJiti's cache (another layout), so the caller loads with jiti.
 */
export function jitiChild(
  top: import("jiti").Jiti,
  filename: string,
  parentModule: Module,
  parentCache: Record<string, Module>,
): import("jiti").Jiti | undefined {
  if (internalCreate === undefined || jitiContext === undefined) return undefined;
  return internalCreate(filename, top.options, { ...jitiContext, parentModule, parentCache }, true);
}

/** Whether this process loaded jiti (an extension from a file): its start then left garbage worth collecting. */
export function jitiLoaded(): boolean {
  return jitiWasLoaded;
}

/**
 * jiti's `createJiti`. Where the build left a cache beside this bundle, jiti's dist file
 * is compiled from it and registered in require's cache under its own path first, so
 * jiti's own entry (lib/jiti.cjs, 30 lines, with the real `import()` jiti needs for
 * native modules) runs unchanged and picks it up.
 */
export function loadJiti(): CreateJiti {
  jitiWasLoaded = true;
  const require = createRequire(import.meta.url);
  const entry = jitiEntry(require);
  const mode = process.env.PI_ORCH_CODE_CACHE;
  const cacheFile = join(dirname(fileURLToPath(import.meta.url)), "jiti.cjs.cache");
  const distFile = join(dirname(entry), "../dist/jiti.cjs");
  // Another layout (a jiti other than 2.x) simply loads the way require() loads it.
  if (require.cache[distFile] === undefined && existsSync(distFile)) {
    const { module: mod, status } = runCachedCommonJs(distFile, {
      cacheFile,
      name: "jiti",
      write: mode === "write-jiti",
      wrapRequire: withLazyBuiltins,
    });
    // What jiti's entry (lib/jiti.cjs) passes the function it calls: kept for jitiChild.
    const internal = mod.exports as InternalCreateJiti;
    internalCreate = internal;
    mod.exports = Object.assign((id: string, opts: object, context: JitiContext, normalized?: boolean) => {
      jitiContext ??= context;
      return internal(id, opts, context, normalized);
    }, internal);
    if (mode === "report") process.stderr.write(`pi: jiti code cache ${status}\n`);
  }
  return (require(entry) as typeof import("jiti")).createJiti;
}

/**
 * The file `require("jiti")` loads, found as Node finds it (the first node_modules
 * folder up from here that holds jiti, then its package.json's `exports["."].require`)
 * but without Node's package-exports resolver, whose loading alone cost ~2 ms of CPU.
 * Anything unexpected in that package.json is left to require.resolve.
 */
function jitiEntry(require: NodeJS.Require): string {
  for (const dir of require.resolve.paths("jiti") ?? []) {
    const pkgFile = join(dir, "jiti", "package.json");
    if (!existsSync(pkgFile)) continue;
    const pkg = JSON.parse(readFileSync(pkgFile, "utf8")) as { exports?: { ".": { require?: { default?: unknown } } } };
    const target = pkg.exports?.["."]?.require?.default;
    // The real path, as require() keys its cache: jiti's entry then finds the module registered below.
    if (typeof target === "string" && target.startsWith("./")) return realpathSync(join(dir, "jiti", target));
    break;
  }
  return require.resolve("jiti");
}

/**
 * Node built-ins jiti requires at its top but uses only on paths a start seldom takes:
 * fs/promises (to unlink a temporary ESM file), v8 and assert (to build a resolution
 * error). fs/promises alone is a dozen of node's internal modules (readline among them).
 */
const LAZY_BUILTINS = new Set(["node:fs/promises", "node:v8", "node:assert"]);

/**
 * Members jiti uses that can answer without loading their module, the rest of which loads
 * on first use. Both are used while jiti builds its resolution errors (for each miss as it
 * looks for `./x.js` before it tries `./x.ts`, pi's examples' style): loading v8 and assert
 * for them cost ~1.5 ms of CPU.
 * - v8 `startupSnapshot.isBuildingSnapshot()`: a worker never builds a startup snapshot
 *   (it runs as a script, never under `node --build-snapshot`).
 * - assert `ok(value, message)`: a value that holds needs nothing; one that does not goes to
 *   the real `assert.ok`, which throws its own AssertionError.
 */
function answered(id: string, real: () => Record<PropertyKey, unknown>): Record<PropertyKey, unknown> {
  if (id === "node:v8") {
    const snapshot = new Proxy(
      {},
      {
        get: (_, key) =>
          key === "isBuildingSnapshot" ? () => false : (real().startupSnapshot as Record<PropertyKey, unknown>)[key],
      },
    );
    return { startupSnapshot: snapshot };
  }
  if (id === "node:assert") {
    return {
      ok: (value: unknown, message?: string): void => {
        if (!value) (real().ok as (v: unknown, m?: string) => void)(value, message);
      },
    };
  }
  return {};
}

/** The built-ins jiti gets in a form that notes what it reads and compiles, for the module cache (jiti-record.ts). */
const RECORDING_BUILTINS: Record<string, () => unknown> = {
  "node:fs": recordingFs,
  fs: recordingFs,
  "node:vm": recordingVm,
};

/**
 * jiti's `require`, with the built-ins above as objects that load the real module on first
 * use, and `fs` and `vm` as jiti-record.ts's.
 */
export function withLazyBuiltins(real: NodeJS.Require): NodeJS.Require {
  const lazy = (id: string): object => {
    let mod: Record<PropertyKey, unknown> | undefined;
    const load = () => (mod ??= real(id) as Record<PropertyKey, unknown>);
    const own = answered(id, load);
    return new Proxy(
      {},
      { get: (_, key) => (key in own ? own[key] : load()[key]), has: (_, key) => key in own || key in load() },
    );
  };
  return Object.assign(
    (id: string) => RECORDING_BUILTINS[id]?.() ?? (LAZY_BUILTINS.has(id) ? lazy(id) : real(id)),
    real,
  );
}
