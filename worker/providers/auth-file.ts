/**
 * pi's `<agent dir>/auth.json`, where `/login` keeps a provider's API key:
 * `{"anthropic": {"type": "api_key", "key": "sk-..."}}`, the key a literal or `!command`
 * whose output is the key. pi 1.6.0 prefers such a key to the environment's and to
 * models.json's `apiKey` (only `--api-key` comes first). OAuth credentials (`"type":
 * "oauth"`) need pi's token refresh and are not used here.
 */
import { execSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** `<agent dir>/auth.json`. */
export function authJsonPath(home: string): string {
  return join(home, "auth.json");
}

/** The stored API keys of auth.json, by provider, as written (literal or `!command`). Pure. */
export function parseAuthKeys(text: string): Map<string, string> {
  const keys = new Map<string, string>();
  const parsed: unknown = JSON.parse(text.replace(/^\uFEFF/, ""));
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return keys;
  for (const [provider, credential] of Object.entries(parsed)) {
    const c = credential as { type?: unknown; key?: unknown } | null;
    if (c?.type === "api_key" && typeof c.key === "string" && c.key.trim() !== "") keys.set(provider, c.key);
  }
  return keys;
}

/**
 * The API keys a user stored with pi, each resolved once: a `!command` runs when its key
 * is first needed and its output is kept for the life of the process, as in pi (a command
 * that fails or prints nothing leaves the key unset until the worker restarts).
 */
export class AuthKeys {
  private readonly settings: Map<string, string>;
  private readonly resolved = new Map<string, string | undefined>();

  /** Read `path`; a missing file is no keys, a damaged one is reported with `warn` and ignored. */
  constructor(path: string, warn: (message: string) => void) {
    this.settings = new Map();
    if (!existsSync(path)) return;
    try {
      this.settings = parseAuthKeys(readFileSync(path, "utf8"));
    } catch (err) {
      warn(`${path} is not valid JSON (${(err as Error).message}); its stored keys are not used`);
    }
  }

  /** The stored key of `provider`, or undefined when there is none. */
  keyFor(provider: string): string | undefined {
    const setting = this.settings.get(provider);
    if (setting === undefined) return undefined;
    if (!setting.startsWith("!")) return setting;
    if (!this.resolved.has(provider)) this.resolved.set(provider, runKeyCommand(setting.slice(1)));
    return this.resolved.get(provider);
  }
}

function runKeyCommand(command: string): string | undefined {
  try {
    const out = execSync(command, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 10_000 }).trim();
    return out || undefined;
  } catch {
    return undefined;
  }
}
