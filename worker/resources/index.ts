/**
 * Everything a worker start reads besides its flags: settings, skills, prompt
 * templates and the SYSTEM.md / APPEND_SYSTEM.md files, each from the home folder and,
 * in a trusted project, from its `.pi/` folder. Flags decide what is searched.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { projectRoot } from "../extensions/trust.js";
import { discoverPromptTemplates, type PromptTemplate } from "./prompt-templates.js";
import { loadSettings, type Settings } from "./settings.js";
import { discoverSkills, uniqueSkills, type Skill } from "./skills.js";
import { resolveResourcePath, type ResourceWarning } from "./source-info.js";
import { findSystemFiles, type SystemFiles } from "./system-files.js";

/** What decides the search (from the command line). */
export interface ResourceOptions {
  home: string;
  cwd: string;
  trusted: boolean;
  /** `--no-skills`. */
  noSkills?: boolean;
  /** `--skill PATH`, repeatable; resolved against the cwd. */
  skillPaths?: string[];
  /** `--no-prompt-templates`. */
  noPromptTemplates?: boolean;
  /** `--prompt-template PATH`, repeatable. */
  promptTemplatePaths?: string[];
}

/** The resources of one worker start. */
export interface Resources {
  settings: Settings;
  settingsFiles: string[];
  skills: Skill[];
  templates: PromptTemplate[];
  systemFiles: SystemFiles;
  warnings: ResourceWarning[];
  /** Project files and folders not read because the project is not trusted. */
  skippedProject: string[];
}

/** The project's `.pi` folder: at the root of the repository `cwd` is in (the folder trust is recorded for). */
export function projectConfigDir(cwd: string): string {
  return join(projectRoot(cwd), ".pi");
}

/** Load settings first (they add skill and template paths), then the rest. Throws `SettingsError`. */
export function loadResources(opts: ResourceOptions): Resources {
  const projectDir = projectConfigDir(opts.cwd);
  const {
    settings,
    files,
    skippedProject: skippedSettings,
  } = loadSettings({ home: opts.home, projectDir, trusted: opts.trusted });
  const skills = discoverSkills({
    home: opts.home,
    projectDir,
    trusted: opts.trusted,
    includeDefaults: !opts.noSkills,
    paths: [...(opts.noSkills ? [] : settings.skills), ...(opts.skillPaths ?? []).map((p) => resolveCli(p, opts.cwd))],
  });
  const templates = discoverPromptTemplates({
    home: opts.home,
    projectDir,
    trusted: opts.trusted,
    includeDefaults: !opts.noPromptTemplates,
    paths: [
      ...(opts.noPromptTemplates ? [] : settings.prompts),
      ...(opts.promptTemplatePaths ?? []).map((p) => resolveCli(p, opts.cwd)),
    ],
  });
  const systemFiles = findSystemFiles({ home: opts.home, projectDir, trusted: opts.trusted });
  return {
    settings,
    settingsFiles: files,
    skills: skills.skills,
    templates: templates.templates,
    systemFiles,
    warnings: [...skills.warnings, ...templates.warnings],
    skippedProject: [
      ...(skippedSettings ? [skippedSettings] : []),
      ...skills.skippedProject,
      ...templates.skippedProject,
      ...systemFiles.skippedProject,
    ],
  };
}

/** Skill and prompt template paths the extensions' `resources_discover` handlers returned, as given. */
export interface ExtensionResourcePaths {
  skillPaths: readonly string[];
  promptPaths: readonly string[];
}

/**
 * `base` with the skills and prompt templates at the extensions' paths after its own, as
 * pi extends its resources (a skill file `base` already has, or a taken name, is left
 * out). Only those paths are read, so the settings, folders and files of `base` are not
 * read again; `warnings` are those of the added paths alone (base's were told with it).
 * A path is resolved as `--skill` / `--prompt-template` (`~` the home folder, the rest
 * against the cwd), and loads under `--no-skills` / `--no-prompt-templates` as those do.
 */
export function extendResources(
  base: Resources,
  paths: ExtensionResourcePaths,
  opts: Pick<ResourceOptions, "home" | "cwd" | "trusted">,
): Resources {
  const projectDir = projectConfigDir(opts.cwd);
  const sources = { home: opts.home, projectDir, trusted: opts.trusted, includeDefaults: false };
  const found = discoverSkills({ ...sources, paths: paths.skillPaths.map((p) => resolveCli(p, opts.cwd)) });
  const skills = uniqueSkills([...base.skills, ...found.skills]);
  const templates = discoverPromptTemplates({
    ...sources,
    paths: paths.promptPaths.map((p) => resolveCli(p, opts.cwd)),
  });
  return {
    ...base,
    skills: skills.skills,
    templates: [...base.templates, ...templates.templates],
    warnings: [...found.warnings, ...skills.warnings, ...templates.warnings],
  };
}

function resolveCli(path: string, cwd: string): string {
  return resolveResourcePath(path, cwd, homedir());
}
