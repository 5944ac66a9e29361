import { describe, expect, it } from "vitest";
import { fileArgsContent, splitFileArgs } from "../../cli/file-args.js";

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);

describe("splitFileArgs", () => {
  it.each([
    [["@a.md", "question"], ["a.md"], ["question"]],
    [["fix", "@src/x.ts", "now"], ["src/x.ts"], ["fix", "now"]],
    [["@"], [], ["@"]],
    [["mail me at a@b.c"], [], ["mail me at a@b.c"]],
  ])("%j", (words, files, rest) => expect(splitFileArgs(words)).toEqual({ files, rest }));
});

describe("fileArgsContent (pi's <file> blocks)", () => {
  it("puts text in a block, names an attached image with an empty block, skips empty files, in order", () => {
    const out = fileArgsContent([
      { path: "/p/a.md", bytes: Buffer.from("hi\n") },
      { path: "/p/e.txt", bytes: null },
      { path: "/p/s.png", bytes: PNG },
    ]);
    expect(out.text).toBe('<file name="/p/a.md">\nhi\n\n</file>\n<file name="/p/s.png"></file>\n');
    expect(out.images).toEqual([{ type: "image", mimeType: "image/png", data: PNG.toString("base64") }]);
  });
});
