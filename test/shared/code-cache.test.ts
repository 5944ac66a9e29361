/**
 * Code caches that name their node (shared/code-cache.ts): the key line read before V8
 * sees the data, the user's cache folder, and the one-writer claim that keeps a thousand
 * workers started together from writing the same megabyte a thousand times.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  keyedCacheBytes,
  nodeCacheKey,
  nodeFlagsCacheKey,
  readKeyedCache,
  userCacheDir,
  userCacheFile,
  writeKeyedCache,
} from "../../shared/code-cache.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function temp(): string {
  const d = mkdtempSync(join(tmpdir(), "code-cache-"));
  dirs.push(d);
  return d;
}

describe("the key line", () => {
  it("names this node, its arch and its V8, on one line", () => {
    const key = nodeCacheKey();
    expect(key).toContain(`node=${process.version}`);
    expect(key).toContain(`arch=${process.arch}`);
    expect(key).toContain(`v8=${process.versions.v8}`);
    expect(key).not.toContain("\n");
  });

  it("with the flags a start writes its own under: from NODE_OPTIONS and the command line", () => {
    const plain = nodeFlagsCacheKey({}, []);
    expect(plain.startsWith(nodeCacheKey())).toBe(true);
    expect(nodeFlagsCacheKey({ NODE_OPTIONS: "--max-semi-space-size=2" }, [])).not.toBe(plain);
    expect(nodeFlagsCacheKey({}, ["--max-semi-space-size=2"])).not.toBe(plain);
    expect(nodeFlagsCacheKey({ NODE_OPTIONS: "  --a   --b " }, ["--c"])).toContain('["--c","--a","--b"]');
    expect(nodeFlagsCacheKey({}, ["--title=a\nb"])).not.toContain("\n");
  });

  it.each([
    ["no file", undefined, "missing"],
    ["no line break at all", Buffer.from([1, 2, 3]), "unkeyed"],
    ["a first line far longer than any key", Buffer.concat([Buffer.alloc(5000, 65), Buffer.from("\n")]), "unkeyed"],
  ])("reads %s as %s", (_, bytes, expected) => {
    const file = join(temp(), "c.cache");
    if (bytes) writeFileSync(file, bytes);
    expect(readKeyedCache(file)).toBe(expected);
  });

  it("gives back the key and V8's data as written, a newline inside the data included", () => {
    const file = join(temp(), "c.cache");
    writeFileSync(file, keyedCacheBytes("node=v1 arch=x", Buffer.from([1, 2, 10, 3])));
    const got = readKeyedCache(file);
    expect(typeof got !== "string" && { key: got.key, data: [...got.data] }).toEqual({
      key: "node=v1 arch=x",
      data: [1, 2, 10, 3],
    });
  });
});

describe("the user's cache folder", () => {
  it("is PI_ORCH_CACHE_DIR, else under XDG_CACHE_HOME, else ~/.cache/pi-orch", () => {
    expect(userCacheDir({ PI_ORCH_CACHE_DIR: "/c", XDG_CACHE_HOME: "/x", HOME: "/h" })).toBe("/c");
    expect(userCacheDir({ XDG_CACHE_HOME: "/x", HOME: "/h" })).toBe("/x/pi-orch");
    expect(userCacheDir({ HOME: "/h" })).toBe("/h/.cache/pi-orch");
  });

  it("names a file after the whole identity (a rebuilt bundle gets another file)", () => {
    const a = userCacheFile("/c", "pi-worker", "/dist/pi-worker.cjs 100 1 node=v22");
    expect(a).toMatch(/^\/c\/pi-worker-[0-9a-f]{16}\.cache$/);
    expect(userCacheFile("/c", "pi-worker", "/dist/pi-worker.cjs 100 2 node=v22")).not.toBe(a);
  });
});

describe("writing a cache once", () => {
  it("writes the key line and the data, and leaves no claim or temp file", () => {
    const dir = join(temp(), "new", "folder");
    const file = join(dir, "w.cache");
    expect(writeKeyedCache(file, "k", () => Buffer.from("data"))).toBeUndefined();
    expect(readFileSync(file, "utf8")).toBe("k\ndata");
    expect(readdir(dir)).toEqual(["w.cache"]);
  });

  it("leaves the file to a writer whose claim is fresh, and takes over a claim a minute old", () => {
    const dir = temp();
    const file = join(dir, "w.cache");
    writeFileSync(`${file}.lock`, "");
    let asked = 0;
    const data = () => {
      asked++;
      return Buffer.from("mine");
    };
    expect(writeKeyedCache(file, "k", data)).toBeUndefined();
    expect(asked).toBe(0);
    expect(readKeyedCache(file)).toBe("missing");
    const old = new Date(Date.now() - 120_000);
    utimesSync(`${file}.lock`, old, old);
    expect(writeKeyedCache(file, "k", data)).toBeUndefined();
    expect(asked).toBe(1);
    expect(readFileSync(file, "utf8")).toBe("k\nmine");
    expect(readdir(dir)).toEqual(["w.cache"]);
  });

  it("returns the error when the folder cannot be made (the caller says so on stderr)", () => {
    const blocker = join(temp(), "a-file");
    writeFileSync(blocker, "");
    const err = writeKeyedCache(join(blocker, "sub", "w.cache"), "k", () => Buffer.from("x"));
    expect(err?.message).toMatch(/ENOTDIR|EEXIST/);
  });
});

function readdir(dir: string): string[] {
  return readdirSync(dir).sort();
}
