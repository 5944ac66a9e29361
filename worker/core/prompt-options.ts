/**
 * pi 1.6's structured system prompt for `before_agent_start`: the options the prompt is
 * built from (`BuildSystemPromptOptions`, collections complete and mutable), and the
 * prompt rendered from them after handlers changed them in place: their `sections` as
 * `<name>` blocks after the working directory, the selected tools' `toolGuidelines` and the
 * extra `promptGuidelines` as the rules.
 * Pure over its input.
 */
import type { SystemPromptOptions } from "../extensions/hooks.js";
import type { Skill } from "../resources/skills.js";
import { buildSystemPromptSections, systemPromptText, uniqueGuidelines, type ContextFile } from "../system-prompt.js";
import type { AgentTool } from "../types.js";

/** What the session builds its prompt from. */
export interface PromptSource {
  cwd: string;
  tools: AgentTool[];
  /** `--system-prompt` or SYSTEM.md: replaces the base prompt. */
  customPrompt?: string;
  /** `--append-system-prompt` texts and APPEND_SYSTEM.md, in order. */
  appendTexts: string[];
  contextFiles: ContextFile[];
  skills: readonly Skill[];
}

/** The options in pi's normalized shape, each collection a fresh copy a handler may change. */
export function promptOptions(source: PromptSource): SystemPromptOptions {
  const toolSnippets: Record<string, string> = {};
  const toolGuidelines: Record<string, string[]> = {};
  for (const t of source.tools) {
    if (t.listed !== false) toolSnippets[t.name] = t.snippet ?? t.description;
    const guidelines = uniqueGuidelines(t.guidelines);
    if (guidelines.length > 0) toolGuidelines[t.name] = guidelines;
  }
  return {
    cwd: source.cwd,
    ...(source.customPrompt !== undefined ? { customPrompt: source.customPrompt } : {}),
    selectedTools: source.tools.map((t) => t.name),
    hiddenTools: [],
    toolSnippets,
    toolGuidelines,
    // pi 1.6: the tools' own rules are in toolGuidelines; these are the extra ones handlers add.
    promptGuidelines: [],
    ...(source.appendTexts.length > 0 ? { appendSystemPrompt: source.appendTexts.join("\n\n") } : {}),
    sections: {},
    contextFiles: source.contextFiles.map((f) => ({ ...f })),
    skills: source.skills.map((s) => ({ ...s })),
  };
}

/**
 * The prompt `options` give (changed by handlers or not; `source` is what they were made
 * from). Throws, as pi does, on a section whose name is not a tag name or is `preamble`.
 */
export function renderPromptOptions(source: PromptSource, options: SystemPromptOptions): string {
  const sameAppend = options.appendSystemPrompt === promptOptions(source).appendSystemPrompt;
  return systemPromptText(
    buildSystemPromptSections({
      cwd: options.cwd,
      tools: source.tools,
      ...(options.customPrompt !== undefined ? { systemPrompt: options.customPrompt } : {}),
      append: sameAppend ? source.appendTexts : options.appendSystemPrompt ? [options.appendSystemPrompt] : [],
      contextFiles: options.contextFiles,
      skills: options.skills,
      guidelines: uniqueGuidelines([
        ...options.selectedTools.flatMap((name) => options.toolGuidelines[name] ?? []),
        ...options.promptGuidelines,
      ]),
      // As pi: a section with empty content is left out; each is a block tagged with its name, after the others.
      sections: options.sections ?? {},
    }),
  );
}
