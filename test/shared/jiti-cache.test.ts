import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { jitiCacheOptions } from "../../shared/jiti-cache.js";

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});
function temp(): string {
  const d = mkdtempSync(join(tmpdir(), "pi-jiti-cache-"));
  made.push(d);
  return d;
}

describe("jitiCacheOptions", () => {
  it("puts jiti's transform cache in the user's cache folder, 0700", () => {
    const cache = join(temp(), "cache");
    expect(jitiCacheOptions({ PI_ORCH_CACHE_DIR: cache })).toEqual({ fsCache: join(cache, "jiti") });
    expect(statSync(join(cache, "jiti")).mode & 0o777).toBe(0o700);
  });

  it("makes an older folder of the user's private", () => {
    const cache = temp();
    mkdirSync(join(cache, "jiti"));
    chmodSync(join(cache, "jiti"), 0o777);
    expect(jitiCacheOptions({ PI_ORCH_CACHE_DIR: cache })).toEqual({ fsCache: join(cache, "jiti") });
    expect(statSync(join(cache, "jiti")).mode & 0o777).toBe(0o700);
  });

  it("turns jiti's cache off where the folder cannot be had", () => {
    const cache = temp();
    writeFileSync(join(cache, "jiti"), "a file, not a folder");
    expect(jitiCacheOptions({ PI_ORCH_CACHE_DIR: cache })).toEqual({ fsCache: false });
  });

  it("leaves a JITI_FS_CACHE or JITI_CACHE the user set to jiti", () => {
    const cache = temp();
    expect(jitiCacheOptions({ PI_ORCH_CACHE_DIR: cache, JITI_FS_CACHE: "/somewhere" })).toEqual({});
    expect(jitiCacheOptions({ PI_ORCH_CACHE_DIR: cache, JITI_CACHE: "false" })).toEqual({});
  });
});
