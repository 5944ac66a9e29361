import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeTool } from "../../../worker/tools/write.js";
import type { ToolContext } from "../../../worker/types.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "pi-write-test-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ctx = (): ToolContext => ({ cwd: dir, toolCallId: "t1", signal: new AbortController().signal });

describe("write", () => {
  it("creates missing folders and reports the byte count", async () => {
    const r = await writeTool.execute({ path: "a/b/c.txt", content: "héllo" }, ctx());
    expect(await readFile(join(dir, "a/b/c.txt"), "utf8")).toBe("héllo");
    expect(r.content).toEqual([{ type: "text", text: "Successfully wrote to a/b/c.txt" }]);
  });

  it("overwrites an existing file completely", async () => {
    await writeTool.execute({ path: "f.txt", content: "long original content" }, ctx());
    await writeTool.execute({ path: "f.txt", content: "short" }, ctx());
    expect(await readFile(join(dir, "f.txt"), "utf8")).toBe("short");
  });

  it("applies concurrent writes to one file in call order", async () => {
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => writeTool.execute({ path: "race.txt", content: `v${i}` }, ctx())),
    );
    expect(await readFile(join(dir, "race.txt"), "utf8")).toBe("v19");
  });

  it("refuses to write over a directory with a clear error", async () => {
    await writeTool.execute({ path: "d/x.txt", content: "" }, ctx());
    await expect(writeTool.execute({ path: "d", content: "x" }, ctx())).rejects.toThrow(
      "Cannot write d: it is a directory.",
    );
  });
});
