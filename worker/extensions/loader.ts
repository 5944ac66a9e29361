/**
 * Loads extensions: finds the files, imports each with jiti (TypeScript without a
 * build step) and calls its default export with the API. A module that fails to
 * load is reported and left out; the worker goes on.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { ExtensionUi, ExtensionHooks } from "./hooks.js";
import { NO_EXTENSIONS } from "./hooks.js";
import { ExtensionRegistry, createExtensionApi, type ContextSource } from "./api.js";
import { discoverExtensions } from "./discover.js";
import { ExtensionRunner, type ExtensionErrorEvent } from "./runner.js";

/** What `loadExtensions` needs from the worker. */
export interface LoadExtensionsOptions {
  /** `--extension` paths (files or folders with an index), relative to `cwd`. */
  paths: string[];
  /** `$PI_ORCH_HOME`; its `extensions/` folder is always searched. */
  home: string;
  cwd: string;
  /** Whether the project's `.pi/extensions/` may run (`--trust` or a recorded decision). */
  trusted: boolean;
  /** The mode's UI, read when a handler runs (the RPC mode creates it after loading). */
  ui: () => ExtensionUi;
  /** Receives `extension_error` events. */
  emit: (event: ExtensionErrorEvent) => void;
  runtime: {
    cwd: string;
    sessionFile?: () => string | undefined;
    sendUserMessage?: (text: string) => Promise<void>;
  };
}

/**
 * Load every extension of this worker start, in order. jiti is imported only when
 * there is something to load (it costs start-up time). Load failures are reported
 * through `emit` when the runtime calls `sessionStart`, once a mode is listening.
 */
export async function loadExtensions(opts: LoadExtensionsOptions): Promise<ExtensionHooks> {
  const found = discoverExtensions(opts);
  if (found.load.length === 0) {
    return found.skipped.length === 0 ? NO_EXTENSIONS : { ...NO_EXTENSIONS, skipped: () => [...found.skipped] };
  }
  const registry = new ExtensionRegistry();
  const context: ContextSource = {
    cwd: opts.runtime.cwd,
    ui: opts.ui,
    sessionFile: opts.runtime.sessionFile ?? (() => undefined),
    sendUserMessage: opts.runtime.sendUserMessage,
  };
  // Created on first use; if it cannot be (jiti missing), every extension reports why.
  let importer: Promise<(path: string) => Promise<unknown>> | undefined;
  const loadErrors: ExtensionErrorEvent[] = [];
  for (const path of found.load) {
    try {
      if (!existsSync(path)) throw new Error("no such file; check the --extension path");
      importer ??= createImporter();
      const factory = await (await importer)(path);
      if (typeof factory !== "function") {
        throw new TypeError(`the module must default-export a function (pi) => void, but its default export is ${describe(factory)}`);
      }
      await factory(createExtensionApi(path, registry, context));
    } catch (err) {
      registry.remove(path);
      loadErrors.push({ type: "extension_error", extensionPath: path, event: "load", error: err instanceof Error ? err.message : String(err) });
    }
  }
  return new ExtensionRunner({ registry, context, emit: opts.emit, loadErrors, skipped: found.skipped });
}

/** A jiti importer that resolves `typebox` to the worker's own copy, so an extension anywhere can import it. */
async function createImporter(): Promise<(path: string) => Promise<unknown>> {
  const { createJiti } = await import("jiti");
  const jiti = createJiti(import.meta.url, { alias: typeboxAliases() });
  return (path) => jiti.import(path, { default: true });
}

/** `typebox` and each of its subpath exports, mapped to files of the installed package. */
function typeboxAliases(): Record<string, string> {
  let dir = dirname(createRequire(import.meta.url).resolve("typebox"));
  while (!existsSync(join(dir, "package.json")) && dirname(dir) !== dir) dir = dirname(dir);
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
    exports?: Record<string, { import?: string; default?: string } | string>;
  };
  const aliases: Record<string, string> = {};
  for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
    const file = typeof target === "string" ? target : (target.import ?? target.default);
    if (file) aliases[`typebox${subpath.slice(1)}`] = join(dir, file);
  }
  return aliases;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "object") return `an object with ${Object.keys(value).length ? `the keys ${Object.keys(value).join(", ")}` : "no keys"}`;
  return typeof value;
}
