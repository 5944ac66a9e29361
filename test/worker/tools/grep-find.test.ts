import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { compileGlob, findRg, matchGitignore, parseGitignore } from "../../../worker/tools/file-walk.js";
import { createFindTool, type FindParams } from "../../../worker/tools/find.js";
import { createGrepTool, type GrepParams } from "../../../worker/tools/grep.js";
import type { ToolContext, ToolResult } from "../../../worker/types.js";

const TREE: Record<string, string> = {
  ".git/HEAD": "needle in git\n",
  ".gitignore": "*.log\nbuild/\n/top-only.txt\ndocs/**/*.tmp\n!keep.log\nsecret*\n",
  ".hidden.ts": "hidden needle\n",
  "top-only.txt": "needle at the top\n",
  "a.log": "needle in a log\n",
  "keep.log": "needle kept\n",
  "secretfile.txt": "needle secret\n",
  "crlf.txt": "needle one\r\nnot here\r\nend needle\r\n",
  "bin.dat": "needle\u0000binary\n",
  "notes/build": "a file named build is not a directory: needle\n",
  "src/index.ts": "const needle = 1;\nother line\nNEEDLE upper\nfunction f() {}\n",
  "src/util.ts": "export function f() {}\n// needle in a comment\n",
  "src/top-only.txt": "needle below the top\n",
  "src/build/out.js": "needle built\n",
  "src/deep/nested/x.spec.ts": "needle spec\n",
  "src/long.ts": `${"x".repeat(1000)} needle\n`,
  "lib/.gitignore": "*.gen.ts\n!important.gen.ts\n/local/\n",
  "lib/a.gen.ts": "needle generated\n",
  "lib/important.gen.ts": "needle important\n",
  "lib/b.ts": "needle b\n",
  "lib/local/x.ts": "needle local\n",
  "lib/sub/local/y.ts": "needle deeper local\n",
  "docs/readme.md": "needle docs\n",
  "docs/c.tmp": "needle tmp\n",
  "docs/a/b.tmp": "needle tmp\n",
  "node_modules/pkg/index.js": "needle module\n",
  "vendor/node_modules/x.js": "needle vendored module\n",
  "vendor/repo/.git/HEAD": "ref\n",
  "vendor/repo/x.log": "needle in a nested repository: the parent's *.log does not apply\n",
};

/** Every file find("*") must list, sorted. */
const VISIBLE = [
  ".gitignore",
  ".hidden.ts",
  "bin.dat",
  "crlf.txt",
  "docs/readme.md",
  "keep.log",
  "lib/.gitignore",
  "lib/b.ts",
  "lib/important.gen.ts",
  "lib/sub/local/y.ts",
  "notes/build",
  "src/deep/nested/x.spec.ts",
  "src/index.ts",
  "src/long.ts",
  "src/top-only.txt",
  "src/util.ts",
  "vendor/repo/x.log",
];

const text = (result: ToolResult) => (result.content[0]?.type === "text" ? result.content[0].text : "");

