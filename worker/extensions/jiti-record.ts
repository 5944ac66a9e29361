/**
 * Watches jiti while it loads an extension, to fill the module cache (module-cache-file.ts):
 * the bytes it reads of each TypeScript file, the code it compiles from them, and how each
 * relative import of that code resolves, with the listing of the folder it resolved in,
 * taken at that moment. jiti gets these through the `require` we hand it (jiti-load.ts):
 * its `fs` with a `readFileSync` that notes what it read, its `vm` with a
 * `runInThisContext` that keeps the compiled Script (for its V8 code cache) and hands the
 * module an import function that notes the resolution before it imports.
 */
import fs, { realpathSync } from "node:fs";
import { dirname, basename, isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";
import { folderListing, type CachedGraph, type CachedModule } from "./module-cache-file.js";

/** The files the module cache holds: TypeScript, which jiti always transforms (never loads natively). */
export const CACHEABLE_FILE = /\.(c|m)?ts$/;

/** What jiti compiled for one file while recording. */
interface Compiled {
  source: string;
  code: string;
  script: vm.Script;
}

/** One import a module made through jiti: resolved to `filename`, in `folder` (whose real path is `real`) as it was listed then. */
interface Edge {
  filename: string;
  folder: string;
  listing: string;
  real: string;
}

let recording = false;
const reads = new Map<string, string>();
const compiled = new Map<string, Compiled>();
const edges = new Map<string, Map<string, Edge>>();

/** Start or stop noting what jiti does (only while extensions load: later imports are not cached). */
export function setRecording(on: boolean): void {
  recording = on;
}

/** Forget everything noted (once the graphs of this start were taken). */
export function clearRecording(): void {
  reads.clear();
  compiled.clear();
  edges.clear();
}

/** `real` with `key` replaced (its other members read through to it). */
function replacing<T extends object>(real: T, key: string, value: unknown): T {
  return Object.defineProperty(Object.create(real) as T, key, { value, enumerable: true });
}

/** The `fs` jiti gets: `readFileSync` notes the text of the TypeScript files it reads. */
export function recordingFs(): typeof fs {
  return replacing(fs, "readFileSync", (path: unknown, options?: unknown) => {
    const out = (fs.readFileSync as (p: unknown, o?: unknown) => unknown)(path, options);
    if (recording && typeof path === "string" && typeof out === "string" && CACHEABLE_FILE.test(path))
      reads.set(path, out);
    return out;
  });
}

/** The `vm` jiti gets: `runInThisContext` compiles as vm does, and notes a module's code while recording. */
export function recordingVm(): typeof vm {
  return replacing(
    vm,
    "runInThisContext",
    (code: string, options?: vm.RunningScriptOptions & { filename?: string }) => {
      const filename = options?.filename;
      const source = filename === undefined ? undefined : reads.get(filename);
      // Node's own vm.runInThisContext, in two steps, to keep the Script for its code cache.
      const script = new vm.Script(code, options);
      const fn = script.runInThisContext(options) as unknown;
      if (!recording || filename === undefined || source === undefined || typeof fn !== "function") return fn;
      if (
        !code.startsWith(
          "(async function (exports, require, module, __filename, __dirname, jitiImport, jitiESMResolve) {",
        )
      )
        return fn;
      if (code.includes("__JITI_ERROR__")) return fn;
      compiled.set(filename, { source, code, script });
      const run = fn as (...args: unknown[]) => unknown;
      return function (this: unknown, ...args: unknown[]) {
        const [exp, req, mod, file, dir, jitiImport, jitiESMResolve] = args;
        return run.call(
          this,
          exp,
          req,
          mod,
          file,
          dir,
          notingImport(filename, jitiImport as JitiImport, jitiESMResolve as (id: string) => unknown),
          jitiESMResolve,
        );
      };
    },
  );
}

type JitiImport = (id: string, opts?: unknown) => Promise<unknown>;

/**
 * jiti's import for the module `importer`, noting where a relative or absolute specifier
 * resolves (jiti's own esmResolve, the resolution its import does) and the folder it was
 * found in, before importing; the edge is kept once the import has loaded a module jiti
 * compiled from that very file.
 */
function notingImport(importer: string, jitiImport: JitiImport, esmResolve: (id: string) => unknown): JitiImport {
  return (id, opts) => {
    let edge: Edge | undefined;
    if (recording && opts === undefined && (id.startsWith("./") || id.startsWith("../") || isAbsolute(id)))
      edge = resolvedEdge(importer, id, esmResolve);
    const loaded = jitiImport(id, opts);
    if (edge !== undefined) {
      const found = edge;
      loaded.then(
        () => {
          if (!compiled.has(found.filename)) return;
          let of = edges.get(importer);
          if (!of) edges.set(importer, (of = new Map()));
          of.set(id, found);
        },
        () => undefined,
      );
    }
    return loaded;
  };
}

/**
 * Where `id` resolves from `importer`, when the module cache can check that resolution at a
 * later start from one folder listing and its real path: a TypeScript file, a plain file
 * (no link) in the folder of the path the specifier names (jiti gives its real path: the
 * folder may be reached through a link), and no folder there of the name the specifier
 * ends in (whose index or package.json would be looked at too).
 */
function resolvedEdge(importer: string, id: string, esmResolve: (id: string) => unknown): Edge | undefined {
  let resolved: unknown;
  try {
    resolved = esmResolve(id);
  } catch {
    return undefined;
  }
  if (typeof resolved !== "string") return undefined;
  const filename = resolved.startsWith("file://") ? fileURLToPath(resolved) : resolved;
  const named = resolve(dirname(importer), id);
  const folder = dirname(named);
  if (!CACHEABLE_FILE.test(filename) || /node_modules\/(typescript|jiti)\//.test(filename)) return undefined;
  let real: string;
  try {
    real = realpathSync.native(folder);
  } catch {
    return undefined;
  }
  if (dirname(filename) !== real) return undefined;
  const listing = folderListing(folder);
  if (listing === undefined) return undefined;
  const names = listing.split("/");
  if (!names.includes(`f${basename(filename)}`) || names.includes(`d${basename(named)}`)) return undefined;
  return { filename, folder, listing, real };
}

/** What a cache file is made of, taken from what was noted: the Scripts give their code caches now. */
export interface RecordedGraph {
  /** The graph with its code caches; undefined when a folder was listed twice with different entries (it changed while loading). */
  graph: () => CachedGraph | undefined;
}

/**
 * The module graph of the extension whose entry is `entry`, from what was noted while it
 * loaded: the entry and every module reached through noted imports. Undefined when jiti did
 * not compile the entry itself (a JavaScript file, a link, a resolution to another path).
 */
export function recordedGraph(entry: string): RecordedGraph | undefined {
  if (!CACHEABLE_FILE.test(entry) || !compiled.has(entry)) return undefined;
  const order: string[] = [entry];
  for (let i = 0; i < order.length; i++) {
    for (const edge of edges.get(order[i]!)?.values() ?? [])
      if (!order.includes(edge.filename)) order.push(edge.filename);
  }
  const taken = order.map((filename) => ({
    filename,
    ...compiled.get(filename)!,
    imports: [...(edges.get(filename) ?? new Map<string, Edge>())],
  }));
  return {
    graph: () => {
      const folders = new Map<string, [string, string]>();
      for (const m of taken) {
        for (const [, e] of m.imports) {
          const seen = folders.get(e.folder);
          if (seen && (seen[0] !== e.listing || seen[1] !== e.real)) return undefined;
          folders.set(e.folder, [e.listing, e.real]);
        }
      }
      const modules: CachedModule[] = taken.map((m) => {
        return {
          filename: m.filename,
          source: Buffer.from(m.source, "utf8"),
          code: m.code,
          cache: m.script.createCachedData(),
          imports: m.imports.map(([id, e]) => [id, e.filename]),
        };
      });
      return { entry, modules, folders: [...folders].map(([dir, [listing, real]]) => [dir, listing, real]) };
    },
  };
}
