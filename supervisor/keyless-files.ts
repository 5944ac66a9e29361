/**
 * The key files of a sandboxed worker's agent directory without their keys. The worker
 * reads `models.json` and `auth.json`, so the sandbox shows them; a literal key in
 * either would then be one `cat` away from the model. The supervisor writes copies in
 * which each literal key is a reference instead, the variable its value now travels in
 * on the worker's private pipe (shared/secrets.ts): `apiKey: "PI_ORCH_KEY_1"` in
 * models.json (a variable name, which pi resolves from its environment), `key:
 * "!printenv PI_ORCH_KEY_2"` in auth.json (a command, which pi runs for its output).
 * The sandbox shows the copies in place of the originals. Tools never get a
 * `PI_ORCH_KEY_*` variable (worker/tools/tool-env.ts).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../shared/atomic-write.js";
import { KEY_VAR_PREFIX } from "../shared/secrets.js";
import { parseTemplate } from "../shared/config-template.js";

/** A file the sandbox shows in place of another. */
export interface Replacement {
  /** The original's path, where the copy shows. */
  path: string;
  /** The copy. */
  copy: string;
}

/** The copies made, and the variables holding the keys taken out of them. */
export interface KeylessFiles {
  replaced: Replacement[];
  secrets: Record<string, string>;
}

/** Whether a models.json `apiKey` is a literal key (not a variable name, not a `!command`). */
function literal(setting: unknown): setting is string {
  return (
    typeof setting === "string" && setting !== "" && !setting.startsWith("!") && !/^[A-Z_][A-Z0-9_]*$/.test(setting)
  );
}

/**
 * models.json's and auth.json's text with their literal keys taken out, and those keys by
 * the variable that replaces each. `ownWorker` false (a custom `--worker-command`, maybe
 * upstream pi with its OAuth refresh) keeps auth.json's OAuth entries; ours does not use
 * them, so its copy leaves them out. Unparsable text is returned as null. Pure.
 */
export function keylessTexts(
  models: string | undefined,
  auth: string | undefined,
  ownWorker: boolean,
): { models: string | null | undefined; auth: string | null | undefined; secrets: Record<string, string> } {
  const secrets: Record<string, string> = {};
  const reference = (key: string) => {
    const name = `${KEY_VAR_PREFIX}${Object.keys(secrets).length + 1}`;
    secrets[name] = key;
    return name;
  };
  const parse = (text: string): Record<string, unknown> | null => {
    try {
      const value: unknown = JSON.parse(text.replace(/^\uFEFF/, ""));
      return typeof value === "object" && value !== null && !Array.isArray(value)
        ? (value as Record<string, unknown>)
        : null;
    } catch {
      return null;
    }
  };
  let modelsOut: string | null | undefined = models;
  if (models !== undefined) {
    const parsed = parse(models);
    const providers = parsed?.providers;
    if (parsed === null) modelsOut = null;
    else if (typeof providers === "object" && providers !== null) {
      for (const provider of Object.values(providers as Record<string, Record<string, unknown> | null>))
        if (provider && literal(provider.apiKey)) provider.apiKey = reference(provider.apiKey);
      modelsOut = `${JSON.stringify(parsed, null, 2)}\n`;
    }
  }
  let authOut: string | null | undefined = auth;
  if (auth !== undefined) {
    const parsed = parse(auth);
    if (parsed === null) authOut = null;
    else {
      for (const [provider, credential] of Object.entries(parsed)) {
        const c = credential as { type?: unknown; key?: unknown } | null;
        if (c?.type === "api_key" && typeof c.key === "string" && c.key !== "" && !c.key.startsWith("!"))
          c.key = `!printenv ${reference(c.key)}`;
        else if (c?.type === "oauth" && ownWorker) delete parsed[provider];
      }
      authOut = `${JSON.stringify(parsed, null, 2)}\n`;
    }
  }
  return { models: modelsOut, auth: authOut, secrets };
}

/**
 * mcp.json's text with every literal `env` and `headers` value of its servers (a token, a
 * password: nothing tells them apart) taken out for a `${PI_ORCH_KEY_n}` reference, which
 * the worker's MCP client resolves from its environment as pi resolves any `${VAR}`.
 * Values that already name a variable or a `!command` stay. The variables continue the
 * numbering of `secrets`, to which they are added. Unparsable text is returned as null. Pure.
 */
export function keylessMcpText(mcp: string | undefined, secrets: Record<string, string>): string | null | undefined {
  if (mcp === undefined) return undefined;
  let parsed: { mcpServers?: Record<string, Record<string, unknown> | null> };
  try {
    parsed = JSON.parse(mcp.replace(/^\uFEFF/, "")) as typeof parsed;
  } catch {
    return null;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return null;
  for (const server of Object.values(parsed.mcpServers ?? {})) {
    for (const field of ["env", "headers"] as const) {
      const values = server?.[field];
      if (typeof values !== "object" || values === null) continue;
      for (const [name, value] of Object.entries(values as Record<string, unknown>)) {
        if (typeof value !== "string" || value === "" || value.startsWith("!")) continue;
        const parts = parseTemplate(value);
        if (parts.some((p) => p.type === "env")) continue;
        const variable = `${KEY_VAR_PREFIX}${Object.keys(secrets).length + 1}`;
        secrets[variable] = parts.map((p) => (p.type === "literal" ? p.value : "")).join("");
        (values as Record<string, string>)[name] = `\${${variable}}`;
      }
    }
  }
  return `${JSON.stringify(parsed, null, 2)}\n`;
}

/**
 * Write the keyless copies of `agentDir`'s models.json, auth.json and mcp.json into `into`
 * (0700, files 0600; made only when one of them exists) and say what to show where. A
 * file that does not parse shows as `{}`: a key inside it cannot be told from the rest,
 * so none of it is shown (the worker then knows no custom provider, and says so when one
 * is asked for).
 */
export function keylessFiles(agentDir: string, into: string, ownWorker: boolean): KeylessFiles {
  const read = (name: string) => {
    const path = join(agentDir, name);
    return existsSync(path) ? readFileSync(path, "utf8") : undefined;
  };
  const copies = keylessTexts(read("models.json"), read("auth.json"), ownWorker);
  const mcp = keylessMcpText(read("mcp.json"), copies.secrets);
  const replaced: Replacement[] = [];
  let made = false;
  for (const [name, text] of [
    ["models.json", copies.models],
    ["auth.json", copies.auth],
    ["mcp.json", mcp],
  ] as const) {
    if (text === undefined) continue;
    // Only when there is a copy to hold: a new folder is the dearest file-system call of a
    // spawn (~0.4 ms of CPU for ext4 to place its inode, profiled in a fleet), and most
    // agent directories have none of these files.
    if (!made) {
      mkdirSync(into, { recursive: true, mode: 0o700 });
      chmodSync(into, 0o700);
      made = true;
    }
    const copy = join(into, name);
    writeFileAtomic(copy, text ?? "{}\n");
    chmodSync(copy, 0o600);
    replaced.push({ path: join(agentDir, name), copy });
  }
  return { replaced, secrets: copies.secrets };
}
