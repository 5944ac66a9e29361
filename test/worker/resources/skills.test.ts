import { mkdtemp, mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  discoverSkills,
  expandSkillCommand,
  formatSkillsForPrompt,
  parseSkill,
  skillNameProblems,
} from "../../../worker/resources/skills.js";
import { buildSystemPromptSections, type SystemPromptInput, systemPromptText } from "../../../worker/system-prompt.js";

const buildSystemPrompt = (input: SystemPromptInput) => systemPromptText(buildSystemPromptSections(input));
import { BUILT_IN_TOOLS } from "../../../worker/tools/index.js";

describe("skillNameProblems (Agent Skills rules)", () => {
  it.each([
    { name: "pdf-tools", folder: "pdf-tools", problems: [] },
    { name: "pdf-tools", folder: "other", problems: [/does not match parent directory "other"/] },
    { name: "PDF", folder: "PDF", problems: [/invalid characters/] },
    { name: "-pdf", folder: "-pdf", problems: [/start or end with a hyphen/] },
    { name: "pdf--x", folder: "pdf--x", problems: [/consecutive hyphens/] },
    { name: "a".repeat(65), folder: "a".repeat(65), problems: [/exceeds 64 characters/] },
  ])("$name in $folder", ({ name, folder, problems }) => {
    const got = skillNameProblems(name, folder);
    expect(got).toHaveLength(problems.length);
    problems.forEach((p, i) => expect(got[i]).toMatch(p));
  });
});

describe("parseSkill", () => {
  it("reads name, description and disable-model-invocation from the frontmatter", () => {
    const { skill, warnings } = parseSkill(
      "/s/brave/SKILL.md",
      "---\nname: brave\ndescription: >\n  Web search. Use for docs.\ndisable-model-invocation: true\nmetadata:\n  a: 1\n---\n# Body\n",
      "user",
    );
    expect(warnings).toEqual([]);
    expect(skill).toMatchObject({
      name: "brave",
      description: "Web search. Use for docs.\n",
      baseDir: "/s/brave",
      disableModelInvocation: true,
    });
  });

  it("does not load a skill without a description, and says why", () => {
    const { skill, warnings } = parseSkill("/s/x/SKILL.md", "---\nname: x\n---\nbody", "user");
    expect(skill).toBeUndefined();
    expect(warnings[0]).toEqual({ path: "/s/x/SKILL.md", message: "description is required; the skill is not loaded" });
  });

  it("reports bad YAML as a warning naming the file", () => {
    const { skill, warnings } = parseSkill("/s/x/SKILL.md", "---\ndescription: [unclosed\n---\n", "user");
    expect(skill).toBeUndefined();
    expect(warnings[0]!.message).toMatch(/^bad frontmatter: /);
  });
});

