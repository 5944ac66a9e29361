import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  discoverPromptTemplates,
  expandPromptTemplate,
  parseCommandArgs,
  parseTemplate,
  substituteArgs,
} from "../../../worker/resources/prompt-templates.js";

describe("parseCommandArgs", () => {
  it.each([
    { text: "", args: [] },
    { text: "a b  c", args: ["a", "b", "c"] },
    { text: "Button \"onClick handler\" 'x y'", args: ["Button", "onClick handler", "x y"] },
    { text: "a\tb", args: ["a", "b"] },
    { text: 'pre"fix"ed', args: ["prefixed"] },
    { text: '"" a', args: ["a"] },
  ])("$text", ({ text, args }) => expect(parseCommandArgs(text)).toEqual(args));
});

describe("substituteArgs (pi's placeholders)", () => {
  const args = ["one", "two", "three", "four"];
  it.each([
    { content: "$1 and $2", expected: "one and two" },
    { content: "missing: [$9]", expected: "missing: []" },
    { content: "all: $@", expected: "all: one two three four" },
    { content: "all: $ARGUMENTS", expected: "all: one two three four" },
    { content: "from 2: ${@:2}", expected: "from 2: two three four" },
    { content: "two from 2: ${@:2:2}", expected: "two from 2: two three" },
    { content: "zero is one: ${@:0}", expected: "zero is one: one two three four" },
    { content: "no placeholders", expected: "no placeholders" },
  ])("$content", ({ content, expected }) => expect(substituteArgs(content, args)).toBe(expected));

  it("does not substitute inside argument values", () => {
    expect(substituteArgs("$1|$2", ["$2", "$@"])).toBe("$2|$@");
  });
});

describe("parseTemplate", () => {
  it("takes the description from the frontmatter, with the argument hint", () => {
    const t = parseTemplate(
      "/p/review.md",
      '---\ndescription: Review it\nargument-hint: "<PR>"\n---\nReview $1\n',
      "user",
      "/p",
    );
    expect(t).toMatchObject({ name: "review", description: "Review it", argumentHint: "<PR>", content: "Review $1" });
    expect(t.sourceInfo).toEqual({
      path: "/p/review.md",
      source: "local",
      scope: "user",
      origin: "top-level",
      baseDir: "/p",
    });
  });

  it("falls back to the first non-empty line, cut at 60 characters", () => {
    const long = "x".repeat(70);
    expect(parseTemplate("/p/a.md", `\n\n${long}\nmore`, "path", "/p").description).toBe(`${"x".repeat(60)}...`);
    expect(parseTemplate("/p/a.md", "\nshort line\n", "path", "/p").sourceInfo.scope).toBe("temporary");
  });
});

describe("discoverPromptTemplates and expansion", () => {
  let root: string;
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("reads home and trusted project prompts (not recursively), then explicit paths", async () => {
    root = await mkdtemp(join(tmpdir(), "pi-orch-prompts-"));
    const home = join(root, "home");
    const project = join(root, "proj", ".pi");
    await mkdir(join(home, "prompts", "nested"), { recursive: true });
    await mkdir(join(project, "prompts"), { recursive: true });
    await writeFile(join(home, "prompts", "review.md"), "---\ndescription: Review\n---\nReview $1 with care: ${@:2}");
    await writeFile(join(home, "prompts", "nested", "hidden.md"), "not found");
    await writeFile(join(home, "prompts", "notes.txt"), "not a template");
    await writeFile(join(project, "prompts", "component.md"), "Create component $1 with $@");
    const extra = join(root, "extra.md");
    await writeFile(extra, "Extra $ARGUMENTS");

    const trusted = discoverPromptTemplates({
      home,
      projectDir: project,
      trusted: true,
      includeDefaults: true,
      paths: [extra, join(root, "missing.md")],
    });
    expect(trusted.templates.map((t) => [t.name, t.sourceInfo.scope])).toEqual([
      ["review", "user"],
      ["component", "project"],
      ["extra", "temporary"],
    ]);
    expect(trusted.warnings).toEqual([
      { path: join(root, "missing.md"), message: "prompt template path does not exist" },
    ]);
    expect(expandPromptTemplate('/review src/a.ts "be brief" twice', trusted.templates)).toBe(
      "Review src/a.ts with care: be brief twice",
    );
    expect(expandPromptTemplate("/component Button", trusted.templates)).toBe("Create component Button with Button");
    expect(expandPromptTemplate("/unknown x", trusted.templates)).toBe("/unknown x");
    expect(expandPromptTemplate("review x", trusted.templates)).toBe("review x");

    const untrusted = discoverPromptTemplates({
      home,
      projectDir: project,
      trusted: false,
      includeDefaults: true,
      paths: [],
    });
    expect(untrusted.templates.map((t) => t.name)).toEqual(["review"]);
    expect(untrusted.skippedProject).toEqual([join(project, "prompts")]);

    const off = discoverPromptTemplates({
      home,
      projectDir: project,
      trusted: true,
      includeDefaults: false,
      paths: [extra],
    });
    expect(off.templates.map((t) => t.name)).toEqual(["extra"]);
  });
});
