/**
 * Loads extensions: finds the files, imports each with jiti (TypeScript without a
 * build step) and calls its default export with the API. A module that fails to
 * load is reported and left out; the worker goes on.
 */
import { discoverExtensions } from "./discover.js";
import { NO_EXTENSIONS, type ExtensionHooks } from "./hooks.js";
import type { ExtensionErrorEvent } from "./runner.js";

/** What `loadExtensions` needs from the worker. */
export interface LoadExtensionsOptions {
  /** `--extension` paths (files, folders with an index or a `pi.extensions` package.json), relative to `cwd`. */
  paths: string[];
  /** The agent directory (see agentDir); its `extensions/` folder is searched unless `discover` is false. */
  home: string;
  /** `--no-extensions`: only the explicit paths load. */
  discover?: boolean;
  cwd: string;
  /** Whether the project's `.pi/extensions/` may run (`--trust` or a recorded decision). */
  trusted: boolean;
  /** Receives `extension_error` events. */
  emit: (event: ExtensionErrorEvent) => void;
  /** Extensions built into the worker (`builtin:mcp`), loaded before the others without jiti. */
  builtins?: BuiltinExtension[];
  /** Skills, prompt templates and themes of pi packages (see worker/packages/), reported with the extensions' own. */
  packaged?: { skillPaths: string[]; promptPaths: string[]; themePaths: string[] };
}

/** An extension that is part of the worker: its factory is called like a loaded module's. */
export interface BuiltinExtension {
  /** Its name as pi writes it (`builtin:mcp`): the path its registrations and errors carry. */
  path: string;
  factory: (pi: Record<string, unknown>) => void | Promise<void>;
  /** Load it even when no other extension loads (it has work of its own: a configured MCP server). */
  always: boolean;
}

/**
 * Load every extension of this worker start, in order. jiti is imported only when
 * there is something to load (it costs start-up time). Load failures are reported
 * through `emit` when the session calls `sessionStart`, once a mode is listening.
 * The extensions act on the session once it `bind`s the returned hooks.
 */
export async function loadExtensions(opts: LoadExtensionsOptions): Promise<ExtensionHooks> {
  const found = discoverExtensions(opts);
  // A built-in with nothing to do stays off the start-up path; other extensions may register its work.
  const builtins = (opts.builtins ?? []).filter((b) => b.always || found.load.length > 0);
  const packaged = found.resources;
  packaged.skillPaths.push(...(opts.packaged?.skillPaths ?? []));
  packaged.promptPaths.push(...(opts.packaged?.promptPaths ?? []));
  packaged.themePaths.push(...(opts.packaged?.themePaths ?? []));
  const hasPackaged = Object.values(packaged).some((list) => list.length > 0);
  if (found.load.length === 0 && builtins.length === 0) {
    if (found.skipped.length === 0 && !hasPackaged) return NO_EXTENSIONS;
    return {
      ...NO_EXTENSIONS,
      skipped: () => [...found.skipped],
      sessionStart: async () => ({
        skillPaths: [...packaged.skillPaths],
        promptPaths: [...packaged.promptPaths],
        themePaths: [...packaged.themePaths],
      }),
    };
  }
  // Imported here, not at the top: the registry, the API and the runner are a file of their
  // own in the worker's bundle, which a start without extensions never loads.
  const { loadFoundExtensions } = await import("./load-found.js");
  return loadFoundExtensions(opts, found, builtins, packaged);
}
