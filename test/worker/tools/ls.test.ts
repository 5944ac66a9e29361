import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { compareNames, lsTool } from "../../../worker/tools/ls.js";
import type { ToolContext, ToolResult } from "../../../worker/types.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "pi-ls-test-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ctx = (): ToolContext => ({ cwd: dir, toolCallId: "t1", signal: new AbortController().signal });
const text = (r: ToolResult) => (r.content[0]?.type === "text" ? r.content[0].text : "");

describe("ls", () => {
  it("lists the working directory sorted case-insensitively, folders with '/', dotfiles included", async () => {
    for (const f of ["beta.txt", "Alpha.md", ".env", "gamma"]) await writeFile(join(dir, f), "");
    await mkdir(join(dir, "Docs"));
    await mkdir(join(dir, "src"));
    await symlink(join(dir, "src"), join(dir, "link-to-src"));
    const r = await lsTool.execute({}, ctx());
    expect(text(r)).toBe([".env", "Alpha.md", "beta.txt", "Docs/", "gamma", "link-to-src/", "src/"].join("\n"));
    expect(r.details).toBeUndefined();
  });

  it("lists a given folder and says when the limit cuts", async () => {
    await mkdir(join(dir, "many"));
    for (let i = 0; i < 5; i++) await writeFile(join(dir, "many", `f${i}`), "");
    const out = text(await lsTool.execute({ path: "many", limit: 3 }, ctx()));
    expect(out).toBe("f0\nf1\nf2\n\n[3 entries limit reached. Use limit=6 for more]");
  });

  it("says when a folder is empty", async () => {
    expect(text(await lsTool.execute({ path: "." }, ctx()))).toBe("(empty directory)");
  });

  it("fails clearly for a missing path or a file", async () => {
    await writeFile(join(dir, "file.txt"), "");
    await expect(lsTool.execute({ path: "missing" }, ctx())).rejects.toThrow(/Path not found: missing/);
    await expect(lsTool.execute({ path: "file.txt" }, ctx())).rejects.toThrow(/Not a directory: file\.txt is a file/);
  });

  it("leaves out an entry it cannot stat (a dangling link), as pi 1.6", async () => {
    await writeFile(join(dir, "real"), "");
    await symlink(join(dir, "gone"), join(dir, "dangling"));
    expect(text(await lsTool.execute({}, ctx()))).toBe("real");
  });

  it.each([
    ["a", "B", -1],
    ["B", "a", 1],
    ["a", "A", 1],
    ["A", "a", -1],
    ["x", "x", 0],
    // pi's localeCompare: punctuation before digits before letters (code points put "_" after "1").
    ["_a", "1b", -1],
    ["1b", "a", -1],
  ])("orders %s against %s as %i", (a, b, sign) => {
    expect(Math.sign(compareNames(a, b))).toBe(sign);
  });
});
