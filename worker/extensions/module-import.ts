/**
 * Imports the extensions of one start: from the module cache in the user's cache folder
 * (`<cache>/pi-extension-*.cache`) when it holds for the extension (cached-import.ts), else
 * with jiti, noting what jiti does (jiti-record.ts) so that a second after the extensions
 * loaded (or at exit) a cache file is written for the next start. jiti itself, ~15 ms of a
 * start's CPU with its code cache, then loads only for an extension the cache cannot serve.
 * `PI_ORCH_EXTENSION_CACHE=off` loads every extension with jiti and writes nothing.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Script } from "node:vm";
import type { Jiti } from "jiti";
import { nodeFlagsCacheKey, userCacheDir, userCacheFile, writeKeyedCache } from "../../shared/code-cache.js";
import { jitiCacheOptions } from "../../shared/jiti-cache.js";
import { importCached, verifiedGraph } from "./cached-import.js";
import { loadJiti } from "./jiti-load.js";
import { clearRecording, recordedGraph, setRecording, type RecordedGraph } from "./jiti-record.js";
import { checksum } from "../../shared/checksum.js";
import { encodeGraph, type CachedGraph } from "./module-cache-file.js";

/** How long after the extensions loaded their cache files are written: past the first answers. */
const SAVE_AFTER_MS = 1_000;

/** Imports extension modules; `done` once all of them are loaded. */
export interface ExtensionImporter {
  /** The module's default export, as `jiti.import(path, { default: true })` gives it. */
  import(path: string): Promise<unknown>;
  /** Every extension is loaded: stop noting what jiti does, and write the cache files later. */
  done(): void;
}

/** An importer whose modules resolve pi's module names to `virtualModules`. */
export function createExtensionImporter(virtualModules: Record<string, unknown>): ExtensionImporter {
  let top: Jiti | undefined;
  const jiti = (): Jiti => {
    // As upstream pi loads extensions: no module cache, each extension's imports its own.
    // Its transform cache in the user's private cache folder, not jiti's /tmp/jiti (shared/jiti-cache.ts).
    top ??= loadJiti()(import.meta.url, { virtualModules, moduleCache: false, ...jitiCacheOptions() });
    return top;
  };
  const key = cacheKey(virtualModules);
  // The key's hash once: each extension's file is named after its path and it.
  const keyHash = key === undefined ? "" : checksum(Buffer.from(key, "utf8"));
  const dir = userCacheDir();
  const report = process.env.PI_ORCH_CODE_CACHE === "report";
  const recorded: { file: string; graph: RecordedGraph }[] = [];
  const refreshed: { file: string; graph: CachedGraph; scripts: Map<string, Script> }[] = [];
  return {
    async import(path) {
      const file = key === undefined ? undefined : userCacheFile(dir, "pi-extension", `${path} ${keyHash}`);
      const graph = file === undefined ? undefined : verifiedGraph(file, key!, path);
      if (report && file !== undefined)
        process.stderr.write(`pi: extension module cache ${graph ? "hit" : "miss"} for ${path}\n`);
      if (graph !== undefined) {
        const scripts = new Map<string, Script>();
        const mod = await importCached({ graph, virtualModules, top: jiti, scripts });
        refreshed.push({ file: file!, graph, scripts });
        return mod;
      }
      setRecording(file !== undefined);
      try {
        const mod = await jiti().import(path, { default: true });
        const taken = file === undefined ? undefined : recordedGraph(path);
        if (taken) recorded.push({ file: file!, graph: taken });
        return mod;
      } finally {
        setRecording(false);
      }
    },
    done() {
      // A code cache V8 did not take (another V8 build under the same flags) is made again.
      const stale = refreshed.filter((r) => [...r.scripts.values()].some((s) => s.cachedDataRejected === true));
      if (recorded.length === 0 && stale.length === 0) return clearRecording();
      let saved = false;
      const save = (): void => {
        if (saved) return;
        saved = true;
        for (const r of recorded) write(r.file, key!, r.graph.graph(), report);
        for (const r of stale) {
          const graph = {
            ...r.graph,
            modules: r.graph.modules.map((m) => ({
              ...m,
              cache: r.scripts.get(m.filename)?.createCachedData() ?? m.cache,
            })),
          };
          write(r.file, key!, graph, report);
        }
        clearRecording();
      };
      setTimeout(save, SAVE_AFTER_MS).unref();
      process.once("exit", save);
    },
  };
}

function write(file: string, key: string, graph: CachedGraph | undefined, report: boolean): void {
  if (graph === undefined) return;
  const err = writeKeyedCache(file, key, () => encodeGraph(graph));
  if (err) process.stderr.write(`pi: could not write the extension module cache ${file}: ${err.message}\n`);
  else if (report) process.stderr.write(`pi: extension module cache written to ${file}\n`);
}

/**
 * What a cache file must have been made under: this format, the jiti that transformed the
 * code (its version), the module names served by us (a name added to them changes what an
 * import means), and the node and its flags (V8's code cache). Undefined when the cache is
 * off: `PI_ORCH_EXTENSION_CACHE=off`, a `JITI_*` variable that changes how jiti transforms
 * or resolves, or no jiti to be found.
 */
function cacheKey(virtualModules: Record<string, unknown>): string | undefined {
  if (process.env.PI_ORCH_EXTENSION_CACHE === "off") return undefined;
  if (Object.keys(process.env).some((k) => k.startsWith("JITI_"))) return undefined;
  const version = jitiVersion();
  if (version === undefined) return undefined;
  const names = checksum(Buffer.from(Object.keys(virtualModules).sort().join("\n"), "utf8"));
  return `pi-extension-modules 1 jiti=${version} modules=${names} ${nodeFlagsCacheKey()}`;
}

/**
 * The version of the jiti `require("jiti")` loads from here: the package.json of the first
 * `node_modules/jiti` up from this file's folder, as node looks (without createRequire and
 * its resolver, ~1 ms of a start). A folder without one is passed over by existsSync, which
 * throws nothing: the error a failed read makes cost a start with extensions ~1 ms of CPU
 * (two folders, dist/cli's and dist's, before the package's).
 */
function jitiVersion(): string | undefined {
  for (let dir = import.meta.dirname; ; dir = dirname(dir)) {
    const file = join(dir, "node_modules", "jiti", "package.json");
    let text: string | undefined;
    try {
      if (existsSync(file)) text = readFileSync(file, "utf8");
    } catch {
      // Unreadable: as if it were not there, the next one up.
    }
    if (text !== undefined) {
      try {
        const version = (JSON.parse(text) as { version?: unknown }).version;
        return typeof version === "string" ? version : undefined;
      } catch {
        return undefined;
      }
    }
    if (dirname(dir) === dir) return undefined;
  }
}
