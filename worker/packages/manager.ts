/**
 * `pi install` / `remove` / `update` / `list` as pi 1.6.0's package manager does them: a
 * source goes on disk for its scope (npm, git; a local path is only checked), then into that
 * scope's settings file, written as pi writes it (a local path relative to the file's
 * folder) and matched by pi's identity (npm name, git host and path, absolute local path),
 * so installing a new version replaces the entry and `remove` finds it however it is spelled.
 */
import { existsSync } from "node:fs";
import { join, relative } from "node:path";
import type { PackageEntry, PackageListing } from "../../shared/schema/packages.js";
import {
  type CommandOutput,
  installGit,
  installNpm,
  removeGit,
  revParse,
  uninstallNpm,
  updateGit,
} from "./installer.js";
import { gitInstallPath, gitRoot, npmInstallPath, npmRoot, type PackageDirs, type PackageScope } from "./locations.js";
import { entrySource, readSettingsPackages, writeSettingsPackages } from "./settings-file.js";
import { packageIdentity, parsePackageSource, resolveLocalPath, type PackageSource } from "./source.js";
import { readFileSync } from "node:fs";

/** What the package commands work on. */
export interface PackageContext extends PackageDirs {
  cwd: string;
  /** The user's home (`~` in local paths). */
  userHome: string;
  /** Whether the project's settings and package folders may be used. */
  trusted: boolean;
  /** The `npmCommand` setting. */
  npmCommand?: readonly string[];
  output: CommandOutput;
  /** Progress lines (`Installing x...`). */
  log: (line: string) => void;
}

/** A scope's settings file: `<agent dir>/settings.json` or the project's `.pi/settings.json`. */
export function settingsPathOf(scope: "user" | "project", ctx: PackageDirs): string {
  return join(scope === "project" ? ctx.projectDir : ctx.agentDir, "settings.json");
}

/** The folder a scope's relative local sources are relative to. */
export function scopeBase(scope: PackageScope, ctx: PackageContext): string {
  return scope === "user" ? ctx.agentDir : scope === "project" ? ctx.projectDir : ctx.cwd;
}

function assertTrusted(scope: PackageScope, ctx: PackageContext): void {
  if (scope === "project" && !ctx.trusted)
    throw new Error("Project is not trusted; refusing to access project package storage");
}

/** Where a source of a scope is on disk, when it is there. */
export function installedPath(source: string, scope: PackageScope, ctx: PackageContext): string | undefined {
  const parsed = parsePackageSource(source);
  const path =
    parsed.type === "npm"
      ? npmInstallPath(parsed, scope, ctx)
      : parsed.type === "git"
        ? gitInstallPath(parsed, scope, ctx)
        : resolveLocalPath(parsed.path, scopeBase(scope, ctx), ctx.userHome);
  return existsSync(path) ? path : undefined;
}

/** Put a source on disk for a scope (npm install, git clone); a local path must exist. */
export async function installSource(parsed: PackageSource, scope: PackageScope, ctx: PackageContext): Promise<void> {
  assertTrusted(scope, ctx);
  const opts = { npmCommand: ctx.npmCommand, output: ctx.output };
  if (parsed.type === "npm") return installNpm([parsed.spec], npmRoot(scope, ctx), opts);
  if (parsed.type === "git")
    return installGit(
      parsed.repo,
      parsed.ref,
      gitInstallPath(parsed, scope, ctx),
      scope === "temporary" ? undefined : gitRoot(scope, ctx),
      opts,
    );
  const path = resolveLocalPath(parsed.path, ctx.cwd, ctx.userHome);
  if (!existsSync(path)) throw new Error(`Path does not exist: ${path}`);
}

/** `pi install SOURCE [-l]`: on disk, then in the scope's settings (an entry of the same package replaced). */
export async function installAndPersist(source: string, scope: "user" | "project", ctx: PackageContext): Promise<void> {
  ctx.log(`Installing ${source}...`);
  await installSource(parsePackageSource(source), scope, ctx);
  const file = settingsPathOf(scope, ctx);
  const { packages } = readSettingsPackages(file);
  const stored = settingsForm(source, scope, ctx);
  const at = packages.findIndex((e) => sameIdentity(e, scope, source, ctx));
  if (at === -1) return writeSettingsPackages(file, [...packages, stored]);
  const existing = packages[at]!;
  if (entrySource(existing) === stored) return;
  const next = [...packages];
  next[at] = typeof existing === "string" ? stored : { ...existing, source: stored };
  writeSettingsPackages(file, next);
}

