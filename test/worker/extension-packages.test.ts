import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { discoverExtensions, packageResources } from "../../worker/extensions/discover.js";
import { tempDir } from "../support/rpc-worker.js";

const dirs: { cleanup: () => void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});

/** A folder with `files` (path → text) in it. */
function folder(files: Record<string, string>): string {
  const d = tempDir("pi-ext-package-");
  dirs.push(d);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(d.path, path, ".."), { recursive: true });
    writeFileSync(join(d.path, path), text);
  }
  return d.path;
}

describe("a folder given to --extension, as pi 1.6 reads it", () => {
  it("is one extension (its index) when it has no manifest resources and no conventional folders", () => {
    const dir = folder({ "index.ts": "", "helper.ts": "", "agents/a.md": "" });
    expect(packageResources(dir)).toBeUndefined();
    expect(discoverExtensions({ paths: [dir], home: dir, cwd: dir, trusted: false, discover: false }).load).toEqual([
      join(dir, "index.ts"),
    ]);
  });

  it("is a package when it has a conventional folder: its index is not loaded, its prompts are (pi's subagent example)", () => {
    const dir = folder({ "index.ts": "", "prompts/go.md": "", "skills/s/SKILL.md": "" });
    const found = discoverExtensions({ paths: [dir], home: dir, cwd: dir, trusted: false, discover: false });
    expect(found.load).toEqual([]);
    expect(found.resources).toEqual({
      skillPaths: [join(dir, "skills")],
      promptPaths: [join(dir, "prompts")],
      themePaths: [],
    });
  });

  it("loads a package's extensions/ folder: its files and its subfolders' indexes", () => {
    const dir = folder({ "extensions/a.ts": "", "extensions/b/index.ts": "", "extensions/b/lib.ts": "" });
    expect(packageResources(dir)?.extensions.sort()).toEqual([
      join(dir, "extensions/a.ts"),
      join(dir, "extensions/b/index.ts"),
    ]);
  });

  it("follows a package.json pi manifest that lists resources, and only it", () => {
    const dir = folder({
      "package.json": JSON.stringify({ pi: { extensions: ["./src/ext.ts"], prompts: ["./docs/prompts"] } }),
      "src/ext.ts": "",
      "prompts/ignored.md": "",
    });
    expect(packageResources(dir)).toEqual({
      extensions: [join(dir, "src/ext.ts")],
      skills: [],
      prompts: [join(dir, "docs/prompts")],
      themes: [],
    });
  });
});
