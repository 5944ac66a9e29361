/**
 * Runs an extension from its module cache (module-cache-file.ts) without loading jiti:
 * each module's cached code compiled with its V8 code cache and run exactly as jiti's
 * evalModule runs it (a `Module` of that file, the same async CommonJS wrapper and
 * arguments, the import's shared module cache), its noted relative imports served from the
 * cache, pi's module names from our virtual modules and node's built-ins from node's own
 * import() (as jiti does, with jiti's interop).
 * Everything else a module asks for (`require`, `import.meta.resolve`, a package, JSON,
 * an import the cache did not note) goes to the very jiti jiti would have given that module,
 * made on first use (jiti-load.ts's jitiChild), so it behaves as before, only later.
 */
import { closeSync, constants, openSync, readFileSync, realpathSync } from "node:fs";
import Module from "node:module";
import { dirname } from "node:path";
import { Script } from "node:vm";
import type { Jiti } from "jiti";
import { jitiChild } from "./jiti-load.js";
import { jitiInteropDefault } from "./jiti-interop.js";
import { nativeImport } from "./native-import.js";
import { decodeGraph, folderListing, type CachedGraph } from "./module-cache-file.js";
import { readKeyedCache } from "../../shared/code-cache.js";

/**
 * The graph cached in `file` for the extension `entry` under `key`, when every file still has
 * the bytes it had and every folder an import resolved in still lists the same entries;
 * else undefined (no file, another key, not whole, or something changed).
 */
export function verifiedGraph(file: string, key: string, entry: string): CachedGraph | undefined {
  const found = readKeyedCache(file);
  if (typeof found === "string" || found.key !== key) return undefined;
  const graph = decodeGraph(found.data);
  if (graph === undefined || graph.entry !== entry || graph.modules[0]?.filename !== entry) return undefined;
  try {
    // The entry opened without following a link (a link's target may change while its folder
    // lists the same: jiti then loads another file), and read: one open for both checks.
    const fd = openSync(entry, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      if (!readFileSync(fd).equals(graph.modules[0]!.source)) return undefined;
    } finally {
      closeSync(fd);
    }
    for (const m of graph.modules.slice(1)) if (!readFileSync(m.filename).equals(m.source)) return undefined;
  } catch {
    return undefined;
  }
  for (const [dir, listing, real] of graph.folders) {
    if (folderListing(dir) !== listing) return undefined;
    try {
      if (realpathSync.native(dir) !== real) return undefined;
    } catch {
      return undefined;
    }
  }
  return graph;
}

/** What running one cached extension needs and leaves. */
export interface CachedRun {
  graph: CachedGraph;
  /** The module names resolved to our modules (loader's virtualModules). */
  virtualModules: Record<string, unknown>;
  /** The top jiti of the importer, made on first use: the options of the jitis made for modules. */
  top: () => Jiti;
  /** The Scripts compiled, by file, with whether V8 took their code cache. */
  scripts: Map<string, Script>;
}

type JitiImport = (id: string, opts?: { default?: boolean }) => Promise<unknown>;

/** The extension's default export (what `jiti.import(entry, { default: true })` gives). */
export async function importCached(run: CachedRun): Promise<unknown> {
  const modules = new Map(run.graph.modules.map((m) => [m.filename, m]));
  const cache: Record<string, Module> = {};

  const evaluate = (filename: string, parent: Module | undefined): Promise<unknown> => {
    const cached = modules.get(filename)!;
    const mod = new Module(filename);
    mod.filename = filename;
    if (parent) {
      (mod as { parent?: Module }).parent = parent;
      if (Array.isArray(parent.children) && !parent.children.includes(mod)) parent.children.push(mod);
    }
    let jiti: Jiti | undefined;
    const own = (): Jiti => {
      jiti ??= jitiChild(run.top(), filename, mod, cache);
      if (jiti === undefined) throw new Error(`jiti could not be loaded for ${filename}; run npm install`);
      return jiti;
    };
    // jiti's require for this module, made when first used.
    const require = new Proxy((() => undefined) as unknown as Jiti, {
      apply: (_t, thisArg, args) => Reflect.apply(own(), thisArg, args),
      get: (_t, key) => Reflect.get(own(), key),
      has: (_t, key) => Reflect.has(own(), key),
      set: (_t, key, value) => Reflect.set(own(), key, value),
    });
    const imports = new Map(cached.imports);
    const jitiImport: JitiImport = async (id, opts) => {
      const i = await load(id, opts);
      if (i === FROM_JITI) return own().import(id, opts as { default?: true });
      return opts?.default ? ((i as { default?: unknown } | null | undefined)?.default ?? i) : i;
    };
    // jiti's jitiRequire, in its order, for what the cache can answer.
    const load = (id: string, opts: unknown): unknown => {
      // Built-ins: jiti's nativeImportOrRequire for an import, node's import() and jiti's interop.
      // Module's own member, read now: a startup snapshot's copy of node:module's named exports predates it.
      if (id.startsWith("node:") || Module.builtinModules.includes(id))
        return nativeImport(id).then(jitiInteropDefault);
      if (id.startsWith("file:") || id.startsWith("data:") || id === ".pnp.js") return FROM_JITI;
      if (id in run.virtualModules) return Promise.resolve(jitiInteropDefault(run.virtualModules[id]));
      const target = opts === undefined ? imports.get(id) : undefined;
      if (target === undefined) return FROM_JITI;
      if (cache[target]) return jitiInteropDefault(cache[target]?.exports);
      return evaluate(target, mod);
    };
    const esmResolve = (id: string, opts?: unknown): unknown => own().esmResolve(id, opts as string);
    (mod as { require: unknown }).require = require;
    mod.path = dirname(filename);
    mod.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(mod.path);
    cache[filename] = mod;
    const script = new Script(cached.code, {
      filename,
      lineOffset: 0,
      cachedData: cached.cache.length > 0 ? cached.cache : undefined,
    });
    run.scripts.set(filename, script);
    const fn = script.runInThisContext({ displayErrors: false }) as (...args: unknown[]) => unknown;
    const ran = fn(mod.exports, require, mod, mod.filename, dirname(mod.filename), jitiImport, esmResolve);
    return Promise.resolve(ran).then(() => {
      mod.loaded = true;
      return jitiInteropDefault(mod.exports);
    });
  };

  const i = await evaluate(run.graph.entry, undefined);
  return (i as { default?: unknown } | null | undefined)?.default ?? i;
}

/** load's answer for what only jiti can do. */
const FROM_JITI = Symbol("from jiti");
