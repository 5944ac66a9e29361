/**
 * The second half of loading extensions (worker/extensions/loader.ts), for a start that has
 * some: binds the built-ins and imports each found file with jiti, calling its default export
 * with the API; a module that fails to load is reported and left out.
 */
import { existsSync } from "node:fs";
import { ExtensionRegistry, createExtensionApi } from "./api.js";
import type { discoverExtensions } from "./discover.js";
import { createEventBus } from "./event-bus.js";
import type { ExtensionHooks } from "./hooks.js";
import type { ExtensionHost } from "./host.js";
import type { BuiltinExtension, LoadExtensionsOptions } from "./loader.js";
import { createExtensionImporter, type ExtensionImporter } from "./module-import.js";
import { ExtensionRunner, type ExtensionErrorEvent } from "./runner.js";

/** Load `builtins` and the files `found` lists, in order; the runner, with `packaged`'s resources. */
export async function loadFoundExtensions(
  opts: LoadExtensionsOptions,
  found: ReturnType<typeof discoverExtensions>,
  builtins: BuiltinExtension[],
  packaged: ReturnType<typeof discoverExtensions>["resources"],
): Promise<ExtensionHooks> {
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
