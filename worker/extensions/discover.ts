/**
 * Where extensions come from, in load order: `--extension` paths (a file, a folder
 * with an index, or a folder that is a pi package: see packageResources), then
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
  /** Skill and prompt template folders and files of `--extension` packages, loaded as extensions' resources are. */
  resources: { skillPaths: string[]; promptPaths: string[]; themePaths: string[] };
}

/** A package's resources by kind (pi's RESOURCE_TYPES). */
interface PackageResources {
  extensions: string[];
  skills: string[];
  prompts: string[];
  themes: string[];
}

const RESOURCE_TYPES = ["extensions", "skills", "prompts", "themes"] as const;

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
  const resources: DiscoveredExtensions["resources"] = { skillPaths: [], promptPaths: [], themePaths: [] };
  const explicit = opts.paths.flatMap((p) => {
    const path = resolve(opts.cwd, p);
    if (!isDirectory(path)) return [path];
    const pkg = packageResources(path);
    if (!pkg) return entriesOf(path) ?? [path];
    resources.skillPaths.push(...pkg.skills);
    resources.promptPaths.push(...pkg.prompts);
    resources.themePaths.push(...pkg.themes);
    return pkg.extensions;
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
    ? { load: [...load, ...unique(project)], skipped: [], resources }
    : { load, skipped: project.filter((p) => !seen.has(canonical(p))), resources };
}

/**
 * pi 1.6's rule for a folder given to `--extension` (docs/packages.md: "a directory follows
 * normal package discovery rules"): its package.json's `pi` manifest when that lists
 * resources, else its conventional `extensions/`, `skills/`, `prompts/` and `themes/`
 * folders; undefined when it has neither, and the folder is one extension (its index).
 * So a folder with an index.ts and a `prompts/` (pi's subagent example) is a package whose
 * index is not loaded. Manifest entries are paths (pi's globs are not expanded here).
 */
export function packageResources(dir: string): PackageResources | undefined {
  const manifest = piManifest(dir);
  if (manifest && RESOURCE_TYPES.some((t) => manifest[t] !== undefined)) {
    const listed = (t: (typeof RESOURCE_TYPES)[number]) =>
      (Array.isArray(manifest[t]) ? (manifest[t] as unknown[]) : [])
        .filter((e): e is string => typeof e === "string")
        .map((e) => resolve(dir, e));
    return {
      extensions: listed("extensions"),
      skills: listed("skills"),
      prompts: listed("prompts"),
      themes: listed("themes"),
    };
  }
  const present = RESOURCE_TYPES.filter((t) => isDirectory(join(dir, t)));
  if (present.length === 0) return undefined;
  const folder = (t: (typeof RESOURCE_TYPES)[number]) => (present.includes(t) ? [join(dir, t)] : []);
  const extensions = present.includes("extensions")
    ? (entriesOf(join(dir, "extensions")) ?? extensionsIn(join(dir, "extensions")))
    : [];
  return { extensions, skills: folder("skills"), prompts: folder("prompts"), themes: folder("themes") };
}

/** The `pi` object of a folder's package.json, or undefined (no file, not JSON, no object). */
function piManifest(dir: string): Record<string, unknown> | undefined {
  const file = join(dir, "package.json");
  if (!existsSync(file)) return undefined;
  try {
    const pi = (JSON.parse(readFileSync(file, "utf8")) as { pi?: unknown }).pi;
    return typeof pi === "object" && pi !== null ? (pi as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
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
    // The system's realpath: one call, where node's own lstat()s each folder of the path.
    return realpathSync.native(path);
  } catch {
    return path;
  }
}