describe("grep and find", () => {
  let root: string;
  let controller: AbortController;
  const ctx = (): ToolContext => ({ cwd: root, toolCallId: "t", signal: controller.signal });

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "pi-orch-grep-"));
    controller = new AbortController();
    for (const [path, content] of Object.entries(TREE)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), content);
    }
    await symlink(join(root, "src/index.ts"), join(root, "link.ts"));
    await symlink(join(root, "src"), join(root, "linkdir"));
  });
  afterEach(async () => {
    controller.abort();
    await rm(root, { recursive: true, force: true });
  });

  const backends = ["node", "rg"] as const;
  const grepBoth = async (args: GrepParams) => {
    const [node, rg] = await Promise.all(backends.map((backend) => createGrepTool({ backend }).execute(args, ctx())));
    expect(text(rg!)).toBe(text(node!));
    expect(rg!.details).toEqual(node!.details);
    return node!;
  };
  const findBoth = async (args: FindParams) => {
    const [node, rg] = await Promise.all(backends.map((backend) => createFindTool({ backend }).execute(args, ctx())));
    expect(text(rg!)).toBe(text(node!));
    return node!;
  };

  it("has rg on this machine, so both backends really run", () => {
    expect(findRg()).toBeDefined();
  });

  it("find lists every visible file: .gitignore rules, nesting, .git and node_modules, no symlinks", async () => {
    expect(text(await findBoth({ pattern: "*" })).split("\n")).toEqual(VISIBLE);
  });

  it.each([
    ["*.ts", VISIBLE.filter((p) => p.endsWith(".ts"))],
    ["src/**/*.ts", ["src/deep/nested/x.spec.ts", "src/index.ts", "src/long.ts", "src/util.ts"]],
    ["**/*.spec.ts", ["src/deep/nested/x.spec.ts"]],
    ["*.{log,md}", ["docs/readme.md", "keep.log", "vendor/repo/x.log"]],
    ["lib/*", ["lib/.gitignore", "lib/b.ts", "lib/important.gen.ts"]],
  ])("find %s", async (pattern, expected) => {
    expect(text(await findBoth({ pattern })).split("\n")).toEqual(expected);
  });

  it("find stops at the limit and says so", async () => {
    const result = await findBoth({ pattern: "*", limit: 3 });
    expect(text(result)).toBe(
      ".gitignore\n.hidden.ts\nbin.dat\n\n[3 results limit reached. Use limit=6 for more, or refine pattern]",
    );
    expect(result.details).toEqual({ resultLimitReached: 3 });
  });

  it("find in a subdirectory still applies the parent's .gitignore", async () => {
    expect(text(await findBoth({ pattern: "*", path: "src" })).split("\n")).toEqual([
      "deep/nested/x.spec.ts",
      "index.ts",
      "long.ts",
      "top-only.txt",
      "util.ts",
    ]);
  });

  it("grep finds matches in visible text files only, as path:line: text", async () => {
    const out = text(await grepBoth({ pattern: "needle" }));
    // src/long.ts's line is cut, so pi's notice follows the matches after a blank line.
    const matches = out.slice(0, out.indexOf("\n\n["));
    const files = new Set(matches.split("\n").map((line) => line.slice(0, line.indexOf(":"))));
    expect([...files]).toEqual(VISIBLE.filter((p) => !p.endsWith(".gitignore") && p !== "bin.dat"));
    expect(out).toContain("src/index.ts:1: const needle = 1;");
    expect(out).toContain("crlf.txt:3: end needle");
    expect(out).not.toContain("\r");
  });

  it("grep cuts long lines", async () => {
    const result = await grepBoth({ pattern: "needle", path: "src/long.ts" });
    expect(text(result)).toBe(
      `long.ts:1: ${"x".repeat(500)}... [truncated]\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]`,
    );
    expect(result.details).toEqual({ linesTruncated: true });
  });

  it.each<[string, GrepParams]>([
    ["ignoreCase", { pattern: "NEEDLE", ignoreCase: true, glob: "src/*.ts" }],
    ["case-sensitive", { pattern: "NEEDLE" }],
    ["literal", { pattern: "f() {}", literal: true }],
    ["regex", { pattern: "^(const|export) \\w+", glob: "*.ts" }],
    ["glob with a slash", { pattern: "needle", glob: "lib/**" }],
    ["context", { pattern: "other", context: 1 }],
    ["anchored end on CRLF lines", { pattern: "needle$" }],
    ["a subdirectory", { pattern: "needle", path: "src" }],
  ])("grep %s gives the same result with and without rg", async (_name, args) => {
    const result = await grepBoth(args);
    expect(text(result)).not.toBe("No matches found");
  });

  it("grep renders context lines with '-' and matches with ':'", async () => {
    expect(text(await grepBoth({ pattern: "other", context: 1 }))).toBe(
      "src/index.ts-1- const needle = 1;\nsrc/index.ts:2: other line\nsrc/index.ts-3- NEEDLE upper",
    );
  });

  it("grep stops at the limit and says more exist", async () => {
    const result = await grepBoth({ pattern: "needle", limit: 2 });
    expect(text(result)).toBe(
      ".hidden.ts:1: hidden needle\ncrlf.txt:1: needle one\n\n[2 matches limit reached. Use limit=4 for more, or refine pattern]",
    );
    expect(result.details).toEqual({ matchLimitReached: 2 });
  });

  it("grep says when nothing matches, and names a missing path", async () => {
    expect(text(await grepBoth({ pattern: "no such text anywhere" }))).toBe("No matches found");
    await expect(createGrepTool({ backend: "node" }).execute({ pattern: "x", path: "missing" }, ctx())).rejects.toThrow(
      /Path not found: missing/,
    );
  });

  it.each(backends)(
    "grep with pi's operations checks the path and reads context lines through them (%s search)",
    async (backend) => {
      const calls: string[] = [];
      const operations = {
        isDirectory: async (p: string) => {
          calls.push(`isDirectory ${p.slice(root.length)}`);
          if (p.endsWith("/missing")) throw new Error("gone");
          return !p.endsWith(".ts");
        },
        // A different text than on disk: with context, every line of a block comes from here
        // (the match's too), split as pi splits them; the search itself stays local.
        readFile: async (p: string) => {
          calls.push(`readFile ${p.slice(root.length)}`);
          return "remote one\r\nremote needle\r\n";
        },
      };
      const grep = createGrepTool({ backend, operations });
      expect(text(await grep.execute({ pattern: "needle", path: "src/util.ts", context: 1 }, ctx()))).toBe(
        "util.ts-1- remote one\nutil.ts:2: remote needle\nutil.ts-3- ",
      );
      expect(text(await grep.execute({ pattern: "needle", path: "src/util.ts" }, ctx()))).toBe(
        "util.ts:2: // needle in a comment",
      );
      await expect(grep.execute({ pattern: "needle", path: "missing" }, ctx())).rejects.toThrow(
        /Path not found: missing/,
      );
      expect(calls).toEqual([
        "isDirectory /src/util.ts",
        "readFile /src/util.ts",
        "isDirectory /src/util.ts",
        "isDirectory /missing",
      ]);
    },
  );

  it("find with pi's glob operation lists what it returns, relative and in its order, with pi's notices", async () => {
    const seen: unknown[] = [];
    const find = createFindTool({
      operations: {
        exists: (p: string) => !p.endsWith("/nowhere"),
        glob: (pattern: string, cwd: string, options: { ignore: string[]; limit: number }) => {
          seen.push({ pattern, cwd: cwd.slice(root.length), ...options });
          return [`${cwd}/z.ts`, `${cwd}/a/b.ts`].slice(0, options.limit);
        },
      },
    });
    expect(text(await find.execute({ pattern: "*.ts", path: "src" }, ctx()))).toBe("z.ts\na/b.ts");
    expect(text(await find.execute({ pattern: "*.ts", limit: 1 }, ctx()))).toBe("z.ts\n\n[1 results limit reached]");
    await expect(find.execute({ pattern: "*", path: "nowhere" }, ctx())).rejects.toThrow(/Path not found: nowhere/);
    expect(seen).toEqual([
      { pattern: "*.ts", cwd: "/src", ignore: ["**/node_modules/**", "**/.git/**"], limit: 1000 },
      { pattern: "*.ts", cwd: "", ignore: ["**/node_modules/**", "**/.git/**"], limit: 1 },
    ]);
    // Without glob, pi searches locally: so do we.
    expect(
      text(await createFindTool({ operations: { exists: () => false } }).execute({ pattern: "*.md" }, ctx())),
    ).toBe("docs/readme.md");
  });

  it.each(backends)("an aborted %s search rejects", async (backend) => {
    controller.abort();
    await expect(createGrepTool({ backend }).execute({ pattern: "needle" }, ctx())).rejects.toThrow(/aborted/);
    await expect(createFindTool({ backend }).execute({ pattern: "*" }, ctx())).rejects.toThrow(/aborted/);
  });
});

