/**
 * Assembles the system prompt, in pi 1.6's named sections: base prompt, the active tools'
 * descriptions and guidelines, appended text, project context files, skills, the working directory.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { formatSkillsForPrompt, type Skill } from "./resources/skills.js";
import type { AgentTool } from "./types.js";

/** The base prompt, replaced as a whole by `--system-prompt`. */
export const BASE_PROMPT = `You are an expert coding assistant working in the user's project through tools.
You read files, run commands, edit code and write new files to complete the task you are given.

Work like a careful engineer:
- Look before you change: read the relevant files and run commands to understand the situation.
- Make small, precise changes, then check them (run the tests or the program when you can).
- When you are done, say briefly what you did and what is left, with file paths.`;

/** A project or user instruction file that was found. */
export interface ContextFile {
  path: string;
  content: string;
}

/** Inputs of the system prompt. */
export interface SystemPromptInput {
  cwd: string;
  tools: AgentTool[];
  /** Replaces the base prompt. */
  systemPrompt?: string;
  /** Appended in order; each is text, or a path to a file whose content is appended. */
  append?: string[];
  contextFiles?: ContextFile[];
  /** Skills the model may load; listed only when the `read` tool is active (it is how the model loads one). */
  skills?: readonly Skill[];
  /** The rules, when not the tools' own guidelines (a `before_agent_start` handler changed them). */
  guidelines?: string[];
  /** Sections an extension adds (pi 1.6's `systemPromptOptions.sections`), after the others. */
  sections?: Record<string, string>;
}

/**
 * Find `AGENTS.md` (else `CLAUDE.md`) in the working directory and each parent up to
 * the repository root (the folder with `.git`), outermost first, then the user's
 * `<agent dir>/AGENTS.md` before them all.
 */
export function findContextFiles(cwd: string, home: string): ContextFile[] {
  const found: ContextFile[] = [];
  let dir = resolve(cwd);
  for (;;) {
    for (const name of ["AGENTS.md", "CLAUDE.md"]) {
      const path = join(dir, name);
      if (existsSync(path)) {
        found.push({ path, content: readFileSync(path, "utf8") });
        break;
      }
    }
    if (existsSync(join(dir, ".git"))) break;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  found.reverse();
  const user = join(home, "AGENTS.md");
  if (existsSync(user) && !found.some((f) => f.path === user)) {
    found.unshift({ path: user, content: readFileSync(user, "utf8") });
  }
  return found;
}

/** Text given to `--append-system-prompt`: a readable file's content, else the text itself. */
export function resolveAppend(value: string, cwd: string): string {
  const path = resolve(cwd, value);
  if (value.length < 4096 && !value.includes("\n") && existsSync(path)) return readFileSync(path, "utf8");
  return value;
}

/**
 * Guideline texts as pi normalizes them: each trimmed, blank ones dropped, a repeat kept
 * once where it first appears. pi applies it twice: to each tool's own list (what
 * extensions get in `systemPromptOptions.promptGuidelines`, the tools' lists joined, so a
 * text two tools share is there twice) and to all the active tools' texts when it writes
 * the prompt's Guidelines bullets (there each text is once).
 */
export function uniqueGuidelines(texts: readonly string[] | undefined): string[] {
  const seen = new Set<string>();
  for (const text of texts ?? []) {
    const trimmed = text.trim();
    if (trimmed.length > 0) seen.add(trimmed);
  }
  return [...seen];
}

/** A section name an extension may add (pi 1.6's rule); `preamble` is the base prompt's own. */
const SECTION_NAME = /^[a-z][a-z0-9_-]*$/;

/**
 * The prompt as pi 1.6 structures it: named, independently replaceable sections in order
 * (the base prompt as `preamble`; the tools, their rules, appended text, project context,
 * skills and working directory each wrapped in a tag of its name), which the session
 * records as a system message and patches by name when one changes. No date: a prompt that
 * changed every day would change the start of every conversation (pi 1.6 has none either).
 * Pure over its input; throws on an extension section with a bad name, as pi.
 */
export function buildSystemPromptSections(input: SystemPromptInput): Record<string, string> {
  for (const name of Object.keys(input.sections ?? {})) {
    if (!SECTION_NAME.test(name) || name === "preamble") throw new Error(`Invalid system prompt section name: ${name}`);
  }
  const body: Record<string, string> = {};
  if (input.tools.length > 0) {
    const lines = input.tools
      .filter((t) => t.listed !== false)
      .map((t) => `- ${t.name}: ${t.snippet ?? t.description}`);
    body.tools = `Available tools:\n${lines.length > 0 ? lines.join("\n") : "(none)"}`;
    const guidelines = uniqueGuidelines(input.guidelines ?? input.tools.flatMap((t) => t.guidelines ?? []));
    if (guidelines.length > 0) body.rules = `Guidelines:\n${guidelines.map((g) => `- ${g}`).join("\n")}`;
  } else {
    body.tools = "No tools are available in this session: answer from the conversation alone.";
  }
  const append = (input.append ?? []).map((t) => t.trim()).filter((t) => t.length > 0);
  if (append.length > 0) body.addendum = append.join("\n\n");
  const files = input.contextFiles ?? [];
  if (files.length > 0) {
    body.project_context = [
      "Project-specific instructions and guidelines:",
      ...files.map((f) => `<project_instructions path="${f.path}">\n${f.content.trim()}\n</project_instructions>`),
    ].join("\n\n");
  }
  if (input.tools.some((t) => t.name === "read")) {
    const skills = formatSkillsForPrompt(input.skills ?? []);
    if (skills) body.skills = skills;
  }
  body.cwd = input.cwd;
  for (const [name, text] of Object.entries(input.sections ?? {})) if (text) body[name] = text;
  const sections: Record<string, string> = { preamble: input.systemPrompt ?? BASE_PROMPT };
  for (const [name, text] of Object.entries(body)) sections[name] = `<${name}>\n${text}\n</${name}>`;
  return sections;
}

/** The prompt as one text: the sections in order, as the recorded system message reads (pi's `getSystemMessageText`). */
export function systemPromptText(sections: Record<string, string>): string {
  return Object.values(sections).join("\n\n");
}
