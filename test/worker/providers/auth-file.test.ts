import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AuthKeys, parseAuthKeys } from "../../../worker/providers/auth-file.js";
import { tempDir } from "../../support/rpc-worker.js";

const dirs: { cleanup: () => void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});

describe("pi's auth.json", () => {
  it("takes the api_key credentials, literal or !command, and leaves OAuth ones and blanks out", () => {
    const keys = parseAuthKeys(
      JSON.stringify({
        anthropic: { type: "api_key", key: "sk-ant" },
        openai: { type: "api_key", key: "!pass openai" },
        "openai-codex": { type: "oauth", access: "a", refresh: "r", expires: 1 },
        blank: { type: "api_key", key: "  " },
        odd: "not an object",
      }),
    );
    expect([...keys]).toEqual([
      ["anthropic", "sk-ant"],
      ["openai", "!pass openai"],
    ]);
    expect([...parseAuthKeys("[]")]).toEqual([]);
  });

  it("runs a !command once, and a failing one leaves the key unset; a damaged file is reported and ignored", () => {
    const dir = tempDir("pi-auth-");
    dirs.push(dir);
    const counter = join(dir.path, "runs");
    const path = join(dir.path, "auth.json");
    writeFileSync(
      path,
      JSON.stringify({
        mock: { type: "api_key", key: `!echo run >> ${counter}; echo cmd-key` },
        broken: { type: "api_key", key: "!exit 3" },
      }),
    );
    const warnings: string[] = [];
    const keys = new AuthKeys(path, (m) => void warnings.push(m));
    expect(keys.keyFor("mock")).toBe("cmd-key");
    expect(keys.keyFor("mock")).toBe("cmd-key");
    expect(readFileSync(counter, "utf8"), "the command ran once").toBe("run\n");
    expect(keys.keyFor("broken")).toBeUndefined();
    expect(keys.keyFor("nobody")).toBeUndefined();
    writeFileSync(path, "{ not json");
    expect(new AuthKeys(path, (m) => void warnings.push(m)).keyFor("mock")).toBeUndefined();
    expect(warnings).toEqual([expect.stringMatching(/auth\.json is not valid JSON/)]);
    expect(new AuthKeys(join(dir.path, "missing.json"), (m) => void warnings.push(m)).keyFor("mock")).toBeUndefined();
  });
});
