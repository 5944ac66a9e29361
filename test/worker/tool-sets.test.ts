import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  BUILT_IN_TOOLS,
  DEFAULT_ACTIVE_TOOLS,
  type NoTools,
  selectTools,
  toolNameMatcher,
} from "../../worker/tools/index.js";
import {
  buildSystemPromptSections,
  systemPromptText,
  findContextFiles,
  uniqueGuidelines,
  type SystemPromptInput,
} from "../../worker/system-prompt.js";

const buildSystemPrompt = (input: SystemPromptInput) => systemPromptText(buildSystemPromptSections(input));
import type { AgentTool } from "../../worker/types.js";
import { tempDir } from "../support/rpc-worker.js";

const known = BUILT_IN_TOOLS.map((t) => t.name);

describe("toolNameMatcher (--exclude-tools)", () => {
  it.each([
    [["bash"], "bash", true],
    [["bash"], "bash2", false],
    [["deploy_*"], "deploy_prod", true],
    [["deploy_*"], "deploy_", true],
    [["deploy_*"], "my_deploy_x", false],
    [["*_dry"], "deploy_dry", true],
    [["mcp__*__read"], "mcp__radius__read", true],
    [["a.b*"], "axb", false],
    [[], "read", false],
  ])("%j matches %s: %s", (entries, name, matched) => {
    expect(toolNameMatcher(entries)(name)).toBe(matched);
  });
});

describe("selectTools (pi 1.6.0's --tools, --no-tools, --no-builtin-tools, --exclude-tools)", () => {
  const probe = ["read", "grep", "notes", "deploy_prod", "mcp__x__y"];
  it.each<[string, string | undefined, NoTools | undefined, string[], string[], string[]]>([
    // name, --tools, no-tools, --exclude-tools, active built-ins, which of `probe` exist
    ["nothing said", undefined, undefined, [], ["read", "bash", "edit", "write"], probe],
    ["an allow-list: only those exist", "read,grep", undefined, [], ["read", "grep"], ["read", "grep"]],
    ["an allow-list with spaces and repeats", " ls , ls,read", undefined, [], ["read", "ls"], ["read"]],
    ["an allow-list with a pattern", "read,deploy_*", undefined, [], ["read"], ["read", "deploy_prod"]],
    ["an unknown name matches nothing", "read,teleport", undefined, [], ["read"], ["read"]],
    ["an empty list: nothing", "", undefined, [], [], []],
    [
      "modifiers change the defaults, every tool stays",
      "+grep,-write",
      undefined,
      [],
      ["read", "bash", "edit", "grep"],
      probe,
    ],
    ["--no-tools: nothing at all", undefined, "all", [], [], []],
    ["--no-tools with modifiers: only what they add", "+grep,+notes", "all", [], ["grep"], ["grep", "notes"]],
    ["--no-tools with a list: the list", "read,notes", "all", [], ["read"], ["read", "notes"]],
    ["--no-builtin-tools: none active, all exist", undefined, "builtin", [], [], probe],
    ["--no-builtin-tools with modifiers", "+grep", "builtin", [], ["grep"], probe],
    ["--exclude-tools beats the allow-list", "read,grep,deploy_*", undefined, ["grep", "deploy_*"], ["read"], ["read"]],
    ["--exclude-tools beats the defaults", undefined, undefined, ["bash"], ["read", "edit", "write"], probe],
  ])("%s", (_name, spec, noTools, exclude, active, exist) => {
    const selection = selectTools(spec, known, noTools, exclude);
    expect(selection.active).toEqual(active);
    expect(probe.filter(selection.registered)).toEqual(exist);
  });

  it("refuses a mix of names and modifiers, and a modifier with a pattern, in pi's words", () => {
    expect(() => selectTools("read,+grep", known)).toThrow(
      "--tools: tool names cannot be mixed with +name or -name entries",
    );
    expect(() => selectTools("+gr*", known)).toThrow(
      "--tools: +name and -name entries take exact tool names, not patterns: +gr*",
    );
  });

  it.each([
    ["+tool_search", { tool_search: true, mcp__s__t: undefined }],
    ["-tool_search,+grep", { tool_search: false, mcp__s__t: undefined }],
    ["read,mcp__s__*", { tool_search: undefined, mcp__s__t: true }],
    [undefined, { tool_search: undefined, mcp__s__t: undefined }],
  ])("says what --tools %s wants of an extension's tool (a registered-inactive one too)", (spec, wanted) => {
    const selection = selectTools(spec, known);
    expect({ tool_search: selection.wanted("tool_search"), mcp__s__t: selection.wanted("mcp__s__t") }).toEqual(wanted);
  });

  it("defaults to read, bash, edit, write", () => {
    expect(DEFAULT_ACTIVE_TOOLS).toEqual(["read", "bash", "edit", "write"]);
  });
});

