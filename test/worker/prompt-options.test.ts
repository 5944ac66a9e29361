import { describe, expect, it } from "vitest";
import { promptOptions, renderPromptOptions, type PromptSource } from "../../worker/core/prompt-options.js";
import { buildSystemPromptSections, type SystemPromptInput, systemPromptText } from "../../worker/system-prompt.js";
import { BUILT_IN_TOOLS } from "../../worker/tools/index.js";

const buildSystemPrompt = (input: SystemPromptInput) => systemPromptText(buildSystemPromptSections(input));

const SOURCE: PromptSource = {
  cwd: "/work/project",
  tools: BUILT_IN_TOOLS.slice(0, 4),
  appendTexts: ["Always answer briefly. "],
  contextFiles: [{ path: "/work/project/AGENTS.md", content: "Use tabs." }],
  skills: [],
};

describe("before_agent_start's prompt options", () => {
  it("render the session's own prompt when no handler changed them", () => {
    const same = buildSystemPrompt({
      cwd: SOURCE.cwd,
      tools: SOURCE.tools,
      append: SOURCE.appendTexts,
      contextFiles: SOURCE.contextFiles,
      skills: SOURCE.skills,
    });
    expect(renderPromptOptions(SOURCE, promptOptions(SOURCE))).toBe(same);
  });

  it("hand each tool's rules by name and start with no extra rules and no sections, as pi 1.6", () => {
    const o = promptOptions(SOURCE);
    expect(o.selectedTools).toEqual(["read", "bash", "edit", "write"]);
    expect(Object.keys(o.toolGuidelines)).toEqual(o.selectedTools);
    expect(o.promptGuidelines).toEqual([]);
    expect(o.sections).toEqual({});
    expect(o.hiddenTools).toEqual([]);
  });

  it("render added rules once, and non-empty sections as tagged blocks at the end", () => {
    const o = promptOptions(SOURCE);
    o.promptGuidelines.push("Prefer small diffs", "Prefer small diffs");
    Object.assign(o.sections, { empty: "", house_rules: "No emoji." });
    const text = renderPromptOptions(SOURCE, o);
    expect(text.match(/- Prefer small diffs/g)).toHaveLength(1);
    expect(text.endsWith("<cwd>\n/work/project\n</cwd>\n\n<house_rules>\nNo emoji.\n</house_rules>")).toBe(true);
    expect(text).not.toContain("<empty>");
  });

  it.each(["preamble", "Tool", "1st", "a b"])("refuse a section named %j, as pi", (name) => {
    const o = promptOptions(SOURCE);
    o.sections[name] = "x";
    expect(() => renderPromptOptions(SOURCE, o)).toThrow(`Invalid system prompt section name: ${name}`);
  });
});
