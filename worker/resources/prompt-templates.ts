/**
 * Prompt templates, as pi 0.73 has them: `.md` files (not searched recursively) in
 * `<agent dir>/prompts/`, a trusted project's `.pi/prompts/`, and `--prompt-template`
 * / settings paths. `/name args` expands to the template's body with pi's argument
 * placeholders filled in.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { parseFrontmatter } from "./frontmatter.js";
import { sourceInfo, type ResourceScope, type ResourceWarning, type SourceInfo } from "./source-info.js";

/** One prompt template. */
export interface PromptTemplate {
  /** The file name without `.md`: `/review` runs `review.md`. */
  name: string;
  /** From the frontmatter, else the first non-empty line (cut at 60 characters). */
  description: string;
  argumentHint?: string;
  content: string;
  filePath: string;
  sourceInfo: SourceInfo;
}

/**
 * Split arguments like a shell does for words: white space separates, single or double
 * quotes group (and are removed); an empty word is dropped. Pure; pi's `parseCommandArgs`.
 */
export function parseCommandArgs(text: string): string[] {
  const args: string[] = [];
  let current = "";
  let quote: string | null = null;
  for (const char of text) {
    if (quote) {
      if (char === quote) quote = null;
      else current += char;
    } else if (char === '"' || char === "'") {
      quote = char;
    } else if (char === " " || char === "\t") {
      if (current) args.push(current);
      current = "";
    } else {
      current += char;
    }
  }
  if (current) args.push(current);
  return args;
}

/**
 * Fill pi's placeholders: `$1`, `$2`… (positional), `${@:N}` and `${@:N:L}` (slices,
 * 1-based), `$ARGUMENTS` and `$@` (all, space-joined). Only the template is scanned:
 * an argument that contains `$1` is not substituted again. Pure.
 */
export function substituteArgs(content: string, args: readonly string[]): string {
  const all = args.join(" ");
  return content.replace(/\$(\d+)|\$\{@:(\d+)(?::(\d+))?\}|\$ARGUMENTS|\$@/g, (_match, position, start, length) => {
    if (position !== undefined) return args[Number(position) - 1] ?? "";
    if (start !== undefined) {
      const from = Math.max(0, Number(start) - 1);
      return (length !== undefined ? args.slice(from, from + Number(length)) : args.slice(from)).join(" ");
    }
    return all;
  });
}

/** A template from the text of its file. Pure; throws when the frontmatter is not YAML. */
export function parseTemplate(filePath: string, text: string, scope: ResourceScope, baseDir: string): PromptTemplate {
  const { fields, body } = parseFrontmatter(text);
  let description = typeof fields.description === "string" ? fields.description : "";
  if (!description) {
    const first = body.split("\n").find((line) => line.trim());
    if (first) description = first.length > 60 ? `${first.slice(0, 60)}...` : first;
  }
  const hint = fields["argument-hint"];
  return {
    name: basename(filePath).replace(/\.md$/, ""),
    description,
    ...(typeof hint === "string" && hint ? { argumentHint: hint } : {}),
    content: body,
    filePath,
    sourceInfo: sourceInfo(filePath, scope, baseDir),
  };
}

/** Templates in load order, and the warnings found on the way. */
export interface LoadedTemplates {
  templates: PromptTemplate[];
  warnings: ResourceWarning[];
}

function loadFile(path: string, scope: ResourceScope, baseDir: string, out: LoadedTemplates): void {
  try {
    out.templates.push(parseTemplate(path, readFileSync(path, "utf8"), scope, baseDir));
  } catch (err) {
    out.warnings.push({ path, message: `not loaded: ${(err as Error).message}` });
  }
}

function loadDir(dir: string, scope: ResourceScope, out: LoadedTemplates): void {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(dir, name);
    if (name.endsWith(".md") && isFile(path)) loadFile(path, scope, dir, out);
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Inputs of template discovery. */
export interface TemplateSources {
  home: string;
  /** The project's `.pi` folder. */
  projectDir: string;
  trusted: boolean;
  /** `--no-prompt-templates` turns the home and project folders off; explicit paths still load. */
  includeDefaults: boolean;
  /** Absolute paths from `--prompt-template` and settings, files or folders. */
  paths: string[];
}

/** Every template of a worker start: home, project (when trusted), then explicit paths. */
export function discoverPromptTemplates(sources: TemplateSources): LoadedTemplates & { skippedProject: string[] } {
  const out: LoadedTemplates = { templates: [], warnings: [] };
  const skippedProject: string[] = [];
  if (sources.includeDefaults) {
    loadDir(join(sources.home, "prompts"), "user", out);
    const project = join(sources.projectDir, "prompts");
    if (sources.trusted) loadDir(project, "project", out);
    else if (existsSync(project)) skippedProject.push(project);
  }
  for (const path of sources.paths) {
    if (!existsSync(path)) out.warnings.push({ path, message: "prompt template path does not exist" });
    else if (isFile(path)) {
      if (path.endsWith(".md")) loadFile(path, "path", dirname(path), out);
      else out.warnings.push({ path, message: "prompt template path is not a markdown file" });
    } else loadDir(path, "path", out);
  }
  return { ...out, skippedProject };
}

/**
 * Expand `/name args` when `name` is a template (the first one of that name wins);
 * otherwise return the text unchanged. Pure.
 */
export function expandPromptTemplate(text: string, templates: readonly PromptTemplate[]): string {
  if (!text.startsWith("/")) return text;
  const space = text.indexOf(" ");
  const name = space === -1 ? text.slice(1) : text.slice(1, space);
  const template = templates.find((t) => t.name === name);
  if (!template) return text;
  return substituteArgs(template.content, parseCommandArgs(space === -1 ? "" : text.slice(space + 1)));
}
