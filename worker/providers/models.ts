/**
 * The model catalogue: built-in models of the `anthropic`, `openai` and `faux`
 * providers plus custom providers from `<agent dir>/models.json` (pi's shape).
 */
import { execSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import type { Static } from "typebox";
import * as Type from "typebox/type";
import type { Model, ModelApi } from "../../shared/schema/messages.js";
import { checker } from "../../shared/validate.js";
import catalogue from "./catalogue.json" with { type: "json" };
import { ModelCompatSchema } from "./compat-schema.js";

const ZERO_COST = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

function builtIn(
  provider: string,
  api: ModelApi,
  baseUrl: string,
  id: string,
  name: string,
  extra: Partial<Model> = {},
): Model {
  return {
    id,
    name,
    api,
    provider,
    baseUrl,
    reasoning: false,
    input: ["text", "image"],
    cost: ZERO_COST,
    contextWindow: 200_000,
    maxTokens: 16_384,
    ...extra,
  };
}

/**
 * Models known without any configuration: upstream pi 1.6.0's own `anthropic` and `openai`
 * chat models (ids, prices in $ per million tokens, windows, output limits, thinking-level
 * maps, adaptive thinking), written to catalogue.json by scripts/models-catalogue.mjs, plus
 * `faux`. A provider's default is pi 1.6.0's (`defaultModelPerProvider`), listed first.
 * pi lists four the Anthropic SDK calls deprecated (Opus and Sonnet 4.5; the SDK warns on
 * every request to one): test/worker/models.test.ts checks that list against the SDK's.
 */
export const BUILT_IN_MODELS: Model[] = [
  ...defaultsFirst(catalogue.models as Model[], catalogue.defaults as Record<string, string>),
  builtIn("faux", "faux", "faux://local", "faux-1", "Faux (scripted, offline)", {
    input: ["text"],
    contextWindow: 128_000,
    maxTokens: 4_096,
  }),
];

/** The catalogue with each provider's default model moved to the front of its provider's models. */
function defaultsFirst(models: Model[], defaults: Record<string, string>): Model[] {
  const isDefault = (m: Model) => defaults[m.provider] === m.id;
  return [...models.filter(isDefault), ...models.filter((m) => !isDefault(m))];
}

const ModelEntry = Type.Object({
  id: Type.String(),
  name: Type.Optional(Type.String()),
  api: Type.Optional(Type.String()),
  reasoning: Type.Optional(Type.Boolean()),
  input: Type.Optional(Type.Array(Type.Union([Type.Literal("text"), Type.Literal("image")]))),
  contextWindow: Type.Optional(Type.Number()),
  maxTokens: Type.Optional(Type.Number()),
  cost: Type.Optional(
    Type.Object({
      input: Type.Number(),
      output: Type.Number(),
      cacheRead: Type.Number(),
      cacheWrite: Type.Number(),
    }),
  ),
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  compat: Type.Optional(ModelCompatSchema),
  /** pi 1.6: the provider's word for each thinking level; null takes a level away. */
  thinkingLevelMap: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()]))),
});

const ProviderEntry = Type.Object({
  baseUrl: Type.Optional(Type.String()),
  api: Type.Optional(Type.String()),
  apiKey: Type.Optional(Type.String()),
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  /** Applies to every model of the provider; a model's own `compat` overrides field by field. */
  compat: Type.Optional(ModelCompatSchema),
  models: Type.Optional(Type.Array(ModelEntry)),
});

/** The `models.json` file: `{providers: {NAME: {baseUrl, api, apiKey, models: [...]}}}`. */
export const ModelsFile = Type.Object({
  providers: Type.Record(Type.String(), ProviderEntry),
});
export type ModelsFile = Static<typeof ModelsFile>;

const SUPPORTED_APIS = new Set<string>(["anthropic-messages", "openai-completions", "openai-responses"]);

/** The loaded catalogue plus the per-provider key settings. */
export interface ModelCatalogue {
  models: Model[];
  /** `apiKey` settings from models.json, by provider (literal, env var name or `!command`). */
  keySettings: Map<string, string>;
  /** Output of `!command` keys, so a command runs at most once per `KEY_COMMAND_TTL_MS`, not per request. */
  commandKeys: Map<string, { value: string; at: number }>;
}

/**
 * pi's `registerProvider(name, config)` config as far as it applies here: models.json's
 * provider shape, plus a per-model `baseUrl` and a display `name`. pi's `streamSimple`
 * (a custom stream API) is kept beside it; `oauth` (`/login`) is not used here.
 */
export const ProviderConfig = Type.Object({
  ...ProviderEntry.properties,
  name: Type.Optional(Type.String()),
  models: Type.Optional(Type.Array(Type.Object({ ...ModelEntry.properties, baseUrl: Type.Optional(Type.String()) }))),
});
export type ProviderConfig = Static<typeof ProviderConfig>;

const checkProviderShape = checker(ProviderConfig);

/**
 * Check a `registerProvider` config with pi's rules (models need a baseUrl, an apiKey
 * and an api each, one of those we speak or `customApi`, the one the extension streams
 * itself); returns it typed, or throws saying what to fix.
 */
