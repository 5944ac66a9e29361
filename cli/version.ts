/**
 * The version both programs report with `--version`: the one in this package's
 * `package.json`, found by walking up from the running file (source or bundle).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** `pi-orch`'s version, e.g. `0.1.0`. */
export function packageVersion(from: string = fileURLToPath(import.meta.url)): string {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest)) {
      const parsed = JSON.parse(readFileSync(manifest, "utf8")) as { name?: string; version?: string };
      if (parsed.name === "pi-orch" && parsed.version) return parsed.version;
    }
    if (dirname(dir) === dir) return "unknown";
  }
}
