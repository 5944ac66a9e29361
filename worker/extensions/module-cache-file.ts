/**
 * The file of one extension's module cache: what jiti made of the extension's TypeScript
 * files (the CommonJS code it ran), the V8 code cache of that code, the files' bytes as
 * jiti read them and how each relative import resolved, with the folder listings that
 * resolution depended on. A start whose files and folders still match runs the cached code
 * without loading jiti (cached-import.ts); any difference, or a file that is not whole
 * (cut short, a byte changed: its checksum), sends the extension through jiti as before.
 */
import { readdirSync } from "node:fs";
import { checksum } from "../../shared/checksum.js";

/** One module of an extension: a TypeScript file jiti transformed and ran. */
export interface CachedModule {
  filename: string;
  /** The file's bytes when jiti read it: the cache holds only while the file has exactly these. */
  source: Buffer;
  /** The wrapped code jiti compiled (its async CommonJS function). */
  code: string;
  /** V8's code cache for `code` (empty when there was none). */
  cache: Buffer;
  /** Its relative imports that jiti resolved to another module of the graph: [specifier, filename]. */
  imports: [string, string][];
}

/** An extension's module graph as cached: its entry file first. */
export interface CachedGraph {
  entry: string;
  modules: CachedModule[];
  /** Folders whose listing and real path an import's resolution depended on: [folder, listing (see folderListing), real path]. */
  folders: [string, string, string][];
}

/** What the meta line holds of a module: its blobs as [offset, length] into the data after it. */
interface ModuleMeta {
  filename: string;
  source: [number, number];
  code: [number, number];
  cache: [number, number];
  imports: [string, string][];
}

/**
 * The bytes after the key line: a checksum line, one JSON line of metadata, then the
 * modules' source, code and code cache, one after the other.
 */
export function encodeGraph(graph: CachedGraph): Buffer {
  const blobs: Buffer[] = [];
  let at = 0;
  const place = (b: Buffer): [number, number] => {
    blobs.push(b);
    at += b.length;
    return [at - b.length, b.length];
  };
  const modules: ModuleMeta[] = graph.modules.map((m) => ({
    filename: m.filename,
    source: place(m.source),
    code: place(Buffer.from(m.code, "utf8")),
    cache: place(m.cache),
    imports: m.imports,
  }));
  const meta = Buffer.from(`${JSON.stringify({ entry: graph.entry, modules, folders: graph.folders })}\n`, "utf8");
  const body = Buffer.concat([meta, ...blobs]);
  return Buffer.concat([Buffer.from(`${checksum(body)}\n`, "ascii"), body]);
}

/** The graph in `data` (what followed the key line), or undefined when it is not whole or not ours. */
export function decodeGraph(data: Buffer): CachedGraph | undefined {
  const nl = data.indexOf(10);
  if (nl < 0) return undefined;
  const body = data.subarray(nl + 1);
  if (data.toString("ascii", 0, nl) !== checksum(body)) return undefined;
  const metaEnd = body.indexOf(10);
  const blobs = body.subarray(metaEnd + 1);
  try {
    const meta = JSON.parse(body.toString("utf8", 0, metaEnd)) as {
      entry: string;
      modules: ModuleMeta[];
      folders: [string, string, string][];
    };
    const blob = ([off, len]: [number, number]) => {
      if (!(off >= 0 && len >= 0 && off + len <= blobs.length)) throw new RangeError("blob out of range");
      return blobs.subarray(off, off + len);
    };
    return {
      entry: meta.entry,
      folders: meta.folders,
      modules: meta.modules.map((m) => ({
        filename: m.filename,
        source: blob(m.source),
        code: blob(m.code).toString("utf8"),
        cache: blob(m.cache),
        imports: m.imports,
      })),
    };
  } catch {
    return undefined;
  }
}

/**
 * A folder's entries, sorted, each with its kind (f file, d folder, l symbolic link, o other):
 * where jiti looks for `./x.js`, `./x.ts`, `./x/index.ts`. Undefined when it cannot be read.
 */
export function folderListing(dir: string): string | undefined {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .map((e) => `${e.isFile() ? "f" : e.isDirectory() ? "d" : e.isSymbolicLink() ? "l" : "o"}${e.name}`)
      .sort()
      .join("/");
  } catch {
    return undefined;
  }
}
