/**
 * Settings files, pi's `settings.json` keys that apply to a worker: the user's
 * `<agent dir>/settings.json`, overridden key by key by a trusted project's
 * `.pi/settings.json` (nested objects merged one level, as pi does). Keys pi has for
 * its own terminal (theme, editor, images…) are accepted and ignored. A file that is
 * not JSON, or a key of the wrong type, is an error naming the file and the key:
 * a worker never runs with half of a user's settings silently dropped.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import type { Static } from "typebox";
import * as Type from "typebox/type";
import { ThinkingLevel } from "../../shared/schema/messages.js";
import { PackageEntry } from "../../shared/schema/packages.js";
import { checker } from "../../shared/validate.js";
import { resolveResourcePath } from "./source-info.js";
import { mergeDefaultTools } from "../tools/default-tools.js";

const QueueMode = Type.Union([Type.Literal("all"), Type.Literal("one-at-a-time")]);
const Count = Type.Integer({ minimum: 0 });
const Paths = Type.Array(Type.String());

/** The keys we read, with pi's types; any other key passes unchecked. */
export const SettingsFile = Type.Object({
  defaultProvider: Type.Optional(Type.String()),
  defaultModel: Type.Optional(Type.String()),
  defaultThinkingLevel: Type.Optional(ThinkingLevel),
  steeringMode: Type.Optional(QueueMode),
  followUpMode: Type.Optional(QueueMode),
  compaction: Type.Optional(
    Type.Object({
      enabled: Type.Optional(Type.Boolean()),
      reserveTokens: Type.Optional(Count),
      keepRecentTokens: Type.Optional(Count),
    }),
  ),
  branchSummary: Type.Optional(
    Type.Object({ reserveTokens: Type.Optional(Count), skipPrompt: Type.Optional(Type.Boolean()) }),
  ),
  retry: Type.Optional(
    Type.Object({
      enabled: Type.Optional(Type.Boolean()),
      maxRetries: Type.Optional(Count),
      baseDelayMs: Type.Optional(Count),
      /** SDK-level keys; only the cap on a provider-requested wait applies here. */
      provider: Type.Optional(Type.Object({ maxRetryDelayMs: Type.Optional(Count) })),
    }),
  ),
  enabledModels: Type.Optional(Paths),
  sessionDir: Type.Optional(Type.String()),
  extensions: Type.Optional(Paths),
  skills: Type.Optional(Paths),
  prompts: Type.Optional(Paths),
  enableSkillCommands: Type.Optional(Type.Boolean()),
  /** pi packages (see worker/packages/): source strings or objects with filters, as written. */
  packages: Type.Optional(Type.Array(PackageEntry)),
  /** The command `pi install` runs as npm (pi's `npmCommand`, e.g. `["pnpm"]`). */
  npmCommand: Type.Optional(Type.Array(Type.String())),
  /** pi 1.6: the tools active at start (`+name` / `-name` change the defaults); see worker/tools/default-tools.ts. */
  defaultTools: Type.Optional(Type.Array(Type.String())),
});
/** One settings file's content, checked. */
export type SettingsFile = Static<typeof SettingsFile>;

/** Merged settings; resource paths are absolute, from both files; packages kept per file (their paths resolve against it). */
export type Settings = Omit<SettingsFile, "extensions" | "skills" | "prompts" | "packages"> & {
  extensions: string[];
  skills: string[];
  prompts: string[];
  packages: { user: PackageEntry[]; project: PackageEntry[] };
};

/** A settings file that cannot be used; the message names the file and the key. */
export class SettingsError extends Error {
  override name = "SettingsError";
  constructor(
    readonly path: string,
    readonly key: string | undefined,
    detail: string,
  ) {
    super(`settings file ${path}: ${key ? `key "${key}" ${detail}` : detail}; fix the file or remove it`);
  }
}

const checkSettings = checker(SettingsFile);

