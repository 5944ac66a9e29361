import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { recordTrust } from "../../../worker/extensions/trust.js";
import { extendResources, loadResources } from "../../../worker/resources/index.js";
import { uniqueSkills, type Skill } from "../../../worker/resources/skills.js";
import { sourceInfo } from "../../../worker/resources/source-info.js";
import {
  loadSettings,
  maxRetryDelayMs,
  mergeSettings,
  parseSettings,
  SettingsError,
} from "../../../worker/resources/settings.js";

describe("parseSettings", () => {
  it.each([
    {
      text: "{ not json",
      error: /^settings file \/h\/settings\.json: is not valid JSON \(.+\); fix the file or remove it$/,
    },
    { text: "[1]", error: /must hold a JSON object/ },
    { text: '{"defaultThinkingLevel": "huge"}', error: /key "defaultThinkingLevel" .* \(it is "huge"\)/ },
    {
      text: '{"compaction": {"reserveTokens": "lots"}}',
      error: /key "compaction\.reserveTokens" must be integer \(it is "lots"\)/,
    },
    { text: '{"retry": {"maxRetries": -1}}', error: /key "retry\.maxRetries" must be >= 0 \(it is -1\)/ },
    {
      text: '{"retry": {"provider": {"maxRetryDelayMs": -5}}}',
      error: /key "retry\.provider\.maxRetryDelayMs" must be >= 0 \(it is -5\)/,
    },
    {
      text: '{"retry": {"provider": {"maxRetryDelayMs": "1m"}}}',
      error: /key "retry\.provider\.maxRetryDelayMs" must be integer \(it is "1m"\)/,
    },
    { text: '{"skills": "one"}', error: /key "skills" must be array \(it is "one"\)/ },
    { text: '{"steeringMode": "some"}', error: /key "steeringMode"/ },
  ])("refuses $text, naming the file and key", ({ text, error }) => {
    expect(() => parseSettings("/h/settings.json", text, "/h", "/home/u")).toThrow(SettingsError);
    expect(() => parseSettings("/h/settings.json", text, "/h", "/home/u")).toThrow(error);
  });

  it("accepts pi's keys that do not apply here, and resolves resource paths against the file's folder and ~", () => {
    const s = parseSettings(
      "/h/settings.json",
      JSON.stringify({
        theme: "dark",
        quietStartup: true,
        skills: ["my-skills", "~/.claude/skills", "/abs"],
        prompts: ["../p"],
        sessionDir: "sessions",
      }),
      "/h",
      "/home/u",
    );
    expect(s.skills).toEqual(["/h/my-skills", "/home/u/.claude/skills", "/abs"]);
    expect(s.prompts).toEqual(["/p"]);
    expect(s.sessionDir).toBe("/h/sessions");
  });
});

describe("mergeSettings", () => {
  it.each([
    {
      name: "project wins a plain key",
      user: { defaultModel: "a" },
      project: { defaultModel: "b" },
      expected: { defaultModel: "b" },
    },
    {
      name: "user key kept",
      user: { defaultProvider: "openai" },
      project: {},
      expected: { defaultProvider: "openai" },
    },
    {
      name: "nested objects merge one level",
      user: { compaction: { enabled: true, reserveTokens: 16384 } },
      project: { compaction: { reserveTokens: 8192 } },
      expected: { compaction: { enabled: true, reserveTokens: 8192 } },
    },
    {
      name: "resource lists are joined, user first",
      user: { skills: ["/h/s"] },
      project: { skills: ["/p/s"] },
      expected: { skills: ["/h/s", "/p/s"] },
    },
  ])("$name", ({ user, project, expected }) => {
    expect(mergeSettings(user, project)).toMatchObject(expected);
  });
});

