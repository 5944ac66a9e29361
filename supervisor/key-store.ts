/**
 * The provider keys agents were spawned with (`--api-key`), kept apart from agents.json:
 * `$PI_ORCH_HOME/keys.json` (0600, written atomically), agent id → the variables the key
 * goes in. agents.json records the rest of the command line without the key, so a registry
 * that is copied, printed or salvaged holds none; a sandboxed agent sees neither file.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../shared/atomic-write.js";

type Keys = Record<string, Record<string, string>>;

export class KeyStore {
  private readonly path: string;
  private keys: Keys | undefined;

  constructor(home: string) {
    this.path = join(home, "keys.json");
  }

  /** The key variables of agent `id`, if it was spawned with a key. */
  get(id: string): Record<string, string> | undefined {
    return this.load()[id];
  }

  /** Record (or, with an empty `env`, forget) the key variables of agent `id`. */
  set(id: string, env: Record<string, string>): void {
    const keys = this.load();
    if (Object.keys(env).length === 0) {
      if (!(id in keys)) return;
      delete keys[id];
    } else keys[id] = env;
    writeFileAtomic(this.path, `${JSON.stringify(keys, null, 2)}\n`);
  }

  private load(): Keys {
    if (this.keys) return this.keys;
    try {
      const parsed = JSON.parse(readFileSync(this.path, "utf8")) as unknown;
      this.keys = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Keys) : {};
    } catch {
      this.keys = {};
    }
    return this.keys;
  }
}

/** `args` without `--api-key V` / `--api-key=V`. */
export function withoutApiKey(args: readonly string[] | undefined): string[] | undefined {
  if (!args) return args;
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--api-key" && i + 1 < args.length) i++;
    else if (!args[i]!.startsWith("--api-key=")) kept.push(args[i]!);
  }
  return kept;
}
