/**
 * Where pi 1.6.0 keeps installed packages, by scope: the user's under the agent directory
 * (`npm/node_modules/NAME`, `git/HOST/PATH`), a project's under its `.pi/` folder, and
 * the `-e` ones of one run under `<agent dir>/tmp/extensions/` (a folder per source kind,
 * named by a hash as pi names it), so a pi and this worker find each other's installs.
 */
import { createHash } from "node:crypto";
import { join, resolve, sep } from "node:path";
import type { GitSource, NpmSource } from "./source.js";

/** Whose a package is: the user's settings, a project's, or one run's `-e`. */
export type PackageScope = "user" | "project" | "temporary";

/** The folders a scope's installs go to. */
export interface PackageDirs {
  /** The agent directory. */
  agentDir: string;
  /** The project's `.pi` folder. */
  projectDir: string;
}

/** The npm project packages of a scope are installed into (`npm install --prefix`). */
export function npmRoot(scope: PackageScope, dirs: PackageDirs): string {
  if (scope === "temporary") return temporaryDir(dirs.agentDir, "npm");
  return join(scope === "project" ? dirs.projectDir : dirs.agentDir, "npm");
}

/** Where an npm package of a scope is once installed. */
export function npmInstallPath(source: NpmSource, scope: PackageScope, dirs: PackageDirs): string {
  return join(npmRoot(scope, dirs), "node_modules", source.name);
}

/** The folder a scope's git clones go under (HOST/PATH below it). */
export function gitRoot(scope: "user" | "project", dirs: PackageDirs): string {
  return join(scope === "project" ? dirs.projectDir : dirs.agentDir, "git");
}

/** Where a git package of a scope is cloned. */
export function gitInstallPath(source: GitSource, scope: PackageScope, dirs: PackageDirs): string {
  if (scope === "temporary") return temporaryDir(dirs.agentDir, `git-${source.host}`, source.path, source.ref);
  return inside(gitRoot(scope, dirs), source.host, source.path);
}

/** `<agent dir>/tmp/extensions/PREFIX/HASH/SUFFIX`, pi's folder for a `-e` source (each pinned ref its own). */
function temporaryDir(agentDir: string, prefix: string, suffix = "", ref?: string): string {
  const hash = createHash("sha256")
    .update(`${prefix}-${suffix}${ref ? `@${ref}` : ""}`)
    .digest("hex")
    .slice(0, 8);
  return inside(join(agentDir, "tmp", "extensions", prefix), hash, suffix);
}

/** `root/...parts`, refused when the parts would lead out of `root`. */
function inside(root: string, ...parts: string[]): string {
  const base = resolve(root);
  const path = resolve(base, ...parts);
  if (path !== base && !path.startsWith(`${base}${sep}`))
    throw new Error(`Refusing to use path outside package install root: ${path}`);
  return path;
}