export function checkProviderConfig(name: string, config: unknown, customApi?: string): ProviderConfig {
  const checked = checkProviderShape(config);
  if (!checked.ok) throw new Error(`provider "${name}": ${checked.errors.join("; ")}`);
  const c = checked.value;
  if (!c.models || c.models.length === 0) return c;
  if (!c.baseUrl) throw new Error(`provider "${name}": "baseUrl" is required when defining models`);
  if (!c.apiKey)
    throw new Error(
      `provider "${name}": "apiKey" (a key or the name of an environment variable) is required when defining models`,
    );
  for (const m of c.models) {
    const api = m.api ?? c.api;
    if (!api || (!SUPPORTED_APIS.has(api) && api !== customApi)) {
      throw new Error(
        `provider "${name}", model "${m.id}": api "${api ?? "(none)"}" is not one pi-orch speaks; use "openai-completions", "openai-responses" or "anthropic-messages", or give a streamSimple for it`,
      );
    }
  }
  return c;
}

/**
 * The models and key settings after extensions' providers, applied in order over the
 * catalogue from disk (pi's rules: a config with models replaces all of that provider's
 * models; one with only baseUrl/headers re-aims the provider's existing models). Pure:
 * unregistering a provider is applying the rest to the same base again.
 */
export function applyProviders(
  base: Pick<ModelCatalogue, "models" | "keySettings">,
  registered: readonly { name: string; config: ProviderConfig }[],
): Pick<ModelCatalogue, "models" | "keySettings"> {
  let models = [...base.models];
  const keySettings = new Map(base.keySettings);
  for (const { name, config } of registered) {
    if (config.apiKey) keySettings.set(name, config.apiKey);
    if (config.models && config.models.length > 0) {
      models = models.filter((m) => m.provider !== name);
      for (const m of config.models) {
        models.push({
          id: m.id,
          name: m.name ?? m.id,
          api: (m.api ?? config.api) as ModelApi,
          provider: name,
          baseUrl: m.baseUrl ?? config.baseUrl!,
          reasoning: m.reasoning ?? false,
          input: m.input ?? ["text"],
          cost: m.cost ?? ZERO_COST,
          contextWindow: m.contextWindow ?? 128_000,
          maxTokens: m.maxTokens ?? 16_384,
          ...(config.headers || m.headers ? { headers: { ...config.headers, ...m.headers } } : {}),
          ...(config.compat || m.compat ? { compat: { ...config.compat, ...m.compat } } : {}),
        });
      }
    } else if (config.baseUrl || config.headers) {
      models = models.map((m) =>
        m.provider !== name
          ? m
          : {
              ...m,
              ...(config.baseUrl ? { baseUrl: config.baseUrl } : {}),
              ...(config.headers ? { headers: { ...m.headers, ...config.headers } } : {}),
            },
      );
    }
  }
  return { models, keySettings };
}

/** How long the output of an `apiKey: "!command"` is reused (short-lived tokens still rotate). */
export const KEY_COMMAND_TTL_MS = 5 * 60_000;

/** Load built-ins plus `models.json` (if the file exists). Errors name the file and the field. */
export function loadCatalogue(modelsJson?: string): ModelCatalogue {
  const models = [...BUILT_IN_MODELS];
  const keySettings = new Map<string, string>();
  const commandKeys = new Map<string, { value: string; at: number }>();
  if (!modelsJson || !existsSync(modelsJson)) return { models, keySettings, commandKeys };
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(modelsJson, "utf8"));
  } catch (err) {
    throw new Error(`${modelsJson}: not valid JSON (${(err as Error).message}); fix or remove the file`);
  }
  const checked = checker(ModelsFile)(raw);
  if (!checked.ok) throw new Error(`${modelsJson}: ${checked.errors.join("; ")}`);
  for (const [provider, entry] of Object.entries(checked.value.providers)) {
    if (entry.apiKey) keySettings.set(provider, entry.apiKey);
    // As pi: a built-in provider's `baseUrl` (and headers, compat) apply to its built-in
    // models too, so `{"anthropic": {"baseUrl": PROXY}}` routes them through a proxy.
    if (entry.baseUrl || entry.headers || entry.compat) {
      for (const [i, m] of models.entries()) {
        if (m.provider !== provider) continue;
        models[i] = {
          ...m,
          ...(entry.baseUrl ? { baseUrl: entry.baseUrl } : {}),
          ...(entry.headers ? { headers: { ...m.headers, ...entry.headers } } : {}),
          ...(entry.compat ? { compat: { ...m.compat, ...entry.compat } } : {}),
        };
      }
    }
    for (const m of entry.models ?? []) {
      const api = m.api ?? entry.api ?? builtInApi(provider);
      if (!api || !SUPPORTED_APIS.has(api)) {
        throw new Error(
          `${modelsJson}: providers.${provider}.models "${m.id}" has api "${api ?? "(none)"}"; use "openai-completions", "openai-responses" or "anthropic-messages"`,
        );
      }
      const baseUrl = entry.baseUrl ?? builtInBaseUrl(provider);
      if (!baseUrl) throw new Error(`${modelsJson}: providers.${provider} needs a baseUrl`);
      const model: Model = {
        id: m.id,
        name: m.name ?? m.id,
        api: api as ModelApi,
        provider,
        baseUrl,
        reasoning: m.reasoning ?? false,
        input: m.input ?? ["text"],
        cost: m.cost ?? ZERO_COST,
        contextWindow: m.contextWindow ?? 128_000,
        maxTokens: m.maxTokens ?? 16_384,
        ...(entry.headers || m.headers ? { headers: { ...entry.headers, ...m.headers } } : {}),
        ...(entry.compat || m.compat ? { compat: { ...entry.compat, ...m.compat } } : {}),
        ...(m.thinkingLevelMap ? { thinkingLevelMap: m.thinkingLevelMap } : {}),
      };
      const at = models.findIndex((x) => x.provider === provider && x.id === m.id);
      if (at >= 0) models[at] = model;
      else models.push(model);
    }
  }
  return { models, keySettings, commandKeys };
}

