/**
 * The piece of loading jiti that needs no process: the lazy built-ins handed to jiti (each
 * must behave as the real module, or load it). Its cache file is shared/code-cache.ts's.
 */
import { AssertionError } from "node:assert";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { getHeapStatistics } from "node:v8";
import { describe, expect, it } from "vitest";
import { withLazyBuiltins } from "../../worker/extensions/jiti-load.js";

describe("the built-ins jiti gets lazily", () => {
  const lazy = withLazyBuiltins(createRequire(import.meta.url));
  it("asserts as assert does: a value that holds passes, one that does not throws assert's own error", () => {
    const assert = lazy("node:assert") as typeof import("node:assert");
    expect(assert.ok(1, "holds")).toBeUndefined();
    expect(() => assert.ok(0, "does not hold")).toThrow(AssertionError);
    expect(() => assert.ok("", "does not hold")).toThrow("does not hold");
  });

  it("says no startup snapshot is being built, and gives v8's other members as they are", () => {
    const v8 = lazy("node:v8") as typeof import("node:v8");
    expect(v8.startupSnapshot.isBuildingSnapshot()).toBe(false);
    expect(typeof v8.startupSnapshot.addSerializeCallback).toBe("function");
    expect(v8.getHeapStatistics).toBe(getHeapStatistics);
  });

  it("gives fs/promises' functions, and every other module as require does", () => {
    expect((lazy("node:fs/promises") as typeof import("node:fs/promises")).readFile).toBe(readFile);
    expect("readFile" in (lazy("node:fs/promises") as object)).toBe(true);
    expect(lazy("node:path")).toBe(createRequire(import.meta.url)("node:path"));
    expect(typeof lazy.resolve).toBe("function");
  });
});
