/**
 * Skills, found as pi 0.73 finds them: folders with a `SKILL.md` (and, at the top of a
 * skills folder, plain `.md` files) under `<agent dir>/skills/`, a trusted project's
 * `.pi/skills/`, and `--skill` / settings paths. Only names and descriptions go into the
 * system prompt; the model reads the body when a task matches, and `/skill:name args`
 * puts the body into the prompt.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { parseFrontmatter } from "./frontmatter.js";
import { sourceInfo, type ResourceScope, type ResourceWarning, type SourceInfo } from "./source-info.js";

/** One loaded skill. */
export interface Skill {
  name: string;
  description: string;
  /** The `SKILL.md` (or top-level `.md`) file. */
  filePath: string;
  /** The skill's folder; relative references in the body resolve against it. */
  baseDir: string;
  /** `disable-model-invocation: true`: left out of the system prompt, only `/skill:name` loads it. */
  disableModelInvocation: boolean;
  sourceInfo: SourceInfo;
}

/** Skills in load order, and the warnings found on the way. */
export interface LoadedSkills {
  skills: Skill[];
  warnings: ResourceWarning[];
}

const MAX_NAME_LENGTH = 64;
const MAX_DESCRIPTION_LENGTH = 1024;

/**
 * Agent Skills name rules, as warnings (pi loads the skill anyway): lowercase letters,
 * digits and single hyphens, at most 64 characters, equal to the folder's name.
 */
export function skillNameProblems(name: string, folderName: string): string[] {
  const problems: string[] = [];
  if (name !== folderName) problems.push(`name "${name}" does not match parent directory "${folderName}"`);
  if (name.length > MAX_NAME_LENGTH) problems.push(`name exceeds ${MAX_NAME_LENGTH} characters (${name.length})`);
  if (!/^[a-z0-9-]+$/.test(name))
    problems.push("name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)");
  if (name.startsWith("-") || name.endsWith("-")) problems.push("name must not start or end with a hyphen");
  if (name.includes("--")) problems.push("name must not contain consecutive hyphens");
  return problems;
}

/**
 * A skill from the text of its file. Undefined (with a warning) when the description is
 * missing, as in pi; name problems are warnings only. Pure.
 */
export function parseSkill(
  filePath: string,
  text: string,
  scope: ResourceScope,
): { skill?: Skill; warnings: ResourceWarning[] } {
  const warnings: ResourceWarning[] = [];
  let fields: Record<string, unknown>;
  try {
    fields = parseFrontmatter(text).fields;
  } catch (err) {
    return { warnings: [{ path: filePath, message: `bad frontmatter: ${(err as Error).message}` }] };
  }
  const baseDir = dirname(filePath);
  const folderName = basename(baseDir);
  const description = typeof fields.description === "string" ? fields.description : "";
  if (description.trim() === "")
    warnings.push({ path: filePath, message: "description is required; the skill is not loaded" });
  else if (description.length > MAX_DESCRIPTION_LENGTH) {
    warnings.push({
      path: filePath,
      message: `description exceeds ${MAX_DESCRIPTION_LENGTH} characters (${description.length})`,
    });
  }
  const name = typeof fields.name === "string" && fields.name !== "" ? fields.name : folderName;
  for (const message of skillNameProblems(name, folderName)) warnings.push({ path: filePath, message });
  if (description.trim() === "") return { warnings };
  return {
    skill: {
      name,
      description,
      filePath,
      baseDir,
      disableModelInvocation: fields["disable-model-invocation"] === true,
      sourceInfo: sourceInfo(filePath, scope, baseDir),
    },
    warnings,
  };
}

function kind(path: string): "dir" | "file" | undefined {
  try {
    const stat = statSync(path);
    return stat.isDirectory() ? "dir" : stat.isFile() ? "file" : undefined;
  } catch {
    return undefined;
  }
}

function loadFile(path: string, scope: ResourceScope, out: LoadedSkills): void {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    out.warnings.push({ path, message: `cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}` });
    return;
  }
  const { skill, warnings } = parseSkill(path, text, scope);
  out.warnings.push(...warnings);
  if (skill) out.skills.push(skill);
}

/**
 * Skills under `dir`: a folder with a `SKILL.md` is one skill (not searched further);
 * otherwise its sub-folders are searched (hidden ones and `node_modules` skipped), and
 * at the top level (`rootFiles`) plain `.md` files are skills too.
 */
export function loadSkillsFromDir(dir: string, scope: ResourceScope, rootFiles = true): LoadedSkills {
  const out: LoadedSkills = { skills: [], warnings: [] };
  walk(dir, scope, rootFiles, out);
  return out;
}

function walk(dir: string, scope: ResourceScope, rootFiles: boolean, out: LoadedSkills): void {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return;
  }
  if (names.includes("SKILL.md") && kind(join(dir, "SKILL.md")) === "file") {
    loadFile(join(dir, "SKILL.md"), scope, out);
    return;
  }
  for (const name of names) {
    if (name.startsWith(".") || name === "node_modules") continue;
    const path = join(dir, name);
    const k = kind(path);
    if (k === "dir") walk(path, scope, false, out);
    else if (k === "file" && rootFiles && name.endsWith(".md")) loadFile(path, scope, out);
  }
}