/** `pi remove SOURCE [-l]`: off disk and out of the settings; false when no entry matched. */
export async function removeAndPersist(
  source: string,
  scope: "user" | "project",
  ctx: PackageContext,
): Promise<boolean> {
  ctx.log(`Removing ${source}...`);
  assertTrusted(scope, ctx);
  const parsed = parsePackageSource(source);
  const opts = { npmCommand: ctx.npmCommand, output: ctx.output };
  if (parsed.type === "npm") await uninstallNpm(parsed.name, npmRoot(scope, ctx), opts);
  if (parsed.type === "git") removeGit(gitInstallPath(parsed, scope, ctx), gitRoot(scope, ctx));
  const file = settingsPathOf(scope, ctx);
  const { packages } = readSettingsPackages(file);
  const kept = packages.filter((e) => !sameIdentity(e, scope, source, ctx));
  if (kept.length === packages.length) return false;
  writeSettingsPackages(file, kept);
  return true;
}

/** `pi list`: the user's entries, then the project's (when trusted), with where each is installed. */
export function listConfigured(ctx: PackageContext): PackageListing[] {
  const scopes: ("user" | "project")[] = ctx.trusted ? ["user", "project"] : ["user"];
  return scopes.flatMap((scope) =>
    readSettingsPackages(settingsPathOf(scope, ctx)).packages.map((entry) => {
      const source = entrySource(entry);
      const path = installedPath(source, scope, ctx);
      return { source, scope, filtered: typeof entry === "object", ...(path ? { installedPath: path } : {}) };
    }),
  );
}

/**
 * `pi update [SOURCE]`: every configured npm package not pinned to one version reinstalled
 * (at its range, else `@latest`) and every git clone fetched and reset to its ref or
 * branch; returns pi's lines for what changed (`npm:x 1.0.0 -> 1.1.0`). A SOURCE that
 * matches no entry is an error naming the nearest one.
 */
export async function updatePackages(source: string | undefined, ctx: PackageContext): Promise<string[]> {
  const configured = listConfigured(ctx).map((p) => ({ ...p, parsed: parsePackageSource(p.source) }));
  const wanted = source === undefined ? undefined : packageIdentity(source, ctx.cwd, ctx.userHome);
  const targets = configured.filter(
    (p) => wanted === undefined || packageIdentity(p.source, scopeBase(p.scope, ctx), ctx.userHome) === wanted,
  );
  if (source !== undefined && targets.length === 0) throw new Error(noMatchMessage(source, configured));
  const opts = { npmCommand: ctx.npmCommand, output: ctx.output };
  const changed: string[] = [];
  for (const target of targets) {
    const { parsed, scope } = target;
    const suffix = scope === "project" ? " (project)" : "";
    if (parsed.type === "npm" && !parsed.pinned) {
      const path = npmInstallPath(parsed, scope, ctx);
      const from = versionAt(path);
      ctx.log(`Updating ${target.source}...`);
      await installNpm([parsed.version ? parsed.spec : `${parsed.name}@latest`], npmRoot(scope, ctx), opts);
      const to = versionAt(path);
      if (from !== to) changed.push(`${target.source}${suffix} ${from ?? "(none)"} -> ${to ?? "(none)"}`);
    } else if (parsed.type === "git") {
      const dir = gitInstallPath(parsed, scope, ctx);
      ctx.log(`Updating ${target.source}...`);
      const from = await revParse(dir, "HEAD");
      if (existsSync(dir)) await updateGit(dir, parsed.ref, opts);
      else await installGit(parsed.repo, parsed.ref, dir, gitRoot(scope, ctx), opts);
      const to = await revParse(dir, "HEAD");
      if (from !== to)
        changed.push(`${target.source}${suffix} ${from?.slice(0, 7) ?? "(none)"} -> ${to?.slice(0, 7) ?? "(none)"}`);
    }
  }
  return changed;
}

function versionAt(dir: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/** pi's message, with its suggestion when SOURCE is an entry's bare npm name or git `host/path`. */
function noMatchMessage(source: string, configured: { source: string; parsed: PackageSource }[]): string {
  const given = source.trim();
  const hint = configured.find(({ parsed }) =>
    parsed.type === "npm"
      ? given === parsed.name || given === parsed.spec
      : parsed.type === "git" &&
        (given === `${parsed.host}/${parsed.path}` || given === `${parsed.host}/${parsed.path}@${parsed.ref}`),
  );
  return `No matching package found for ${source}${hint ? `. Did you mean ${hint.source}?` : ""}`;
}

/** How a source is written into a scope's settings: a local path relative to the settings file's folder. */
function settingsForm(source: string, scope: "user" | "project", ctx: PackageContext): string {
  const parsed = parsePackageSource(source);
  if (parsed.type !== "local") return source;
  return relative(scopeBase(scope, ctx), resolveLocalPath(parsed.path, ctx.cwd, ctx.userHome)) || ".";
}

/** Whether a settings entry of `scope` is the same package as a source typed on the command line. */
function sameIdentity(entry: PackageEntry, scope: "user" | "project", source: string, ctx: PackageContext): boolean {
  return (
    packageIdentity(entrySource(entry), scopeBase(scope, ctx), ctx.userHome) ===
    packageIdentity(source, ctx.cwd, ctx.userHome)
  );
}
