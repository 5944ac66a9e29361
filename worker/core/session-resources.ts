/**
 * The resources of a session: settings, skills, prompt templates and SYSTEM.md /
 * APPEND_SYSTEM.md as the flags and folders give them, joined by those at the paths the
 * extensions' `resources_discover` handlers return; read again on `reload`. What a prompt
 * expands through (`/skill:name`, `/template`) and what `get_commands` lists come from here.
 */
import { dirname } from "node:path";
import type { DiscoveredResources, ExtensionHooks } from "../extensions/hooks.js";
import type { PackageOrigin } from "../packages/resolve.js";
import { extendResources, loadResources, type Resources } from "../resources/index.js";
import { expandPromptTemplate } from "../resources/prompt-templates.js";
import { expandSkillCommand } from "../resources/skills.js";
import { type SourceInfo, sourceInfo } from "../resources/source-info.js";
import type { WorkerOptions } from "./worker-options.js";

/** No paths from `resources_discover` (none asked yet, or none returned). */
const NOTHING_DISCOVERED: DiscoveredResources = { skillPaths: [], promptPaths: [], themePaths: [] };

/** One entry of `get_commands`, in pi 0.73's shape. */
export interface SlashCommandInfo {
  name: string;
  description?: string;
  source: "extension" | "prompt" | "skill";
  sourceInfo: unknown;
}

/** Where the resources are read from, and where their problems are told. */
export interface SessionResourcesHost {
  readonly options: WorkerOptions;
  readonly cwd: string;
  readonly home: string;
  warn(message: string): void;
}

/** A session's resources; `current` is what the session uses now. */
export class SessionResources {
  /** The resources read from the flags, settings and folders; `current` adds the extensions' paths. */
  private base: Resources;
  /** What the session uses now: `base` with the discovered paths' skills and templates. */
  current: Resources;
  /** Resource paths the extensions' `resources_discover` handlers returned last, loaded into `current`. */
  private discovered: DiscoveredResources = NOTHING_DISCOVERED;
  /** Files pi packages brought, and where from (see setPackageOrigins). */
  private packageOrigins: ReadonlyMap<string, PackageOrigin> = new Map();

  /** Reads the resources at once; throws `SettingsError` for a settings file that cannot be used. */
  constructor(private readonly host: SessionResourcesHost) {
    this.base = this.read();
    this.current = this.base;
  }

  /** Settings, skills, prompt templates and SYSTEM.md / APPEND_SYSTEM.md, as the options say (no extension's paths). */
  private read(): Resources {
    const o = this.host.options;
    const resources = loadResources({
      home: this.host.home,
      cwd: this.host.cwd,
      trusted: o.trusted === true,
      noSkills: o.noSkills,
      skillPaths: o.skillPaths,
      noPromptTemplates: o.noPromptTemplates,
      promptTemplatePaths: o.promptTemplatePaths,
    });
    for (const w of resources.warnings) this.host.warn(`${w.path}: ${w.message}`);
    return resources;
  }

  /**
   * As pi's reload: the resources of the flags and files alone, then (at `discover`) those
   * at the paths the reloaded extensions return, each read once.
   */
  reread(): void {
    this.base = this.read();
    this.current = this.base;
    this.discovered = NOTHING_DISCOVERED;
  }

  /**
   * Skills and prompt templates at the paths `resources_discover` returned join the
   * session's (as pi's `extendResources`). False when the paths are those already loaded.
   */
  discover(found: DiscoveredResources): boolean {
    const same = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
    if (same(found.skillPaths, this.discovered.skillPaths) && same(found.promptPaths, this.discovered.promptPaths))
      return false;
    this.discovered = found;
    this.current = extendResources(this.base, found, {
      home: this.host.home,
      cwd: this.host.cwd,
      trusted: this.host.options.trusted === true,
    });
    for (const w of this.current.warnings) this.host.warn(`${w.path}: ${w.message}`);
    return true;
  }

  /** `/skill:name args` and `/template args` expanded, as pi expands a prompt before sending it. */
  expandPrompt(text: string): string {
    const { settings, skills, templates } = this.current;
    const expanded = settings.enableSkillCommands === false ? text : expandSkillCommand(text, skills);
    return expandPromptTemplate(expanded, templates);
  }

  /** Where each file of a pi package came from (set at each load of the extensions), for `sourceInfo`. */
  setPackageOrigins(origins: ReadonlyMap<string, PackageOrigin>): void {
    this.packageOrigins = origins;
  }

  /**
   * A resource's `sourceInfo`: pi's package form (`origin: "package"`) for a file a package
   * brought. As pi 1.6.0 reports an `-e` package's, its extensions and skills say `"cli"`.
   */
  private sourceInfoOf(info: SourceInfo, kind: "extension" | "prompt" | "skill"): unknown {
    const pkg = this.packageOrigins.get(info.path);
    if (!pkg) return info;
    if (pkg.scope === "temporary" && kind !== "prompt")
      return { path: info.path, source: "cli", scope: "temporary", origin: "top-level" };
    return { path: info.path, source: pkg.source, scope: pkg.scope, origin: "package", baseDir: pkg.baseDir };
  }

  /** `get_commands`: extension commands, prompt templates and skills, in pi 0.73's shape. */
  commands(extensions: ExtensionHooks): SlashCommandInfo[] {
    const { settings, skills, templates } = this.current;
    return [
      ...extensions.commands().map((c) => ({
        name: c.name,
        description: c.description,
        source: "extension" as const,
        sourceInfo: this.sourceInfoOf(sourceInfo(c.path, "path", dirname(c.path)), "extension"),
      })),
      ...templates.map((t) => ({
        name: t.name,
        description: t.description,
        source: "prompt" as const,
        sourceInfo: this.sourceInfoOf(t.sourceInfo, "prompt"),
      })),
      ...(settings.enableSkillCommands === false
        ? []
        : skills.map((s) => ({
            name: `skill:${s.name}`,
            description: s.description,
            source: "skill" as const,
            sourceInfo: this.sourceInfoOf(s.sourceInfo, "skill"),
          }))),
    ];
  }
}