function builtInApi(provider: string): ModelApi | undefined {
  return BUILT_IN_MODELS.find((m) => m.provider === provider)?.api;
}

function builtInBaseUrl(provider: string): string | undefined {
  return BUILT_IN_MODELS.find((m) => m.provider === provider)?.baseUrl;
}

/**
 * Find a model by `--provider` and `--model` (`provider/id` accepted, and an id of a
 * known provider that is not in the list yet is accepted with that provider's defaults).
 */
export function resolveModel(catalogue: ModelCatalogue, provider?: string, modelArg?: string): Model {
  let wantProvider = provider;
  let wantId = modelArg;
  if (modelArg?.includes("/") && !catalogue.models.some((m) => m.id === modelArg)) {
    const slash = modelArg.indexOf("/");
    const maybeProvider = modelArg.slice(0, slash);
    if (!provider || provider === maybeProvider) {
      wantProvider = maybeProvider;
      wantId = modelArg.slice(slash + 1);
    }
  }
  const providers = [...new Set(catalogue.models.map((m) => m.provider))];
  if (wantProvider && !providers.includes(wantProvider)) {
    throw new Error(`unknown provider "${wantProvider}"; known: ${providers.join(", ")} (add others in models.json)`);
  }
  if (!wantId) {
    const first = catalogue.models.find((m) => m.provider === wantProvider);
    if (!first) throw new Error(`provider "${wantProvider}" has no models; add some in models.json`);
    return first;
  }
  const exact = catalogue.models.find((m) => m.id === wantId && (!wantProvider || m.provider === wantProvider));
  if (exact) return exact;
  if (wantProvider) {
    const template = catalogue.models.find((m) => m.provider === wantProvider);
    if (template && template.api !== "faux") return { ...template, id: wantId, name: wantId };
  }
  const known = catalogue.models
    .filter((m) => !wantProvider || m.provider === wantProvider)
    .map((m) => `${m.provider}/${m.id}`)
    .join(", ");
  throw new Error(`model "${wantId}" not found; known: ${known}`);
}

const ENV_KEYS: Record<string, string> = { anthropic: "ANTHROPIC_API_KEY", openai: "OPENAI_API_KEY" };

/** The environment variable a built-in provider reads its key from, if it has one. */
export function apiKeyEnvVar(provider: string): string | undefined {
  return Object.hasOwn(ENV_KEYS, provider) ? ENV_KEYS[provider] : undefined;
}

/**
 * The API key for a provider: `--api-key`, else models.json's `apiKey` (a literal,
 * the name of an environment variable, or `!command` whose output is the key), else
 * the provider's usual environment variable.
 */
export function resolveApiKey(
  catalogue: ModelCatalogue,
  provider: string,
  explicit?: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (explicit) return explicit;
  const setting = catalogue.keySettings.get(provider);
  if (setting) {
    if (setting.startsWith("!")) {
      const cached = catalogue.commandKeys.get(provider);
      if (cached && Date.now() - cached.at < KEY_COMMAND_TTL_MS) return cached.value;
      let value: string;
      try {
        value = execSync(setting.slice(1), {
          encoding: "utf8",
          stdio: ["ignore", "pipe", "ignore"],
          timeout: 10_000,
        }).trim();
      } catch {
        throw new Error(`models.json: the apiKey command of provider "${provider}" failed; run it by hand to see why`);
      }
      catalogue.commandKeys.set(provider, { value, at: Date.now() });
      return value;
    }
    if (/^[A-Z_][A-Z0-9_]*$/.test(setting) && env[setting]) return env[setting];
    return setting;
  }
  // An empty variable (`OPENAI_API_KEY=`) is no key, as pi reads it.
  const envName = apiKeyEnvVar(provider);
  return (envName && env[envName]) || undefined;
}

/** Which provider to use when none was asked for: the first with a key, else `faux`. */
export function defaultProvider(env: NodeJS.ProcessEnv = process.env): string {
  if (env.ANTHROPIC_API_KEY) return "anthropic";
  if (env.OPENAI_API_KEY) return "openai";
  return "faux";
}
