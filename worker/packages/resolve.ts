/**
 * The packages of a worker start, as pi 1.6.0 resolves them: the project's `packages`
 * (trusted projects only) over the user's, one per identity (a project entry replaces the
 * user's, or with `autoload: false` filters it), then `-e` sources of this run. A package
 * not on disk yet is installed; one that cannot be (no network, a failing clone) is
 * reported and skipped, and the worker starts without it.
 */
import { statSync } from "node:fs";
import type { PackageEntry } from "../../shared/schema/packages.js";
import { collectPackage, emptyCollection, RESOURCE_TYPES, type ResourceType } from "./collect.js";
import { gitInstallPath, npmInstallPath, type PackageScope } from "./locations.js";
import { installSource, scopeBase, type PackageContext } from "./manager.js";
import { entrySource } from "./settings-file.js";
import { packageIdentity, parsePackageSource, resolveLocalPath } from "./source.js";
import { existsSync } from "node:fs";

/** Where a packaged resource came from: pi's `sourceInfo` of it. */
export interface PackageOrigin {
  source: string;
  scope: PackageScope;
  /** The package's folder. */
  baseDir: string;
}

/** Enabled files by kind, where each came from, and the packages that could not be installed. */
export interface ResolvedPackages {
  files: Record<ResourceType, string[]>;
  origins: Map<string, PackageOrigin>;
  failures: { source: string; scope: PackageScope; message: string }[];
}

type Scoped = { entry: PackageEntry; scope: PackageScope };

/** Project entries first, each identity once: project wins; a project `autoload: false` entry keeps the user's after it. */
function dedupe(entries: Scoped[], ctx: PackageContext): Scoped[] {
  const out: Scoped[] = [];
  const seen = new Map<string, number>();
  for (const item of entries) {
    const id = packageIdentity(entrySource(item.entry), scopeBase(item.scope, ctx), ctx.userHome);
    const at = seen.get(id);
    if (at === undefined) {
      seen.set(id, out.length);
      out.push(item);
      continue;
    }
    const first = out[at]!;
    if (first.scope === "project" && item.scope === "user") {
      if (typeof first.entry === "object" && first.entry.autoload === false) out.push(item);
    } else if (item.scope === "project") out[at] = item;
  }
  return out;
}

/**
 * Resolve the configured `packages` (per settings file) and this run's `-e` package sources
 * to the files that load. `offline` (PI_OFFLINE): nothing is installed.
 */
export async function resolvePackages(
  configured: { user: readonly PackageEntry[]; project: readonly PackageEntry[] },
  temporary: readonly string[],
  ctx: PackageContext & { offline: boolean },
): Promise<ResolvedPackages> {
  const all = dedupe(
    [
      ...(ctx.trusted ? configured.project.map((entry) => ({ entry, scope: "project" as const })) : []),
      ...configured.user.map((entry) => ({ entry, scope: "user" as const })),
    ],
    ctx,
  );
  const items: Scoped[] = [...all, ...temporary.map((entry) => ({ entry, scope: "temporary" as const }))];
  const collected = emptyCollection();
  const origins = new Map<string, PackageOrigin>();
  const failures: ResolvedPackages["failures"] = [];
  for (const { entry, scope } of items) {
    const source = entrySource(entry);
    const filter = typeof entry === "object" ? entry : undefined;
    // A project delta entry reads the package where the user's entry installed it.
    const base =
      scope === "project" && filter?.autoload === false
        ? (all.find(
            (o) =>
              o.scope === "user" &&
              packageIdentity(entrySource(o.entry), ctx.agentDir, ctx.userHome) ===
                packageIdentity(source, ctx.projectDir, ctx.userHome),
          ) ?? { entry, scope })
        : { entry, scope };
    const parsed = parsePackageSource(entrySource(base.entry));
    let root: string;
    if (parsed.type === "local") {
      root = resolveLocalPath(parsed.path, scopeBase(base.scope, ctx), ctx.userHome);
      if (!existsSync(root)) continue;
      if (statSync(root).isFile()) {
        if (!collected.extensions.has(root)) collected.extensions.set(root, true);
        origins.set(root, { source, scope, baseDir: root.slice(0, root.lastIndexOf("/")) });
        continue;
      }
    } else {
      root = parsed.type === "npm" ? npmInstallPath(parsed, base.scope, ctx) : gitInstallPath(parsed, base.scope, ctx);
      if (!existsSync(root)) {
        if (ctx.offline) continue;
        try {
          ctx.log(`Installing ${source}...`);
          await installSource(parsed, base.scope, ctx);
        } catch (err) {
          failures.push({ source, scope: base.scope, message: err instanceof Error ? err.message : String(err) });
          continue;
        }
      }
    }
    const before = new Set(RESOURCE_TYPES.flatMap((t) => [...collected[t].keys()]));
    if (!collectPackage(root, collected, filter)) {
      // A folder that is no package is one extension (its index).
      if (!collected.extensions.has(root)) collected.extensions.set(root, true);
    }
    for (const type of RESOURCE_TYPES)
      for (const file of collected[type].keys())
        if (!before.has(file)) origins.set(file, { source, scope, baseDir: root });
  }
  const files = Object.fromEntries(
    RESOURCE_TYPES.map((t) => [t, [...collected[t]].filter(([, on]) => on).map(([file]) => file)]),
  ) as Record<ResourceType, string[]>;
  return { files, origins, failures };
}