describe("maxRetryDelayMs (pi's retry.provider.maxRetryDelayMs)", () => {
  it.each([
    { name: "unset: the default applies", user: "{}", project: "{}", expected: undefined },
    {
      name: "from the user file",
      user: '{"retry": {"provider": {"maxRetryDelayMs": 5000}}}',
      project: "{}",
      expected: 5000,
    },
    {
      name: "0 turns the cap off",
      user: '{"retry": {"provider": {"maxRetryDelayMs": 0}}}',
      project: "{}",
      expected: 0,
    },
    {
      name: "the project's wins",
      user: '{"retry": {"provider": {"maxRetryDelayMs": 5000}}}',
      project: '{"retry": {"provider": {"maxRetryDelayMs": 120000}}}',
      expected: 120000,
    },
    {
      name: "a project retry without provider keeps the user's (one level merge)",
      user: '{"retry": {"provider": {"maxRetryDelayMs": 5000}}}',
      project: '{"retry": {"maxRetries": 1}}',
      expected: 5000,
    },
    {
      name: "other SDK keys beside it pass unchecked",
      user: '{"retry": {"provider": {"timeoutMs": 1000, "maxRetries": 2, "maxRetryDelayMs": 7}}}',
      project: "{}",
      expected: 7,
    },
  ])("$name", ({ user, project, expected }) => {
    const merged = mergeSettings(
      parseSettings("/h/settings.json", user, "/h", "/home/u"),
      parseSettings("/p/.pi/settings.json", project, "/p/.pi", "/home/u"),
    );
    expect(maxRetryDelayMs(merged)).toBe(expected);
  });
});

describe("loadSettings and loadResources", () => {
  let root: string;
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("reads the project's settings only when the project is trusted; a bad file names itself", async () => {
    root = await mkdtemp(join(tmpdir(), "pi-orch-settings-"));
    const home = join(root, "home");
    const project = join(root, "proj");
    await mkdir(join(project, ".git"), { recursive: true });
    await mkdir(join(project, ".pi", "prompts"), { recursive: true });
    await mkdir(home, { recursive: true });
    await writeFile(
      join(home, "settings.json"),
      JSON.stringify({
        defaultModel: "user-model",
        defaultThinkingLevel: "low",
        compaction: { keepRecentTokens: 100 },
      }),
    );
    await writeFile(
      join(project, ".pi", "settings.json"),
      JSON.stringify({ defaultModel: "project-model", compaction: { enabled: false }, prompts: ["extra"] }),
    );
    await mkdir(join(project, ".pi", "extra"), { recursive: true });
    await writeFile(join(project, ".pi", "extra", "ship.md"), "Ship $1");
    await writeFile(join(project, ".pi", "prompts", "fix.md"), "Fix $@");
    await writeFile(join(project, ".pi", "SYSTEM.md"), "project system prompt");
    await writeFile(join(home, "APPEND_SYSTEM.md"), "appended from home");

    const untrusted = loadResources({ home, cwd: project, trusted: false });
    expect(untrusted.settings).toMatchObject({ defaultModel: "user-model", compaction: { keepRecentTokens: 100 } });
    expect(untrusted.templates).toEqual([]);
    expect(untrusted.systemFiles.system).toBeUndefined();
    expect(untrusted.systemFiles.append?.text).toBe("appended from home");
    expect(untrusted.skippedProject).toEqual([
      join(project, ".pi", "settings.json"),
      join(project, ".pi", "prompts"),
      join(project, ".pi", "SYSTEM.md"),
    ]);

    recordTrust(home, project, true);
    const trusted = loadResources({ home, cwd: join(project), trusted: true });
    expect(trusted.settings).toMatchObject({
      defaultModel: "project-model",
      defaultThinkingLevel: "low",
      compaction: { keepRecentTokens: 100, enabled: false },
    });
    expect(trusted.templates.map((t) => t.name)).toEqual(["fix", "ship"]);
    expect(trusted.systemFiles.system?.text).toBe("project system prompt");
    expect(trusted.settingsFiles).toEqual([join(home, "settings.json"), join(project, ".pi", "settings.json")]);

    await writeFile(join(project, ".pi", "settings.json"), '{"retry": {"enabled": "yes"}}');
    expect(() => loadSettings({ home, projectDir: join(project, ".pi"), trusted: true })).toThrow(
      `settings file ${join(project, ".pi", "settings.json")}: key "retry.enabled" must be boolean (it is "yes"); fix the file or remove it`,
    );
  });
});

