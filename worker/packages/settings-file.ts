/**
 * The `packages` list of one settings file, read and written by `pi install` / `remove`:
 * the rest of the file is kept as it is. A file that is not JSON, or a `packages` key of the
 * wrong shape, is an error naming the file (settings are never overwritten half-read).
 */
import { existsSync, readFileSync } from "node:fs";
import { writeFileAtomic } from "../../shared/atomic-write.js";
import type { PackageEntry } from "../../shared/schema/packages.js";
import { parseSettings } from "../resources/settings.js";
import { dirname } from "node:path";

/** The file's JSON object and its packages; `{}` and `[]` when there is no file. */
export function readSettingsPackages(path: string): { raw: Record<string, unknown>; packages: PackageEntry[] } {
  if (!existsSync(path)) return { raw: {}, packages: [] };
  const text = readFileSync(path, "utf8");
  const checked = parseSettings(path, text, dirname(path));
  return { raw: JSON.parse(text) as Record<string, unknown>, packages: checked.packages ?? [] };
}

/** Write the file back with `packages` replaced, in pi's layout (two-space JSON). */
export function writeSettingsPackages(path: string, packages: readonly PackageEntry[]): void {
  const { raw } = readSettingsPackages(path);
  writeFileAtomic(path, JSON.stringify({ ...raw, packages }, null, 2));
}

/** An entry's source string. */
export function entrySource(entry: PackageEntry): string {
  return typeof entry === "string" ? entry : entry.source;
}
