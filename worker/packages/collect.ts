/**
 * The resources of one package folder, as pi 1.6.0 selects them (docs/packages.md): the
 * `pi` manifest's `extensions` / `skills` / `prompts` / `themes` lists (paths and globs,
 * with `!`, `+`, `-` filters) when it has any, else the conventional folders of those
 * names; then the settings entry's own filters narrow that. Reads the folder; no writes.
 */
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { globRegExp } from "../tools/file-walk.js";
import { applyDeltaPatterns, applyPatterns, isOverride } from "./patterns.js";

/** pi's resource kinds, in its order. */
export const RESOURCE_TYPES = ["extensions", "skills", "prompts", "themes"] as const;
/** One resource kind. */
export type ResourceType = (typeof RESOURCE_TYPES)[number];

/** A settings entry's filters: a kind absent loads all, `[]` none, patterns narrow. */
export interface PackageFilter {
  extensions?: string[];
  skills?: string[];
  prompts?: string[];
  themes?: string[];
  /** `false` on a project entry: a delta over the user's entry for the same package. */
  autoload?: boolean;
}

/** Files by kind, each with whether it loads. */
export type CollectedResources = Record<ResourceType, Map<string, boolean>>;

/** An empty collection. */
export function emptyCollection(): CollectedResources {
  return { extensions: new Map(), skills: new Map(), prompts: new Map(), themes: new Map() };
}

/**
 * Add the package's files to `into` (a file already there keeps its first state). False
 * when the folder is no package (no manifest resources, no conventional folder, no filter):
 * pi then loads the folder as one extension.
 */
export function collectPackage(root: string, into: CollectedResources, filter?: PackageFilter): boolean {
  const manifest = readManifest(root);
  const add = (type: ResourceType, file: string, enabled: boolean) => {
    if (!into[type].has(file)) into[type].set(file, enabled);
  };
  if (filter) {
    for (const type of RESOURCE_TYPES) {
      const patterns = filter[type];
      const entries = manifest?.[type];
      // pi: a filtered kind falls back to its folder when the manifest lists nothing for it.
      const all =
        entries && (patterns === undefined || entries.length > 0)
          ? manifestEntryFiles(root, entries, type)
          : conventionFiles(root, type);
      if (filter.autoload === false) {
        if (patterns && patterns.length > 0)
          for (const [file, on] of applyDeltaPatterns(all, patterns, root)) add(type, file, on);
      } else if (patterns !== undefined) {
        const enabled = patterns.length === 0 ? new Set<string>() : applyPatterns(all, patterns, root);
        for (const file of all) add(type, file, enabled.has(file));
      } else {
        for (const file of all) add(type, file, true);
      }
    }
    return true;
  }
  const listed = manifest && RESOURCE_TYPES.some((t) => manifest[t] !== undefined);
  const present = RESOURCE_TYPES.filter((t) => existsSync(join(root, t)));
  if (!listed && present.length === 0) return false;
  for (const type of RESOURCE_TYPES) {
    // A manifest that lists resources is the whole list: a kind it leaves out loads nothing.
    const files = listed ? manifestEntryFiles(root, manifest?.[type] ?? [], type) : conventionFiles(root, type);
    for (const file of files) add(type, file, true);
  }
  return true;
}

type Manifest = Partial<Record<ResourceType, string[]>>;

/** The `pi` object of a package.json, its lists' strings only; undefined without one. */
function readManifest(root: string): Manifest | undefined {
  try {
    const pi = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { pi?: unknown }).pi;
    if (typeof pi !== "object" || pi === null) return undefined;
    const out: Manifest = {};
    for (const type of RESOURCE_TYPES) {
      const list = (pi as Record<string, unknown>)[type];
      if (Array.isArray(list)) out[type] = list.filter((e): e is string => typeof e === "string");
    }
    return out;
  } catch {
    return undefined;
  }
}

/** The files a manifest's entries name (paths and globs), narrowed by its own `!`, `+`, `-` entries. */
function manifestEntryFiles(root: string, entries: readonly string[], type: ResourceType): string[] {
  const paths = entries
    .filter((e) => !isOverride(e))
    .flatMap((e) => (hasGlob(e) ? expandGlob(e, root) : [resolve(root, e)]));
  const files = filesAt(paths, type);
  const filters = entries.filter(isOverride);
  return filters.length > 0 ? [...applyPatterns(files, filters, root)] : files;
}