describe("uniqueSkills", () => {
  const skill = (name: string, filePath: string): Skill => ({
    name,
    description: name,
    filePath,
    baseDir: "/s",
    disableModelInvocation: false,
    sourceInfo: sourceInfo(filePath, "path", "/s"),
  });
  it.each<[string, [string, string][], string[], string[]]>([
    ["none", [], [], []],
    [
      "distinct names and files",
      [
        ["a", "/s/a.md"],
        ["b", "/s/b.md"],
      ],
      ["/s/a.md", "/s/b.md"],
      [],
    ],
    [
      "the same file twice: once, no warning",
      [
        ["a", "/s/a.md"],
        ["a", "/s/a.md"],
      ],
      ["/s/a.md"],
      [],
    ],
    [
      "a taken name: the first wins, the later is told",
      [
        ["a", "/s/a.md"],
        ["a", "/t/a.md"],
      ],
      ["/s/a.md"],
      ['name "a" is taken by /s/a.md; this skill is not loaded'],
    ],
  ])("%s", (_name, given, kept, warnings) => {
    const out = uniqueSkills(given.map(([n, f]) => skill(n, f)));
    expect(out.skills.map((s) => s.filePath)).toEqual(kept);
    expect(out.warnings.map((w) => w.message)).toEqual(warnings);
  });
});

describe("extendResources", () => {
  let root: string;
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("gives what one read with the extensions' paths as --skill / --prompt-template gives, telling only the added paths' warnings", async () => {
    root = await mkdtemp(join(tmpdir(), "pi-orch-extend-"));
    const home = join(root, "home");
    const ext = join(root, "ext");
    for (const [dir, name] of [
      [join(home, "skills", "mine"), "mine"],
      [join(ext, "skills", "theirs"), "theirs"],
      [join(ext, "skills", "mine"), "mine"],
    ]) {
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, "SKILL.md"), `---\nname: ${name}\ndescription: ${name} things\n---\nbody\n`);
    }
    await mkdir(join(home, "prompts"), { recursive: true });
    await writeFile(join(home, "prompts", "fix.md"), "Fix $@");
    await writeFile(join(ext, "ship.md"), "Ship $1");
    const cwd = join(root, "proj");
    await mkdir(cwd, { recursive: true });
    const paths = { skillPaths: [join(ext, "skills"), join(ext, "missing")], promptPaths: ["../ext/ship.md"] };
    const base = loadResources({ home, cwd, trusted: false });
    const extended = extendResources(base, paths, { home, cwd, trusted: false });
    const oneRead = loadResources({
      home,
      cwd,
      trusted: false,
      skillPaths: paths.skillPaths,
      promptTemplatePaths: paths.promptPaths,
    });
    expect(extended.skills).toEqual(oneRead.skills);
    expect(extended.templates).toEqual(oneRead.templates);
    expect(extended.skills.map((s) => s.name)).toEqual(["mine", "theirs"]);
    expect(extended.templates.map((t) => t.name)).toEqual(["fix", "ship"]);
    expect(extended.settings).toBe(base.settings);
    expect(extended.warnings.map((w) => w.message).sort()).toEqual(oneRead.warnings.map((w) => w.message).sort());
    expect(extended.warnings.map((w) => w.message)).toEqual(
      expect.arrayContaining([
        `name "mine" is taken by ${join(home, "skills", "mine", "SKILL.md")}; this skill is not loaded`,
        "skill path does not exist",
      ]),
    );
  });
});
