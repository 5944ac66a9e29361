/**
 * Where extensions come from, in load order: `--extension` paths (a file, a folder
 * with an index, or a package whose package.json lists `pi.extensions`), then
 * `<agent dir>/extensions/`, then the project's `.pi/extensions/` (only when
 * the project is trusted; otherwise they are listed as skipped and never imported).
 */
import { existsSync, readFileSync, readdirSync, realpathSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { projectRoot } from "./trust.js";

/** Extension files to load, and project extension files left out because the project is not trusted. */
export interface DiscoveredExtensions {
  load: string[];
  skipped: string[];
}

const MODULE_FILE = /\.(ts|js|mjs)$/;
const INDEX_FILES = ["index.ts", "index.js", "index.mjs"];

/** Find the extension files of a worker start. Paths that do not exist are kept, so loading reports them. */
export function discoverExtensions(opts: {
  paths: string[];
  home: string;
  cwd: string;
  trusted: boolean;
  discover?: boolean;
}): DiscoveredExtensions {
  const explicit = opts.paths.flatMap((p) => {
    const path = resolve(opts.cwd, p);
    return isDirectory(path) ? (entriesOf(path) ?? [path]) : [path];
  });
  const discover = opts.discover !== false;
  const global = discover ? extensionsIn(join(opts.home, "extensions")) : [];
  const project = discover ? extensionsIn(join(projectRoot(opts.cwd), ".pi", "extensions")) : [];

  const seen = new Set<string>();
  const unique = (paths: string[]) =>
    paths.filter((p) => {
      const key = canonical(p);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  const load = unique([...explicit, ...global]);
  return opts.trusted
    ? { load: [...load, ...unique(project)], skipped: [] }
    : { load, skipped: project.filter((p) => !seen.has(canonical(p))) };
}

/** `dir/*.{ts,js,mjs}` and `dir/<name>/index.{ts,js,mjs}`, sorted by name. */
function extensionsIn(dir: string): string[] {
  if (!isDirectory(dir)) return [];
  const found: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (isDirectory(path)) {
      found.push(...(entriesOf(path) ?? []));
    } else if (MODULE_FILE.test(name) && !name.endsWith(".d.ts")) {
      found.push(path);
    }
  }
  return found;
}

/** A folder's entry files: its package.json's `pi.extensions`, else its index; undefined when it has neither. */
function entriesOf(dir: string): string[] | undefined {
  const manifest = join(dir, "package.json");
  if (existsSync(manifest)) {
    try {
      const pi = (JSON.parse(readFileSync(manifest, "utf8")) as { pi?: { extensions?: unknown } }).pi;
      if (Array.isArray(pi?.extensions))
        return pi.extensions.filter((e): e is string => typeof e === "string").map((e) => resolve(dir, e));
    } catch {
      // An unreadable manifest: fall back to the index, and loading reports what is wrong.
    }
  }
  const index = indexOf(dir);
  return index ? [index] : undefined;
}

function indexOf(dir: string): string | undefined {
  return INDEX_FILES.map((f) => join(dir, f)).find((f) => existsSync(f));
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