/** The files of a kind's conventional folder (`extensions/`, `skills/`, ...). */
function conventionFiles(root: string, type: ResourceType): string[] {
  const folder = join(root, type);
  return existsSync(folder) ? filesIn(folder, type) : [];
}

/** Files of a kind at paths that exist: a file as it is, a folder searched. */
export function filesAt(paths: readonly string[], type: ResourceType): string[] {
  return paths.flatMap((p) => {
    try {
      const stat = statSync(p);
      if (stat.isFile()) return [p];
      return stat.isDirectory() ? filesIn(p, type) : [];
    } catch {
      return [];
    }
  });
}

function hasGlob(entry: string): boolean {
  return entry.includes("*") || entry.includes("?");
}

/** The visible files and folders under `root` a manifest glob names, sorted (dot names are never matched). */
function expandGlob(pattern: string, root: string): string[] {
  const clean = pattern.startsWith("./") ? pattern.slice(2) : pattern;
  const parts = clean.split("/");
  const fixed = parts.slice(0, parts.findIndex(hasGlob)).join("/");
  const re = globRegExp(clean);
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of safeEntries(dir)) {
      if (entry.name.startsWith(".")) continue;
      const path = join(dir, entry.name);
      const rel = relative(root, path).split(sep).join("/");
      if (re.test(rel)) found.push(path);
      if (isFolder(path, entry)) walk(path);
    }
  };
  walk(resolve(root, fixed));
  return found.sort();
}

/** A folder's files of one kind, as pi discovers them in a package's conventional folders. */
function filesIn(dir: string, type: ResourceType): string[] {
  if (type === "extensions") return extensionEntries(dir);
  if (type === "skills") return skillFiles(dir, dir);
  return matchingFiles(dir, type === "prompts" ? /\.md$/ : /\.json$/);
}

/** A folder's own entries (`pi.extensions` of its package.json, else index.ts / index.js), or its `.ts`/`.js` files and subfolders' entries. */
function extensionEntries(dir: string): string[] {
  const own = folderEntries(dir);
  if (own) return own;
  const found: string[] = [];
  for (const entry of safeEntries(dir)) {
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    const path = join(dir, entry.name);
    if (isFolder(path, entry)) found.push(...(folderEntries(path) ?? []));
    else if (/\.(ts|js)$/.test(entry.name)) found.push(path);
  }
  return found;
}

function folderEntries(dir: string): string[] | undefined {
  const listed = readManifest(dir)
    ?.extensions?.map((e) => resolve(dir, e))
    .filter((p) => existsSync(p));
  if (listed && listed.length > 0) return listed;
  for (const index of ["index.ts", "index.js"]) if (existsSync(join(dir, index))) return [join(dir, index)];
  return undefined;
}

/** A folder with a SKILL.md is that skill; otherwise the `.md` files at the top and the skills of subfolders. */
function skillFiles(dir: string, root: string): string[] {
  const entries = safeEntries(dir);
  if (entries.some((e) => e.name === "SKILL.md")) return [join(dir, "SKILL.md")];
  const found: string[] = [];
  for (const entry of entries) {
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    const path = join(dir, entry.name);
    if (isFolder(path, entry)) found.push(...skillFiles(path, root));
    else if (dir === root && entry.name.endsWith(".md")) found.push(path);
  }
  return found;
}

function matchingFiles(dir: string, name: RegExp): string[] {
  const found: string[] = [];
  for (const entry of safeEntries(dir)) {
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    const path = join(dir, entry.name);
    if (isFolder(path, entry)) found.push(...matchingFiles(path, name));
    else if (name.test(entry.name)) found.push(path);
  }
  return found;
}

type Entry = { name: string; isDirectory(): boolean; isSymbolicLink(): boolean };

function safeEntries(dir: string): Entry[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch {
    return [];
  }
}

function isFolder(path: string, entry: Entry): boolean {
  if (!entry.isSymbolicLink()) return entry.isDirectory();
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
