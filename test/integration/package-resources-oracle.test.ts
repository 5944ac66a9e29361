/**
 * Which files of a package load (worker/packages/collect.ts), checked case by case against
 * pi 1.6.0's own package manager (its DefaultPackageManager, run on its Node) given the same
 * settings entry: conventional folders, manifests with globs and filters, settings filters.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { spawnSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { collectPackage, emptyCollection, type PackageFilter } from "../../worker/packages/collect.js";
import { UPSTREAM } from "../support/upstream-oracle.js";

const PI16 = UPSTREAM["1.6.0"];
const ORACLE = join(import.meta.dirname, "../support/pi16-package-resolve.mjs");

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A package folder with these files (a path ending in / is a folder), and its package.json's `pi` key. */
function pkg(files: string[], pi?: object): string {
  const root = mkdtempSync(join(tmpdir(), "pi-collect-"));
  dirs.push(root);
  for (const f of files) {
    const path = join(root, f);
    mkdirSync(f.endsWith("/") ? path : dirname(path), { recursive: true });
    if (!f.endsWith("/"))
      writeFileSync(path, f.endsWith(".md") ? "---\ndescription: x\n---\nx\n" : "export default () => {};\n");
  }
  writeFileSync(join(root, "package.json"), JSON.stringify({ name: "p", ...(pi ? { pi } : {}) }));
  return root;
}

type Loaded = Record<"extensions" | "skills" | "prompts" | "themes", string[]>;

/**
 * What loads, by kind, as sorted paths relative to the package; undefined when the folder is
 * no package. Checked against pi 1.6.0's own package manager given the same entry.
 */
function loaded(root: string, filter?: Omit<PackageFilter, "autoload">): Loaded | undefined {
  const into = emptyCollection();
  if (!collectPackage(root, into, filter)) return undefined;
  const on = (m: Map<string, boolean>) => [...m].filter(([, e]) => e).map(([f]) => f);
  const ours = {
    extensions: on(into.extensions),
    skills: on(into.skills),
    prompts: on(into.prompts),
    themes: on(into.themes),
  };
  if (PI16.installed) expect(sorted(ours, root)).toEqual(sorted(pi16(root, filter), root));
  return sorted(ours, root);
}

function sorted(l: Loaded, root: string): Loaded {
  const rel = (files: string[]) => files.map((f) => relative(root, f)).sort();
  return { extensions: rel(l.extensions), skills: rel(l.skills), prompts: rel(l.prompts), themes: rel(l.themes) };
}

function pi16(root: string, filter?: object): Loaded {
  const agentDir = mkdtempSync(join(tmpdir(), "pi-collect-agent-"));
  dirs.push(agentDir);
  const entry = filter ? { ...filter, source: root } : root;
  const r = spawnSync(PI16.node, [ORACLE, JSON.stringify([entry, agentDir, PI16.package])], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`pi 1.6.0's resolver failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as Loaded;
}

const CONVENTIONAL = [
  "extensions/a.ts",
  "extensions/b.js",
  "extensions/tool/index.ts",
  "extensions/tool/helper.ts",
  "extensions/notes.md",
  "skills/greet/SKILL.md",
  "skills/greet/reference.md",
  "skills/top.md",
  "prompts/review.md",
  "prompts/deep/fix.md",
  "themes/dark.json",
];

describe("collectPackage (docs/packages.md)", () => {
  it("without a manifest: the conventional folders, as pi discovers each kind", () => {
    expect(loaded(pkg(CONVENTIONAL))).toEqual({
      extensions: ["extensions/a.ts", "extensions/b.js", "extensions/tool/index.ts"],
      skills: ["skills/greet/SKILL.md", "skills/top.md"],
      prompts: ["prompts/deep/fix.md", "prompts/review.md"],
      themes: ["themes/dark.json"],
    });
  });

  it("a folder with neither a manifest nor conventional folders is no package", () => {
    expect(loaded(pkg(["index.ts"]))).toBeUndefined();
  });

  it("a manifest that lists resources is the whole list: globs, filters, and no folder of a kind it leaves out", () => {
    const root = pkg([...CONVENTIONAL, "src/main.ts", "src/legacy.ts", "res/p/one.md", "res/p/two.md"], {
      extensions: ["./src/*.ts", "!src/legacy.ts"],
      prompts: ["res/p"],
    });
    expect(loaded(root)).toEqual({
      extensions: ["src/main.ts"],
      skills: [],
      prompts: ["res/p/one.md", "res/p/two.md"],
      themes: [],
    });
  });

  it("a settings filter narrows what the package allows: absent all, [] none, patterns some", () => {
    const root = pkg(CONVENTIONAL);
    expect(
      loaded(root, {
        source: "x",
        extensions: ["extensions/*.ts", "-extensions/a.ts"],
        skills: [],
        prompts: ["review.md"],
      } as PackageFilter),
    ).toEqual({
      extensions: [],
      skills: [],
      prompts: ["prompts/review.md"],
      themes: ["themes/dark.json"],
    });
  });

  it("skills by their folder's name, force-includes over excludes, ** globs, a sub-package's pi.extensions", () => {
    const root = pkg([
      ...CONVENTIONAL,
      "skills/other/SKILL.md",
      "extensions/sub/package.json",
      "extensions/sub/lib/entry.ts",
    ]);
    writeFileSync(
      join(root, "extensions/sub/package.json"),
      JSON.stringify({ pi: { extensions: ["./lib/entry.ts"] } }),
    );
    expect(
      loaded(root, {
        extensions: ["!**/*.ts", "+extensions/a.ts"],
        skills: ["greet"],
        prompts: ["prompts/**/*.md", "!fix.md"],
      }),
    ).toEqual({
      extensions: ["extensions/a.ts", "extensions/b.js"],
      skills: ["skills/greet/SKILL.md"],
      prompts: ["prompts/review.md"],
      themes: ["themes/dark.json"],
    });
  });
});