describe("uniqueGuidelines (pi's per-tool and prompt-wide normalization)", () => {
  it.each<[string, string[] | undefined, string[]]>([
    ["none", undefined, []],
    ["an empty list", [], []],
    ["texts kept in order", ["b", "a"], ["b", "a"]],
    ["spaces and line ends trimmed", ["  a  ", "b\n", "\tc"], ["a", "b", "c"]],
    ["blank texts dropped", ["", "   ", "\n", "a"], ["a"]],
    ["a repeat kept where it first appears", ["a", "b", "a"], ["a", "b"]],
    ["texts equal once trimmed are one", [" a", "a ", "a"], ["a"]],
    ["inner spaces kept", ["a  b", "a b"], ["a  b", "a b"]],
  ])("%s", (_name, texts, expected) => {
    expect(uniqueGuidelines(texts)).toEqual(expected);
  });

  it("writes each guideline once across the active tools, trimmed, in tool order", () => {
    const tool = (name: string, guidelines: string[]): AgentTool => ({ ...BUILT_IN_TOOLS[0], name, guidelines });
    const { rules } = buildSystemPromptSections({
      cwd: "/p",
      tools: [tool("a", [" one ", "two", "one"]), tool("b", ["two", "three\n", " "])],
    });
    expect(rules).toBe("<rules>\nGuidelines:\n- one\n- two\n- three\n</rules>");
  });
});

describe("system prompt", () => {
  let dirs: { cleanup: () => void }[] = [];
  afterEach(() => {
    for (const d of dirs) d.cleanup();
    dirs = [];
  });

  const tools = (names: string[]) => BUILT_IN_TOOLS.filter((t) => names.includes(t.name));

  it("carries the snippet and guidelines of active tools only", () => {
    const withEdit = buildSystemPrompt({ cwd: "/p", tools: tools(["read", "edit"]) });
    const without = buildSystemPrompt({ cwd: "/p", tools: tools(["read"]) });
    const edit = BUILT_IN_TOOLS.find((t) => t.name === "edit")!;
    expect(withEdit).toContain(`- edit: ${edit.snippet}`);
    expect(edit.guidelines).toHaveLength(2);
    for (const g of edit.guidelines!) expect(withEdit).toContain(g);
    expect(without).not.toContain(`- edit:`);
    for (const g of edit.guidelines!) expect(without).not.toContain(g);
  });

  it("replaces the base with --system-prompt, appends text, names the cwd in pi 1.6's sections", () => {
    const input = { cwd: "/work/x", tools: [], systemPrompt: "CUSTOM BASE", append: ["EXTRA ONE", "EXTRA TWO"] };
    const p = buildSystemPrompt(input);
    expect(p.startsWith("CUSTOM BASE")).toBe(true);
    expect(p).not.toContain("expert coding assistant");
    expect(p.indexOf("EXTRA ONE")).toBeLessThan(p.indexOf("EXTRA TWO"));
    // No date: a prompt that changed every day would change the start of every conversation.
    expect(p).not.toMatch(/\d{4}-\d{2}-\d{2}/);
    const sections = buildSystemPromptSections(input);
    expect(Object.keys(sections)).toEqual(["preamble", "tools", "addendum", "cwd"]);
    expect(sections.cwd).toBe("<cwd>\n/work/x\n</cwd>");
    expect(sections.addendum).toBe("<addendum>\nEXTRA ONE\n\nEXTRA TWO\n</addendum>");
    expect(p).toBe(Object.values(sections).join("\n\n"));
  });

  it("adds an extension's sections after its own and refuses a bad section name, as pi 1.6", () => {
    const sections = buildSystemPromptSections({ cwd: "/p", tools: [], sections: { team_rules: "be kind" } });
    expect(Object.keys(sections).at(-1)).toBe("team_rules");
    expect(sections.team_rules).toBe("<team_rules>\nbe kind\n</team_rules>");
    expect(() => buildSystemPromptSections({ cwd: "/p", tools: [], sections: { preamble: "x" } })).toThrow(
      "Invalid system prompt section name: preamble",
    );
    expect(() => buildSystemPromptSections({ cwd: "/p", tools: [], sections: { "Bad Name": "x" } })).toThrow();
  });

  it("finds AGENTS.md / CLAUDE.md from cwd up to the repository root, plus the user's", () => {
    const root = tempDir();
    const home = tempDir();
    dirs.push(root, home);
    mkdirSync(join(root.path, ".git"));
    mkdirSync(join(root.path, "pkg", "sub"), { recursive: true });
    writeFileSync(join(root.path, "AGENTS.md"), "root rules");
    writeFileSync(join(root.path, "pkg", "CLAUDE.md"), "pkg rules");
    writeFileSync(join(home.path, "AGENTS.md"), "user rules");
    const files = findContextFiles(join(root.path, "pkg", "sub"), home.path);
    expect(files.map((f) => f.content)).toEqual(["user rules", "root rules", "pkg rules"]);
    const prompt = buildSystemPrompt({ cwd: root.path, tools: [], contextFiles: files });
    expect(prompt.indexOf("root rules")).toBeLessThan(prompt.indexOf("pkg rules"));
  });

  it("stops at the repository root", () => {
    const outer = tempDir();
    dirs.push(outer);
    writeFileSync(join(outer.path, "AGENTS.md"), "outside the repo");
    mkdirSync(join(outer.path, "repo", ".git"), { recursive: true });
    const files = findContextFiles(join(outer.path, "repo"), join(outer.path, "nohome"));
    expect(files).toEqual([]);
  });
});
