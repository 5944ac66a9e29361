import { describe, expect, it } from "vitest";
import { applyDeltaPatterns, applyPatterns } from "../../../worker/packages/patterns.js";

const root = "/pkg";
const files = [
  "/pkg/extensions/a.ts",
  "/pkg/extensions/legacy.ts",
  "/pkg/prompts/review.md",
  "/pkg/prompts/deep/fix.md",
  "/pkg/skills/greet/SKILL.md",
];

describe("applyPatterns (pi's package filters)", () => {
  it.each([
    [["extensions/*.ts", "!extensions/legacy.ts"], ["/pkg/extensions/a.ts"]],
    [["prompts/review.md"], ["/pkg/prompts/review.md"]],
    [["prompts/**/*.md"], ["/pkg/prompts/review.md", "/pkg/prompts/deep/fix.md"]],
    [
      ["*.md", "-prompts/review.md"],
      ["/pkg/prompts/deep/fix.md", "/pkg/skills/greet/SKILL.md"],
    ],
    [
      ["!*.ts", "+extensions/legacy.ts"],
      [...files.slice(2), "/pkg/extensions/legacy.ts"],
    ],
    [["greet"], ["/pkg/skills/greet/SKILL.md"]],
    [["+skills/greet", "-skills/greet"], files.filter((f) => !f.includes("greet"))],
  ])("%j keeps the files it names", (patterns, expected) => {
    expect([...applyPatterns(files, patterns, root)]).toEqual(expected);
  });
});

describe("applyDeltaPatterns (a project entry with autoload: false)", () => {
  it("turns on and off only the files its patterns name, the last pattern winning", () => {
    const delta = applyDeltaPatterns(files, ["-extensions/a.ts", "prompts/*.md", "!prompts/review.md"], root);
    expect([...delta]).toEqual([
      ["/pkg/extensions/a.ts", false],
      ["/pkg/prompts/review.md", false],
    ]);
  });
});