/** Inputs of skill discovery. */
export interface SkillSources {
  /** The agent directory (see agentDir). */
  home: string;
  /** The project's `.pi` folder. */
  projectDir: string;
  /** Project skills load only from a trusted project. */
  trusted: boolean;
  /** `--no-skills`: skip the home and project folders (explicit paths still load). */
  includeDefaults: boolean;
  /** Absolute paths from `--skill` and settings, files or folders. */
  paths: string[];
}

/**
 * Every skill of a worker start, in pi's order (home, project, then explicit paths).
 * The same file reached twice loads once; a second skill with a taken name is left out
 * with a warning (the first one wins, as in pi).
 */
export function discoverSkills(sources: SkillSources): LoadedSkills & { skippedProject: string[] } {
  const all: LoadedSkills = { skills: [], warnings: [] };
  const skippedProject: string[] = [];
  const add = (loaded: LoadedSkills) => {
    all.warnings.push(...loaded.warnings);
    all.skills.push(...loaded.skills);
  };
  if (sources.includeDefaults) {
    add(loadSkillsFromDir(join(sources.home, "skills"), "user"));
    const projectSkills = join(sources.projectDir, "skills");
    if (sources.trusted) add(loadSkillsFromDir(projectSkills, "project"));
    else if (existsSync(projectSkills)) skippedProject.push(projectSkills);
  }
  for (const path of sources.paths) {
    const k = kind(path);
    if (k === "dir") add(loadSkillsFromDir(path, "path"));
    else if (k === "file" && path.endsWith(".md")) {
      const one: LoadedSkills = { skills: [], warnings: [] };
      loadFile(path, "path", one);
      add(one);
    } else if (k === "file") all.warnings.push({ path, message: "skill path is not a markdown file" });
    else all.warnings.push({ path, message: "skill path does not exist" });
  }
  const unique = uniqueSkills(all.skills);
  return { skills: unique.skills, warnings: [...all.warnings, ...unique.warnings], skippedProject };
}

/**
 * Skills in the order found, each file once, the first of a name winning: a later skill
 * with a taken name is left out with a warning. Applying it to a result of its own
 * followed by more skills gives what one pass over all of them gives.
 */
export function uniqueSkills(candidates: readonly Skill[]): LoadedSkills {
  const byName = new Map<string, Skill>();
  const files = new Set<string>();
  const out: LoadedSkills = { skills: [], warnings: [] };
  for (const skill of candidates) {
    const real = canonical(skill.filePath);
    if (files.has(real)) continue;
    const winner = byName.get(skill.name);
    if (winner) {
      out.warnings.push({
        path: skill.filePath,
        message: `name "${skill.name}" is taken by ${winner.filePath}; this skill is not loaded`,
      });
      continue;
    }
    files.add(real);
    byName.set(skill.name, skill);
    out.skills.push(skill);
  }
  return out;
}

function escapeXml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

/**
 * The system prompt's skills section, pi's XML form (the Agent Skills integration
 * format); "" when no skill may be invoked by the model.
 */
export function formatSkillsForPrompt(skills: readonly Skill[]): string {
  const visible = skills.filter((s) => !s.disableModelInvocation);
  if (visible.length === 0) return "";
  const lines = [
    "The following skills provide specialized instructions for specific tasks.",
    "Use the read tool to load a skill's file when the task matches its description.",
    "When a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.",
    "",
    "<available_skills>",
  ];
  for (const skill of visible) {
    lines.push(
      "  <skill>",
      `    <name>${escapeXml(skill.name)}</name>`,
      `    <description>${escapeXml(skill.description)}</description>`,
      `    <location>${escapeXml(skill.filePath)}</location>`,
      "  </skill>",
    );
  }
  lines.push("</available_skills>");
  return lines.join("\n");
}

/**
 * `/skill:name args` → the skill's body in a `<skill>` block, then the arguments, as pi
 * expands it. `body` is the skill file's text without frontmatter. Pure.
 */
export function skillPromptText(skill: Skill, body: string, args: string): string {
  const block = `<skill name="${skill.name}" location="${skill.filePath}">\nReferences are relative to ${skill.baseDir}.\n\n${body.trim()}\n</skill>`;
  const rest = args.trim();
  return rest ? `${block}\n\n${rest}` : block;
}

/**
 * Expand `text` when it is `/skill:<name> [args]` for a known skill (reading its file
 * now, so edits show without a restart); otherwise return it unchanged.
 */
export function expandSkillCommand(text: string, skills: readonly Skill[]): string {
  if (!text.startsWith("/skill:")) return text;
  const space = text.indexOf(" ");
  const name = space === -1 ? text.slice(7) : text.slice(7, space);
  const skill = skills.find((s) => s.name === name);
  if (!skill) return text;
  const body = parseFrontmatter(readFileSync(skill.filePath, "utf8")).body;
  return skillPromptText(skill, body, space === -1 ? "" : text.slice(space + 1));
}

function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
