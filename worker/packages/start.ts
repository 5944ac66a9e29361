/**
 * The packages' part of a worker start: which `-e` arguments are package sources (npm, git)
 * rather than paths, and what the configured and `-e` packages add to the extensions,
 * skills and prompt templates, with pi's flags applied (`--no-extensions`, `--no-skills`,
 * `--no-prompt-templates` leave out the configured packages' resources of that kind, never
 * an `-e` package's).
 */
import { homedir } from "node:os";
import type { PackageEntry } from "../../shared/schema/packages.js";
import type { PackageOrigin } from "./resolve.js";
import { resolvePackages } from "./resolve.js";
import { parsePackageSource } from "./source.js";

/** Whether an `-e` argument names an npm or git package rather than a file or folder. */
export function isPackageSourceArg(arg: string): boolean {
  return parsePackageSource(arg).type !== "local";
}

/** What the packages add to one start. */
export interface StartPackages {
  /** Extension files (or package folders) to load after the `-e` paths. */
  extensionPaths: string[];
  packaged: { skillPaths: string[]; promptPaths: string[]; themePaths: string[] };
  /** Each packaged file's `sourceInfo` origin. */
  origins: Map<string, PackageOrigin>;
  /** pi's warnings for packages that could not be installed. */
  warnings: string[];
}

/** Resolve (installing what is missing) the packages of one start. */
export async function startPackages(opts: {
  configured: { user: readonly PackageEntry[]; project: readonly PackageEntry[] };
  extensionArgs: readonly string[];
  agentDir: string;
  projectDir: string;
  cwd: string;
  trusted: boolean;
  npmCommand?: readonly string[];
  noExtensions: boolean;
  noSkills: boolean;
  noPromptTemplates: boolean;
  offline: boolean;
  log: (line: string) => void;
}): Promise<StartPackages> {
  let userHome: string | undefined;
  const ctx = {
    agentDir: opts.agentDir,
    projectDir: opts.projectDir,
    cwd: opts.cwd,
    // Read when a package entry needs it: node:os, loaded for it alone, cost every start
    // without packages ~0.9 ms of CPU (profiled, from the startup snapshot).
    get userHome(): string {
      userHome ??= homedir();
      return userHome;
    },
    trusted: opts.trusted,
    npmCommand: opts.npmCommand,
    output: "capture" as const,
    log: opts.log,
    offline: opts.offline,
  };
  const temporary = opts.extensionArgs.filter(isPackageSourceArg);
  const [configured, cli] = await Promise.all([
    resolvePackages(opts.configured, [], ctx),
    resolvePackages({ user: [], project: [] }, temporary, ctx),
  ]);
  const pick = (off: boolean, kind: "extensions" | "skills" | "prompts" | "themes") => [
    ...(off ? [] : configured.files[kind]),
    ...cli.files[kind],
  ];
  return {
    extensionPaths: pick(opts.noExtensions, "extensions"),
    packaged: {
      skillPaths: pick(opts.noSkills, "skills"),
      promptPaths: pick(opts.noPromptTemplates, "prompts"),
      themePaths: pick(false, "themes"),
    },
    origins: new Map([...configured.origins, ...cli.origins]),
    warnings: [...configured.failures, ...cli.failures].map((f) => `Extension package "${f.source}": ${f.message}`),
  };
}