/** `/compaction/reserveTokens: must be integer` → key `compaction.reserveTokens`, detail `must be integer`. */
function describe(error: string): { key: string | undefined; detail: string } {
  const at = error.indexOf(": ");
  const pointer = at === -1 ? "/" : error.slice(0, at);
  const detail = at === -1 ? error : error.slice(at + 2);
  const key = pointer
    .split("/")
    .filter(Boolean)
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
    .join(".");
  return { key: key || undefined, detail };
}

/**
 * Check one file's text. Resource paths (`extensions`, `skills`, `prompts`, `sessionDir`)
 * resolve against `baseDir` (the folder the file configures: the home, or `.pi`), `~`
 * against the user's home. Pure; throws `SettingsError`.
 */
export function parseSettings(path: string, text: string, baseDir: string, userHome = homedir()): SettingsFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new SettingsError(path, undefined, `is not valid JSON (${(err as Error).message})`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new SettingsError(path, undefined, "must hold a JSON object ({...})");
  }
  const checked = checkSettings(value);
  if (!checked.ok) {
    const { key, detail } = describe(checked.errors[0]!);
    const got =
      key === undefined
        ? undefined
        : key.split(".").reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], value);
    throw new SettingsError(path, key, `${detail}${got === undefined ? "" : ` (it is ${JSON.stringify(got)})`}`);
  }
  const settings: SettingsFile = { ...checked.value };
  for (const key of ["extensions", "skills", "prompts"] as const) {
    const list = settings[key];
    if (list) settings[key] = list.map((p) => resolveResourcePath(p, baseDir, userHome));
  }
  if (settings.sessionDir) settings.sessionDir = resolveResourcePath(settings.sessionDir, baseDir, userHome);
  return settings;
}

/**
 * The longest wait a provider may ask for before a retry (pi's
 * `retry.provider.maxRetryDelayMs`; 0 = no cap), or undefined for the default (60 s).
 */
export function maxRetryDelayMs(settings: Pick<SettingsFile, "retry">): number | undefined {
  return settings.retry?.provider?.maxRetryDelayMs;
}

const NESTED = ["compaction", "branchSummary", "retry"] as const;

/**
 * Project over user, key by key; nested objects merge one level deep (pi's rule);
 * resource lists are joined (user first), since each file's paths load. Pure.
 */
export function mergeSettings(user: SettingsFile, project: SettingsFile): Settings {
  const merged: Record<string, unknown> = { ...user, ...project };
  for (const key of NESTED) {
    if (user[key] || project[key]) merged[key] = { ...user[key], ...project[key] };
  }
  const defaultTools = mergeDefaultTools(user.defaultTools, project.defaultTools);
  return {
    ...(merged as SettingsFile),
    ...(defaultTools ? { defaultTools } : {}),
    extensions: [...(user.extensions ?? []), ...(project.extensions ?? [])],
    skills: [...(user.skills ?? []), ...(project.skills ?? [])],
    prompts: [...(user.prompts ?? []), ...(project.prompts ?? [])],
    packages: { user: user.packages ?? [], project: project.packages ?? [] },
  };
}

/** Settings of a worker start, and the files that were read. */
export interface LoadedSettings {
  settings: Settings;
  files: string[];
  /** A project settings file left out because the project is not trusted. */
  skippedProject?: string;
}

/** `<agent dir>/settings.json`. */
export function userSettingsPath(home: string): string {
  return join(home, "settings.json");
}

/** Read and merge the user's and (when trusted) the project's settings. Throws `SettingsError`. */
export function loadSettings(opts: {
  home: string;
  projectDir: string;
  trusted: boolean;
  userHome?: string;
}): LoadedSettings {
  const files: string[] = [];
  const read = (path: string): SettingsFile => {
    if (!existsSync(path)) return {};
    files.push(path);
    return parseSettings(path, readFileSync(path, "utf8"), dirname(path), opts.userHome);
  };
  const user = read(userSettingsPath(opts.home));
  const projectPath = join(opts.projectDir, "settings.json");
  if (!opts.trusted) {
    return {
      settings: mergeSettings(user, {}),
      files,
      ...(existsSync(projectPath) ? { skippedProject: projectPath } : {}),
    };
  }
  return { settings: mergeSettings(user, read(projectPath)), files };
}
