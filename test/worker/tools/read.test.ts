import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readTool, sniffImageType } from "../../../worker/tools/read.js";
import type { Model } from "../../../shared/schema/messages.js";
import type { ToolContext, ToolResult } from "../../../worker/types.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "pi-read-test-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ctx = (): ToolContext => ({ cwd: dir, toolCallId: "t1", signal: new AbortController().signal });
const text = (r: ToolResult) => (r.content[0]?.type === "text" ? r.content[0].text : "");
const numbered = (n: number) => `${Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n")}\n`;

// The smallest valid PNG: 1x1 transparent pixel.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);

describe("read", () => {
  it("returns a small file whole, without a notice", async () => {
    await writeFile(join(dir, "a.txt"), "hello\nworld\n");
    const r = await readTool.execute({ path: "a.txt" }, ctx());
    // The text as it is, final newline included (pi 1.6; test/integration/read-oracle.test.ts).
    expect(text(r)).toBe("hello\nworld\n");
    expect(r.details).toBeUndefined();
  });

  it("keeps the first 2000 lines of a long file and says how to continue", async () => {
    await writeFile(join(dir, "long.txt"), numbered(5000));
    const r = await readTool.execute({ path: "long.txt" }, ctx());
    const out = text(r);
    expect(out.startsWith("line 1\nline 2\n")).toBe(true);
    // pi counts the empty line after the final newline: 5001.
    expect(out).toContain("line 2000\n\n[Showing lines 1-2000 of 5001. Use offset=2001 to continue.]");
    expect(out).not.toContain("line 2001");
  });

  it("continues from an offset and reaches the end without a notice", async () => {
    await writeFile(join(dir, "long.txt"), numbered(5000));
    const second = text(await readTool.execute({ path: "long.txt", offset: 2001 }, ctx()));
    expect(second.startsWith("line 2001\n")).toBe(true);
    expect(second).toContain("[Showing lines 2001-4000 of 5001. Use offset=4001 to continue.]");
    const last = text(await readTool.execute({ path: "long.txt", offset: 4001 }, ctx()));
    expect(last.startsWith("line 4001\n")).toBe(true);
    expect(last.endsWith("line 5000\n")).toBe(true);
  });

  it("reads a window with offset and limit and tells how many lines remain", async () => {
    await writeFile(join(dir, "f.txt"), numbered(10));
    const out = text(await readTool.execute({ path: "f.txt", offset: 3, limit: 2 }, ctx()));
    expect(out).toBe("line 3\nline 4\n\n[7 more lines in file. Use offset=5 to continue.]");
  });

  it("cuts by bytes before lines when lines are wide, naming the 50 KB limit", async () => {
    await writeFile(join(dir, "wide.txt"), Array.from({ length: 100 }, () => "x".repeat(1023)).join("\n"));
    const out = text(await readTool.execute({ path: "wide.txt" }, ctx()));
    expect(out).toContain("[Showing lines 1-50 of 100 (50.0KB limit). Use offset=51 to continue.]");
  });

  it("replaces a single line longer than 50 KB by its size and the bash command that shows it, as pi 1.6", async () => {
    await writeFile(join(dir, "one.txt"), `${"y".repeat(60 * 1024)}\nnext\n`);
    const r = await readTool.execute({ path: "one.txt" }, ctx());
    expect(text(r)).toBe("[Line 1 is 60.0KB, exceeds 50.0KB limit. Use bash: sed -n '1p' one.txt | head -c 51200]");
    expect(r.details).toMatchObject({ truncation: { firstLineExceedsLimit: true, content: "", totalLines: 2 } });
  });

  it("rejects an offset past the end with the file's length", async () => {
    await writeFile(join(dir, "f.txt"), numbered(3));
    await expect(readTool.execute({ path: "f.txt", offset: 10 }, ctx())).rejects.toThrow(
      "Offset 10 is beyond end of file (4 lines total)",
    );
  });

  it("returns an image by its magic bytes, whatever its extension", async () => {
    await writeFile(join(dir, "picture.dat"), PNG);
    const r = await readTool.execute({ path: "picture.dat" }, ctx());
    expect(r.content[0]).toMatchObject({ type: "text" });
    expect(text(r)).toContain("image/png");
    expect(r.content[1]).toEqual({ type: "image", data: PNG.toString("base64"), mimeType: "image/png" });
    expect(r.structuredContent).toEqual({
      type: "image",
      data: PNG.toString("base64"),
      mimeType: "image/png",
      note: text(r),
    });
  });

  it("tells in its details when the run's model takes no images, as pi 1.6", async () => {
    await writeFile(join(dir, "dot.png"), PNG);
    const model = (input: Model["input"]): Model => ({
      id: "m",
      name: "M",
      api: "openai-completions",
      provider: "p",
      baseUrl: "http://127.0.0.1:9/v1",
      reasoning: false,
      input,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      contextWindow: 1000,
      maxTokens: 100,
    });
    const seeing = await readTool.execute({ path: "dot.png" }, { ...ctx(), model: model(["text", "image"]) });
    const blind = await readTool.execute({ path: "dot.png" }, { ...ctx(), model: model(["text"]) });
    expect(text(seeing)).toBe("Read image file [image/png]");
    expect(seeing.details).toBeUndefined();
    expect(blind.details).toEqual({ imageUnsupportedByModel: "m" });
  });

  it("gives the text it returns as structuredContent, as pi 1.6", async () => {
    await writeFile(join(dir, "a.txt"), numbered(3));
    const r = await readTool.execute({ path: "a.txt", offset: 2 }, ctx());
    expect(r.structuredContent).toBe(text(r));
  });

  it.each([
    [[0xff, 0xd8, 0xff, 0xe0], "image/jpeg"],
    [[...Buffer.from("GIF89a")], "image/gif"],
    [[...Buffer.from("RIFF"), 0, 0, 0, 0, ...Buffer.from("WEBP")], "image/webp"],
    [[...Buffer.from("hello")], null],
  ])("sniffs %j as %s", (bytes, mime) => {
    expect(sniffImageType(Uint8Array.from(bytes))).toBe(mime);
  });

  it("resolves absolute paths and says which file is missing", async () => {
    await writeFile(join(dir, "abs.txt"), "x");
    expect(text(await readTool.execute({ path: join(dir, "abs.txt") }, { ...ctx(), cwd: "/" }))).toBe("x");
    await expect(readTool.execute({ path: "nope.txt" }, ctx())).rejects.toThrow(/File not found: nope\.txt/);
    await expect(readTool.execute({ path: "." }, ctx())).rejects.toThrow(/is a directory/);
  });
});
