/**
 * The environment tools run commands in: the worker's own, minus the provider API keys,
 * so a model that runs `env` (or a script that dumps it) cannot put a key into the
 * session file, the event log and every attached client. `--bash-inherit-keys` (or
 * `PI_BASH_INHERIT_KEYS=1`) opts back in for tools that need the keys.
 */
import { TOOL_TAG_VAR, WORKER_TAG_VAR } from "../../shared/proc.js";
import { KEY_VAR_PREFIX } from "../../shared/secrets.js";
import { toolTag } from "./process-tree.js";

/** Environment variables that hold the built-in providers' keys, and PI_API_KEY (how a supervisor passes `--api-key`). */
export const PROVIDER_KEY_VARS: readonly string[] = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "PI_API_KEY"];

/** Variables that point at the supervisor's files, kept from tool commands (PI_ORCH_AGENT stays: it marks them). */
const SUPERVISOR_VARS: readonly string[] = ["PI_ORCH_HOME", WORKER_TAG_VAR];

/** What to remove from a tool's environment. */
export interface KeyScrub {
  /** Variable names to drop. */
  names: Iterable<string>;
  /** Key values: any variable holding one of these (a key copied to another name) is dropped too. */
  values?: Iterable<string>;
}

/**
 * The variable names a provider key may come from: the built-in ones plus every
 * models.json `apiKey` setting that names a variable (literals and `!command` are not names).
 */
export function providerKeyNames(keySettings: Iterable<string>): string[] {
  const names = new Set(PROVIDER_KEY_VARS);
  for (const setting of keySettings) if (/^[A-Z_][A-Z0-9_]*$/.test(setting)) names.add(setting);
  return [...names];
}

/**
 * A copy of `env` without the variables `scrub` names, whose value is one of its key
 * values, or that carry a key a supervisor took out of the worker's key files.
 */
export function withoutKeys(env: NodeJS.ProcessEnv, scrub: KeyScrub): NodeJS.ProcessEnv {
  const names = new Set(scrub.names);
  const values = new Set([...(scrub.values ?? [])].filter((v) => v.length > 0));
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (names.has(name) || name.startsWith(KEY_VAR_PREFIX) || (value !== undefined && values.has(value))) continue;
    out[name] = value;
  }
  return out;
}

/** Whether the keys were asked to stay in tool environments (`PI_BASH_INHERIT_KEYS=1`). */
export function inheritKeysFromEnv(env: NodeJS.ProcessEnv): boolean {
  return env.PI_BASH_INHERIT_KEYS === "1" || env.PI_BASH_INHERIT_KEYS === "true";
}

/**
 * The tool environment of a worker: `env` without the variables its providers read keys
 * from (`keySettings` are models.json's `apiKey` values) and without any variable holding
 * the `--api-key` value or a literal models.json key; `env` itself when `inherit`.
 */
export function toolEnvFor(
  env: NodeJS.ProcessEnv,
  keySettings: Iterable<string>,
  explicitKey: string | undefined,
  inherit: boolean,
): NodeJS.ProcessEnv {
  // The supervisor's home is the worker's business, not its tools': a command the model
  // runs should not find the fleet's socket, registry and logs by name.
  const home = [...SUPERVISOR_VARS];
  // The tag finds the tools' processes again at exit, also those that left their group.
  const tag = { [TOOL_TAG_VAR]: toolTag() };
  if (inherit) return { ...withoutKeys(env, { names: home }), ...tag };
  const settings = [...keySettings];
  const names = providerKeyNames(settings);
  const literals = settings.filter((s) => !names.includes(s) && !s.startsWith("!"));
  return {
    ...withoutKeys(env, { names: [...names, ...home], values: [...literals, ...(explicitKey ? [explicitKey] : [])] }),
    ...tag,
  };
}

// One worker process runs one agent, so its tools share one environment, set by the
// runtime once it knows the catalogue's key settings.
let configured: NodeJS.ProcessEnv | undefined;

/** Set the environment tool commands get (the runtime calls this at start). */
export function setToolEnv(env: NodeJS.ProcessEnv): void {
  configured = env;
}

/** The environment for a tool command: what `setToolEnv` set, else this process's without the built-in key variables. */
export function toolEnv(): NodeJS.ProcessEnv {
  return configured ?? toolEnvFor(process.env, [], undefined, inheritKeysFromEnv(process.env));
}