describe("discoverSkills", () => {
  let root: string;
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function skill(dir: string, name: string, description = `${name} things`): Promise<string> {
    await mkdir(dir, { recursive: true });
    const path = join(dir, "SKILL.md");
    await writeFile(path, `---\nname: ${name}\ndescription: ${description}\n---\nUse ${name} like this.\n`);
    return path;
  }

  it("finds SKILL.md folders recursively and root .md files; project skills only when trusted; first name wins", async () => {
    root = await mkdtemp(join(tmpdir(), "pi-orch-skills-"));
    const home = join(root, "home");
    const projectDir = join(root, "proj", ".pi");
    await skill(join(home, "skills", "search"), "search");
    await skill(join(home, "skills", "group", "pdf"), "pdf");
    await skill(join(home, "skills", "pdf", "inner"), "ignored-under-skill-root");
    await writeFile(join(home, "skills", "pdf", "SKILL.md"), "---\ndescription: pdf at the top\n---\n");
    await writeFile(join(home, "skills", "quick.md"), "---\nname: quick\ndescription: one file\n---\n");
    await mkdir(join(home, "skills", "node_modules", "dep"), { recursive: true });
    await skill(join(home, "skills", "node_modules", "dep"), "dep");
    await skill(join(projectDir, "skills", "search"), "search", "project copy");
    await skill(join(projectDir, "skills", "deploy"), "deploy");
    const extra = await skill(join(root, "extra", "lint"), "lint");
    await symlink(join(home, "skills", "search"), join(root, "search-link"));

    const trusted = discoverSkills({
      home,
      projectDir,
      trusted: true,
      includeDefaults: true,
      paths: [extra, join(root, "search-link"), join(root, "nope")],
    });
    expect(trusted.skills.map((s) => [s.name, s.sourceInfo.scope, s.filePath])).toEqual([
      ["pdf", "user", join(home, "skills", "group", "pdf", "SKILL.md")],
      ["quick", "user", join(home, "skills", "quick.md")],
      ["search", "user", join(home, "skills", "search", "SKILL.md")],
      ["deploy", "project", join(projectDir, "skills", "deploy", "SKILL.md")],
      ["lint", "temporary", extra],
    ]);
    const messages = trusted.warnings.map((w) => `${w.path}: ${w.message}`);
    expect(messages).toEqual([
      `${join(home, "skills", "quick.md")}: name "quick" does not match parent directory "skills"`,
      `${join(root, "search-link", "SKILL.md")}: name "search" does not match parent directory "search-link"`,
      `${join(root, "nope")}: skill path does not exist`,
      `${join(home, "skills", "pdf", "SKILL.md")}: name "pdf" is taken by ${join(home, "skills", "group", "pdf", "SKILL.md")}; this skill is not loaded`,
      `${join(projectDir, "skills", "search", "SKILL.md")}: name "search" is taken by ${join(home, "skills", "search", "SKILL.md")}; this skill is not loaded`,
    ]);

    const untrusted = discoverSkills({ home, projectDir, trusted: false, includeDefaults: true, paths: [] });
    expect(untrusted.skills.map((s) => s.name)).toEqual(["pdf", "quick", "search"]);
    expect(untrusted.skippedProject).toEqual([join(projectDir, "skills")]);

    const noSkills = discoverSkills({ home, projectDir, trusted: true, includeDefaults: false, paths: [extra] });
    expect(noSkills.skills.map((s) => s.name)).toEqual(["lint"]);
  });

  it("expands /skill:name args with the body read from disk, and lists skills in the system prompt", async () => {
    root = await mkdtemp(join(tmpdir(), "pi-orch-skills-"));
    const path = await skill(join(root, "skills", "brave"), "brave", "Search <the> web & more");
    await writeFile(
      join(root, "skills", "hidden.md"),
      "---\ndescription: only by command\ndisable-model-invocation: true\n---\nHidden body",
    );
    const { skills } = discoverSkills({
      home: root,
      projectDir: join(root, "none"),
      trusted: false,
      includeDefaults: true,
      paths: [],
    });
    expect(expandSkillCommand("/skill:brave find  docs ", skills)).toBe(
      `<skill name="brave" location="${path}">\nReferences are relative to ${join(root, "skills", "brave")}.\n\nUse brave like this.\n</skill>\n\nfind  docs`,
    );
    expect(expandSkillCommand("/skill:brave", skills)).not.toContain("\n\n\n");
    expect(expandSkillCommand("/skill:nope x", skills)).toBe("/skill:nope x");

    const section = formatSkillsForPrompt(skills);
    expect(section).toContain("<name>brave</name>");
    expect(section).toContain("<description>Search &lt;the&gt; web &amp; more</description>");
    expect(section).not.toContain("hidden");

    const withRead = buildSystemPrompt({ cwd: root, tools: BUILT_IN_TOOLS, skills });
    expect(withRead).toContain("<available_skills>");
    const withoutRead = buildSystemPrompt({
      cwd: root,
      tools: BUILT_IN_TOOLS.filter((t) => t.name !== "read"),
      skills,
    });
    expect(withoutRead).not.toContain("<available_skills>");
  });
});
