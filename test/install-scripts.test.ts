/**
 * `npm ci` in a fresh clone (the README's first command) prints no install-script
 * warning: npm 11.16+ lists every dependency whose install script package.json's
 * `allowScripts` does not cover (and npm 12 skips those scripts). Every package the
 * lock file marks `hasInstallScript` must have its entry.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
const read = (file: string) => JSON.parse(readFileSync(join(ROOT, file), "utf8"));

describe("install scripts", () => {
  it("package.json's allowScripts names every locked package that has one", () => {
    const lock = read("package-lock.json") as { packages: Record<string, { hasInstallScript?: boolean }> };
    const withScripts = Object.entries(lock.packages)
      .filter(([, p]) => p.hasInstallScript)
      .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length));
    expect(withScripts.length).toBeGreaterThan(0);
    const allowed = (read("package.json") as { allowScripts?: Record<string, boolean> }).allowScripts ?? {};
    expect(withScripts.filter((name) => !(name in allowed))).toEqual([]);
  });
});
