/**
 * The extension module cache's file (worker/extensions/module-cache-file.ts): what is
 * written reads back the same, and a file cut short or with any byte changed reads as no
 * cache at all, so the start loads the extension with jiti.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checksum } from "../../shared/checksum.js";
import {
  decodeGraph,
  encodeGraph,
  folderListing,
  type CachedGraph,
} from "../../worker/extensions/module-cache-file.js";
import { tempDir } from "../support/rpc-worker.js";

const GRAPH: CachedGraph = {
  entry: "/ext/index.ts",
  modules: [
    {
      filename: "/ext/index.ts",
      source: Buffer.from('import { x } from "./util.js";\nexport default () => x; // é\n'),
      code: "(async function (exports, require, module, __filename, __dirname, jitiImport, jitiESMResolve) { 'é' \n});",
      cache: Buffer.from([1, 2, 3, 4, 5, 6, 7]),
      imports: [["./util.js", "/ext/util.ts"]],
    },
    {
      filename: "/ext/util.ts",
      source: Buffer.from("export const x = 1;\n"),
      code: "x",
      cache: Buffer.alloc(0),
      imports: [],
    },
  ],
  folders: [["/ext", "findex.ts/futil.ts", "/ext"]],
};

const dirs: { cleanup: () => void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});

describe("the module cache file", () => {
  it("reads back what was written, wherever its bytes lie in memory", () => {
    const bytes = encodeGraph(GRAPH);
    expect(decodeGraph(bytes)).toEqual(GRAPH);
    for (const shift of [1, 2, 3]) {
      const moved = Buffer.alloc(bytes.length + shift);
      bytes.copy(moved, shift);
      expect(decodeGraph(moved.subarray(shift))).toEqual(GRAPH);
    }
  });

  it("reads a file cut short at any length as no cache", () => {
    const bytes = encodeGraph(GRAPH);
    for (let len = 0; len < bytes.length; len++) expect(decodeGraph(bytes.subarray(0, len))).toBeUndefined();
  });

  it("reads a file with any one byte changed as no cache", () => {
    const bytes = encodeGraph(GRAPH);
    for (let at = 0; at < bytes.length; at++) {
      const bad = Buffer.from(bytes);
      bad[at] = bad[at]! ^ 0x20;
      expect(decodeGraph(bad)).toBeUndefined();
    }
  });

  it("checks sums that differ for a byte moved, a byte added, and the same bytes", () => {
    const a = Buffer.from("abcdefghijklmnopq");
    expect(checksum(a)).toBe(checksum(Buffer.from("abcdefghijklmnopq")));
    expect(checksum(a)).not.toBe(checksum(Buffer.from("bacdefghijklmnopq")));
    expect(checksum(a)).not.toBe(checksum(Buffer.from("abcdefghijklmnopq\0")));
    expect(checksum(Buffer.alloc(0))).toMatch(/^[0-9a-f]{32}$/);
  });

  it("lists a folder's entries with their kinds, sorted; nothing for a folder that is not there", () => {
    const d = tempDir();
    dirs.push(d);
    writeFileSync(join(d.path, "b.ts"), "");
    mkdirSync(join(d.path, "a"));
    symlinkSync(join(d.path, "b.ts"), join(d.path, "c.ts"));
    expect(folderListing(d.path)).toBe("da/fb.ts/lc.ts");
    expect(folderListing(join(d.path, "none"))).toBeUndefined();
  });
});
