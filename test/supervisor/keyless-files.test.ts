import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { keylessFiles, keylessMcpText, keylessTexts } from "../../supervisor/keyless-files.js";

describe("keylessTexts", () => {
  const models = JSON.stringify({
    providers: {
      lit: { baseUrl: "http://x", apiKey: "sk-literal" },
      named: { baseUrl: "http://y", apiKey: "MY_KEY" },
      cmd: { baseUrl: "http://z", apiKey: "!pass show key" },
      none: { baseUrl: "http://w" },
    },
  });
  const auth = JSON.stringify({
    a: { type: "api_key", key: "sk-auth" },
    b: { type: "api_key", key: "!op read x" },
    c: { type: "oauth", access: "tok", refresh: "tok2", expires: 1 },
  });

  it("turns each literal key into a variable reference and keeps names and commands", () => {
    const out = keylessTexts(models, auth, true);
    expect(out.secrets).toEqual({ PI_ORCH_KEY_1: "sk-literal", PI_ORCH_KEY_2: "sk-auth" });
    const m = JSON.parse(out.models!);
    expect(m.providers.lit.apiKey).toBe("PI_ORCH_KEY_1");
    expect(m.providers.named.apiKey).toBe("MY_KEY");
    expect(m.providers.cmd.apiKey).toBe("!pass show key");
    expect(m.providers.none.apiKey).toBeUndefined();
    const a = JSON.parse(out.auth!);
    expect(a.a).toEqual({ type: "api_key", key: "!printenv PI_ORCH_KEY_2" });
    expect(a.b.key).toBe("!op read x");
    // Our worker does not use OAuth entries: they are left out.
    expect(a.c).toBeUndefined();
    expect(`${out.models}${out.auth}`).not.toMatch(/sk-literal|sk-auth|tok/);
  });

  it("keeps OAuth entries for a custom worker command, which may refresh them", () => {
    expect(JSON.parse(keylessTexts(undefined, auth, false).auth!).c.access).toBe("tok");
  });

  it("says null for a file that does not parse, undefined for one that is missing", () => {
    expect(keylessTexts('{"providers": {"x": {"apiKey": "sk-', undefined, true)).toEqual({
      models: null,
      auth: undefined,
      secrets: {},
    });
  });
});

describe("keylessMcpText", () => {
  it("takes literal env and header values out for ${PI_ORCH_KEY_n}, after the keys already taken", () => {
    const secrets: Record<string, string> = { PI_ORCH_KEY_1: "sk-earlier" };
    const mcp = JSON.stringify({
      mcpServers: {
        local: {
          command: "srv",
          env: { TOKEN: "tok-literal", FROM_ENV: "${HOME_TOKEN}", CMD: "!pass x", PRICE: "$$5" },
        },
        remote: { url: "http://h/mcp", headers: { Authorization: "Bearer abc" } },
        off: { enabled: false },
      },
    });
    const out = JSON.parse(keylessMcpText(mcp, secrets)!);
    expect(out.mcpServers.local.env).toEqual({
      TOKEN: "${PI_ORCH_KEY_2}",
      FROM_ENV: "${HOME_TOKEN}",
      CMD: "!pass x",
      PRICE: "${PI_ORCH_KEY_3}",
    });
    expect(out.mcpServers.remote.headers).toEqual({ Authorization: "${PI_ORCH_KEY_4}" });
    expect(out.mcpServers.off).toEqual({ enabled: false });
    // The values the references resolve to: what the worker would have resolved from the original.
    expect(secrets).toEqual({
      PI_ORCH_KEY_1: "sk-earlier",
      PI_ORCH_KEY_2: "tok-literal",
      PI_ORCH_KEY_3: "$5",
      PI_ORCH_KEY_4: "Bearer abc",
    });
  });

  it("gives null for text that is not JSON, so the sandbox shows none of it", () => {
    expect(keylessMcpText("{ nope", {})).toBeNull();
    expect(keylessMcpText(undefined, {})).toBeUndefined();
  });
});

describe("keylessFiles", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const tempDir = () => {
    const d = mkdtempSync(join(tmpdir(), "pi-keyless-"));
    dirs.push(d);
    return d;
  };

  it("makes no folder for an agent directory without key files", () => {
    const agentDir = tempDir();
    const into = join(tempDir(), "sandbox", "id1");
    expect(keylessFiles(agentDir, into, true)).toEqual({ replaced: [], secrets: {} });
    expect(existsSync(into)).toBe(false);
  });

  it("writes the copies into a private folder and says what each replaces", () => {
    const agentDir = tempDir();
    writeFileSync(join(agentDir, "models.json"), JSON.stringify({ providers: { p: { apiKey: "sk-x" } } }));
    const into = join(tempDir(), "sandbox", "id2");
    const out = keylessFiles(agentDir, into, true);
    expect(out.secrets).toEqual({ PI_ORCH_KEY_1: "sk-x" });
    expect(out.replaced).toEqual([{ path: join(agentDir, "models.json"), copy: join(into, "models.json") }]);
    expect(statSync(into).mode & 0o777).toBe(0o700);
    expect(statSync(join(into, "models.json")).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(into, "models.json"), "utf8")).not.toContain("sk-x");
  });
});
