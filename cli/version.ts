/**
 * The version both programs report with `--version`: the one in this package's
 * `package.json`, written into the bundles by the build, or found by walking up from
 * the running file when it runs from source.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Set by the build (esbuild's define); absent when the TypeScript runs from source. */
declare const __PI_ORCH_VERSION__: string | undefined;

/** `pi-orch`'s version, e.g. `0.1.0`. */
export function packageVersion(from?: string): string {
  // Every start asks (commander's --version): the bundles skip the walk and the read.
  if (from === undefined && typeof __PI_ORCH_VERSION__ === "string") return __PI_ORCH_VERSION__;
  return findVersion(from ?? fileURLToPath(import.meta.url));
}

function findVersion(from: string): string {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest)) {
      const parsed = JSON.parse(readFileSync(manifest, "utf8")) as { name?: string; version?: string };
      if (parsed.name === "pi-orch" && parsed.version) return parsed.version;
    }
    if (dirname(dir) === dir) return "unknown";
  }
}