describe("gitignore and glob matching", () => {
  const rules = parseGitignore("# comment\n\n*.log\n!keep.log\nbuild/\n/root-only\na/**/z\ntrailing\\ \n\\#hash\n");
  it.each<[string, boolean, boolean | undefined]>([
    ["x.log", false, true],
    ["deep/x.log", false, true],
    ["keep.log", false, false],
    ["build", true, true],
    ["build", false, undefined],
    ["root-only", false, true],
    ["sub/root-only", false, undefined],
    ["a/z", false, true],
    ["a/b/c/z", false, true],
    ["trailing ", false, true],
    ["#hash", false, true],
    ["comment", false, undefined],
  ])("%s (dir: %s) → %s", (path, isDir, verdict) => {
    expect(matchGitignore(rules, path, isDir)).toBe(verdict);
  });

  it.each<[string, string, boolean]>([
    ["*.ts", "a/b/c.ts", true],
    ["*.ts", "a/b/c.tsx", false],
    ["src/*.ts", "src/a.ts", true],
    ["src/*.ts", "src/x/a.ts", false],
    ["src/**/*.ts", "src/a.ts", true],
    ["**", "any/thing", true],
    ["*.{ts,js}", "x/y.js", true],
    ["[!a]*.md", "b.md", true],
    ["[!a]*.md", "a.md", false],
    ["?.md", "ab.md", false],
  ])("glob %s on %s → %s", (glob, path, expected) => {
    expect(compileGlob(glob).matches(path)).toBe(expected);
  });
});
