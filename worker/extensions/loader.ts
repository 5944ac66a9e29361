/**
 * Loads extensions: finds the files, imports each with jiti (TypeScript without a
 * build step) and calls its default export with the API. A module that fails to
 * load is reported and left out; the worker goes on.
 */
import { existsSync } from "node:fs";
import { ExtensionRegistry, createExtensionApi } from "./api.js";
import { discoverExtensions } from "./discover.js";
import { createEventBus } from "./event-bus.js";
import { NO_EXTENSIONS, type ExtensionHooks } from "./hooks.js";
import type { ExtensionHost } from "./host.js";
import { createExtensionImporter, type ExtensionImporter } from "./module-import.js";
import { ExtensionRunner, type ExtensionErrorEvent } from "./runner.js";

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
  const registry = new ExtensionRegistry();
  let runner: ExtensionRunner | undefined;
  const host = () => {
    if (!runner)
      throw new Error("the extension is not bound to a session yet: use the API from handlers, commands and tools");
    return runner.host();
  };
  const emitError = (path: string, event: string, error: string) =>
    opts.emit({ type: "extension_error", extensionPath: path, event, error });
  const events = createEventBus((channel, err) =>
    emitError("pi.events", channel, err instanceof Error ? err.message : String(err)),
  );
  // Created on first use; if it cannot be (jiti missing), every extension reports why.
  let importer: Promise<ExtensionImporter> | undefined;
  const loadErrors: ExtensionErrorEvent[] = [];
  const api = (path: string) =>
    createExtensionApi(path, {
      registry,
      host,
      events,
      onToolsChanged: () => runner?.toolsChanged(),
      onProvidersChanged: () => runner?.providersChanged(),
      onMcpServersChanged: () => runner?.mcpServersChanged(),
      reportError: emitError,
    });
  for (const builtin of builtins) {
    try {
      await builtin.factory(api(builtin.path));
    } catch (err) {
      registry.remove(builtin.path);
      loadErrors.push({
        type: "extension_error",
        extensionPath: builtin.path,
        event: "load",
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }
  for (const path of found.load) {
    try {
      if (!existsSync(path)) throw new Error("no such file; check the --extension path");
      importer ??= createImporter(host, opts.home);
      const factory = await (await importer).import(path);
      if (typeof factory !== "function") {
        throw new TypeError(
          `the module must default-export a function (pi) => void, but its default export is ${describe(factory)}`,
        );
      }
      await factory(api(path));
    } catch (err) {
      registry.remove(path);
      loadErrors.push({
        type: "extension_error",
        extensionPath: path,
        event: "load",
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }
  // An importer that could not be made has reported it through every extension.
  (await importer?.catch(() => undefined))?.done();
  runner = new ExtensionRunner({ registry, emit: opts.emit, loadErrors, skipped: found.skipped, packaged });
  return runner;
}

/** An importer that resolves pi's module names to the worker's own modules, so an extension anywhere can import them. */
async function createImporter(host: () => ExtensionHost, home: string): Promise<ExtensionImporter> {
  // Imported here, not at the top: pi's modules for extensions (and typebox's whole index)
  // are a file of their own in the worker's bundle, loaded by the first extension.
  const { extensionModules } = await import("./modules/index.js");
  return createExtensionImporter(await extensionModules(host, home));
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "object")
    return `an object with ${Object.keys(value).length ? `the keys ${Object.keys(value).join(", ")}` : "no keys"}`;
  return typeof value;
}
