/**
 * The private key channel's pure parts: which variables the supervisor takes out of a
 * worker's environment (the built-in providers', PI_API_KEY, models.json's key names),
 * and the worker's reading of the pipe.
 */
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { keyVariableNames, splitSecrets } from "../../supervisor/worker-command.js";
import { SECRETS_FD_VAR, takeSecrets } from "../../shared/secrets.js";
import { KeyStore, withoutApiKey } from "../../supervisor/key-store.js";
import { tempDir } from "../support/rpc-worker.js";

const dirs: { path: string; cleanup: () => void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});
function temp(prefix: string): string {
  const d = tempDir(prefix);
  dirs.push(d);
  return d.path;
}

describe("keyVariableNames", () => {
  it("has the built-in providers' variables, PI_API_KEY and the names models.json gives, not its literals", () => {
    const dir = temp("pi-orch-keys-");
    writeFileSync(
      join(dir, "models.json"),
      JSON.stringify({
        providers: { a: { apiKey: "MY_TEAM_KEY" }, b: { apiKey: "sk-literal" }, c: { apiKey: "!pass x" } },
      }),
    );
    const names = keyVariableNames(dir);
    expect(names).toEqual(expect.arrayContaining(["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "PI_API_KEY", "MY_TEAM_KEY"]));
    expect(names).not.toContain("sk-literal");
    expect(names.some((n) => n.includes("pass"))).toBe(false);
    // No models.json: the built-in names alone.
    expect(keyVariableNames(join(dir, "nowhere"))).not.toContain("MY_TEAM_KEY");
  });
});

describe("splitSecrets", () => {
  it("takes the keys out of the agent's and the supervisor's environment, and names them undefined", () => {
    const split = splitSecrets(
      { PI_API_KEY: "from-api-key", PATH_EXTRA: "x", EMPTY_KEY: "" },
      { OPENAI_API_KEY: "from-serve", HOME: "/h" },
      ["PI_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "EMPTY_KEY"],
    );
    expect(split.secrets).toEqual({ PI_API_KEY: "from-api-key", OPENAI_API_KEY: "from-serve" });
    expect(split.env).toEqual({
      PI_API_KEY: undefined,
      OPENAI_API_KEY: undefined,
      PATH_EXTRA: "x",
      EMPTY_KEY: undefined,
    });
  });
});

describe("takeSecrets", () => {
  it("does nothing without the variable, and refuses an fd that is not above 2", () => {
    const env: NodeJS.ProcessEnv = { A: "1" };
    takeSecrets(env);
    expect(env).toEqual({ A: "1" });
    expect(() => takeSecrets({ [SECRETS_FD_VAR]: "1" })).toThrow(/not a file descriptor above 2/);
  });
});

describe("KeyStore and withoutApiKey", () => {
  it("keeps an agent's key variables in keys.json (0600) and the command line without them", () => {
    const home = temp("pi-orch-keystore-");
    const store = new KeyStore(home);
    store.set("id-1", { PI_API_KEY: "sk-1" });
    store.set("id-2", { PI_API_KEY: "sk-2", OPENAI_API_KEY: "sk-2" });
    expect(new KeyStore(home).get("id-2")).toEqual({ PI_API_KEY: "sk-2", OPENAI_API_KEY: "sk-2" });
    expect(statSync(join(home, "keys.json")).mode & 0o777).toBe(0o600);
    store.set("id-1", {});
    expect(new KeyStore(home).get("id-1")).toBeUndefined();
    expect(withoutApiKey(["--no-session", "--api-key", "sk", "--api-key=sk2", "-x"])).toEqual(["--no-session", "-x"]);
    expect(withoutApiKey(undefined)).toBeUndefined();
  });
});
