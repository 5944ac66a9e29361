/**
 * Model and thinking selection of a session: the start model (flags, then the resumed
 * session's, then settings and the default provider; waiting for extensions' providers when
 * asked), the key each provider is called with, `set_model` / `cycle_model` within the
 * scoped models, the thinking level clamped to the model, and the selection a resumed or
 * switched session brings back.
 */
import type { WorkerEvent } from "../../shared/schema/events.js";
import type { AssistantMessage, Model, ThinkingLevel } from "../../shared/schema/messages.js";
import { clampThinkingLevel, supportedThinkingLevels } from "../../shared/schema/messages.js";
import type { Agent } from "../agent/agent.js";
import { toLlmMessages } from "../agent/to-llm.js";
import type { RouteRequestContext } from "../agent/types.js";
import type { ExtensionHooks } from "../extensions/hooks.js";
import type { ScopedModel } from "../extensions/host.js";
import { isVirtualModel, routeReason, virtualModelUsable } from "../extensions/virtual-models.js";
import type { AuthKeys } from "../providers/auth-file.js";
import {
  apiKeyEnvVar,
  BUILT_IN_MODELS,
  defaultProvider,
  type ModelCatalogue,
  resolveApiKey,
  resolveModel,
} from "../providers/models.js";
import type { Settings } from "../resources/settings.js";
import type { SessionStore } from "../session/session-file.js";
import type { WorkerOptions } from "./worker-options.js";

/** What the selection reads and changes of its session. */
export interface ModelSelectionHost {
  /** The agent whose model and level are the selection (made once the start model is known). */
  agent(): Agent;
  readonly catalogue: ModelCatalogue;
  readonly options: WorkerOptions;
  readonly env: NodeJS.ProcessEnv;
  /** Keys a pi user stored with `/login` (`<agent dir>/auth.json`). */
  readonly authKeys: AuthKeys;
  settings(): Settings;
  /** The session changes are recorded in (kept in memory with `--no-session`). */
  store(): SessionStore;
  extensions(): ExtensionHooks;
  emit(event: WorkerEvent): void;
  warn(message: string): void;
}

/** A model the session resumed: what its last model_change named. */
type SessionModel = { provider: string; modelId: string };

/** The model a session starts with, and its thinking level. */
interface StartSelection {
  model: Model;
  thinkingLevel: ThinkingLevel;
}

/** The thinking level of `--thinking`, else the settings' default, else pi's `medium`. */
const DEFAULT_THINKING: ThinkingLevel = "medium";

/**
 * pi's `--models` patterns: a glob (`*`, `?`) on `provider/id` or `id`, else a
 * case-insensitive part of either; a `:level` suffix is a thinking level, not part of the name.
 */
function matchesModelPattern(model: Model, pattern: string): boolean {
  const bare = pattern.replace(/:(off|minimal|low|medium|high|xhigh)$/, "").toLowerCase();
  const names = [`${model.provider}/${model.id}`.toLowerCase(), model.id.toLowerCase()];
  if (/[*?]/.test(bare)) {
    const re = new RegExp(
      `^${bare
        .replace(/[.+^${}()|[\]\\]/g, "\\$&")
        .replace(/\*/g, ".*")
        .replace(/\?/g, ".")}$`,
    );
    return names.some((n) => re.test(n));
  }
  return names.some((n) => n.includes(bare));
}

/** `ctx.scopedModels`: the models some pattern matches, with the level a `:level` suffix pinned (the first pattern that matches wins). */
function scopeModels(models: Model[], patterns: string[]): ScopedModel[] {
  if (patterns.length === 0) return [];
  return models.flatMap((model) => {
    const pattern = patterns.find((p) => matchesModelPattern(model, p));
    if (pattern === undefined) return [];
    const level = /:(off|minimal|low|medium|high|xhigh)$/.exec(pattern)?.[1] as ThinkingLevel | undefined;
    return [level ? { model, thinkingLevel: level } : { model }];
  });
}

/** A session's model and thinking selection (see the file's comment). */
export class ModelSelection {
  /** The level asked for at start (flag, resumed session, settings), applied once the start model is known. */
  private preferredThinking: ThinkingLevel = DEFAULT_THINKING;
  /** The provider `--api-key` is for: the start-up model's, as pi (another provider keeps its own key). */
  private explicitKeyProvider?: string;
  /**
   * The start model could not be resolved before extensions loaded (`deferModel`): what the
   * resumed session used, and whether a fresh session file still needs its model entries.
   */
  private pending: { fromSession?: SessionModel; freshStore: boolean } | null = null;

  constructor(private readonly host: ModelSelectionHost) {}

  /**
   * The start model and level for a session resuming `restored` (if any). With `deferModel`
   * a model that cannot be resolved yet is a faux stand-in until `settleStart()`: nothing
   * calls a model before extensions load.
   */
  start(
    restored: { model?: SessionModel; thinkingLevel?: ThinkingLevel; messages: unknown[] } | undefined,
  ): StartSelection {
    const o = this.host.options;
    let model: Model;
    try {
      model = this.initialModel(restored?.model, !o.deferModel);
    } catch (err) {
      if (!o.deferModel) throw err;
      this.pending = { fromSession: restored?.model, freshStore: !restored || restored.messages.length === 0 };
      model = BUILT_IN_MODELS.find((m) => m.api === "faux")!;
    }
    // The provider named on the command line, also when an extension's provider is resolved later.
    const named = o.model?.includes("/") ? o.model.slice(0, o.model.indexOf("/")) : undefined;
    this.explicitKeyProvider = o.provider ?? named ?? (this.pending ? undefined : model.provider);
    this.preferredThinking =
      o.thinking ?? restored?.thinkingLevel ?? this.host.settings().defaultThinkingLevel ?? DEFAULT_THINKING;
    return { model, thinkingLevel: clampThinkingLevel(model, this.preferredThinking) };
  }

  /** The start model waits for the extensions' providers (`settleStart()` resolves it). */
  get waiting(): boolean {
    return this.pending !== null;
  }

  /**
   * Resolve a start model that waited for extensions, now that their providers are in the
   * catalogue; throws what resolution says when it still fails. Nothing to do otherwise.
   */
  settleStart(): void {
    const pending = this.pending;
    if (!pending) return;
    const model = this.initialModel(pending.fromSession, true);
    this.pending = null;
    this.explicitKeyProvider ??= model.provider;
    const agent = this.host.agent();
    agent.model = model;
    agent.thinkingLevel = clampThinkingLevel(model, this.preferredThinking);
    const store = this.host.store();
    if (pending.freshStore && store.entries.length === 0) {
      // Kept in memory when the disk is full at start: the worker runs and refuses prompts until it takes them.
      store.appendOrKeep({ type: "model_change", provider: model.provider, modelId: model.id });
      store.appendOrKeep({ type: "thinking_level_change", thinkingLevel: agent.thinkingLevel });
    }
  }

  /**
   * The model: flags win, then what the resumed session used, then the default provider.
   * A session's model that is gone falls back to the default with a warning only when
   * `final` (before extensions load, one of theirs may still provide it).
   */
  private initialModel(fromSession: SessionModel | undefined, final: boolean): Model {
    const { options: o, catalogue } = this.host;
    if (!o.provider && !o.model && fromSession) {
      try {
        return resolveModel(catalogue, fromSession.provider, fromSession.modelId);
      } catch (err) {
        if (!final) throw err;
        this.host.warn(
          `the session's model ${fromSession.provider}/${fromSession.modelId} is not available (${(err as Error).message}); using the default`,
        );
      }
    }
    const settings = this.host.settings();
    const modelArg = o.model ?? (o.provider ? undefined : settings.defaultModel);
    // As pi: `--model ID` alone is first looked up by id among every provider's models
    // (a models.json model needs no --provider); only an unknown id gets the default provider.
    const anyProvider = o.model !== undefined && !o.provider && catalogue.models.some((m) => m.id === o.model);
    const providerName =
      o.provider ??
      (o.model ? undefined : settings.defaultProvider) ??
      (modelArg?.includes("/") || anyProvider ? undefined : defaultProvider(this.host.env));
    return resolveModel(catalogue, providerName, modelArg);
  }

  /** A loaded session's model and level (a model that is gone keeps the current one, with a warning). */
  restore(ctx: { model?: SessionModel; thinkingLevel?: ThinkingLevel }): void {
    const agent = this.host.agent();
    if (ctx.model) {
      try {
        agent.model = resolveModel(this.host.catalogue, ctx.model.provider, ctx.model.modelId);
      } catch {
        this.host.warn(
          `the session's model ${ctx.model.provider}/${ctx.model.modelId} is not available; keeping ${agent.model.provider}/${agent.model.id}`,
        );
      }
    }
    if (ctx.thinkingLevel) agent.thinkingLevel = ctx.thinkingLevel;
  }

  /** A new session file, as a new pi starts: the thinking level of the flags or settings. */
  startFresh(): void {
    const agent = this.host.agent();
    const level = this.host.options.thinking ?? this.host.settings().defaultThinkingLevel ?? DEFAULT_THINKING;
    agent.thinkingLevel = clampThinkingLevel(agent.model, level);
  }

  /** The key for a model's provider: `--api-key`, then auth.json's, then models.json's or the environment's (pi 1.6.0's order). */
  apiKeyFor(model: Model): string | undefined {
    if (model.api === "faux") return undefined;
    const { catalogue, options, authKeys, env } = this.host;
    const explicit = model.provider === this.explicitKeyProvider ? options.apiKey : undefined;
    return resolveApiKey(catalogue, model.provider, explicit ?? authKeys.keyFor(model.provider), env);
  }

  /** Why the current model cannot be called (no key), or undefined when it can. */
  missingKeyProblem(): string | undefined {
    const model = this.host.agent().model;
    if (model.api === "faux" || isVirtualModel(model) || this.apiKeyFor(model)) return undefined;
    const env = apiKeyEnvVar(model.provider);
    return (
      `no API key for provider "${model.provider}": ` +
      (env ? `set ${env}, ` : "") +
      `pass --api-key, or set providers.${model.provider}.apiKey in models.json (or use --provider faux for an offline demo)`
    );
  }

  /**
   * `set_model`: a model of the catalogue whose provider can be called (pi's rule); the
   * thinking level follows (see below), clamped to what the model can do.
   */
  setModel(provider: string, modelId: string, source: "set" | "cycle" = "set"): Model {
    const model = this.host.catalogue.models.find((m) => m.provider === provider && m.id === modelId);
    if (!model) throw new Error(`Model not found: ${provider}/${modelId}`);
    if (!this.isUsable(model)) throw new Error(`No API key for ${provider}/${modelId}`);
    const agent = this.host.agent();
    const previousModel = agent.model;
    const previousLevel = agent.thinkingLevel;
    agent.model = model;
    this.host.store().append({ type: "model_change", provider: model.provider, modelId: model.id });
    void this.host.extensions().notify({ type: "model_select", model, previousModel, source });
    // pi 1.6: the settings' default level, else the level in use, clamped to the new model.
    this.setThinkingLevel(this.host.settings().defaultThinkingLevel ?? previousLevel);
    return model;
  }

  /** The `--models` / `enabledModels` patterns `cycle_model` and `ctx.scopedModels` keep to. */
  private patterns(): string[] {
    return this.host.options.scopedModels ?? this.host.settings().enabledModels ?? [];
  }

  /** Next usable model (wrapping; within `--models` / `enabledModels` when given); null when there is only one. */
  cycleModel(): { model: Model; thinkingLevel: ThinkingLevel; isScoped: boolean } | null {
    const patterns = this.patterns();
    const usable = this.availableModels().filter(
      (m) => patterns.length === 0 || patterns.some((p) => matchesModelPattern(m, p)),
    );
    if (usable.length <= 1) return null;
    const agent = this.host.agent();
    const current = usable.findIndex((m) => m.provider === agent.model.provider && m.id === agent.model.id);
    const next = usable[(current + 1) % usable.length];
    this.setModel(next.provider, next.id, "cycle");
    return { model: next, thinkingLevel: agent.thinkingLevel, isScoped: patterns.length > 0 };
  }

  /** `ctx.scopedModels`: the usable models the patterns match, with their pinned levels. */
  scopedModels(): ScopedModel[] {
    return scopeModels(this.availableModels(), this.patterns());
  }

  /** A model can be used when its provider has a key; the scripted faux model only when it is the one in use. */
  private isUsable(model: Model): boolean {
    if (model.api === "faux") return this.host.agent().model.api === "faux";
    if (isVirtualModel(model)) return virtualModelUsable(model, this.host.catalogue.models, (m) => this.isUsable(m));
    return this.apiKeyFor(model) !== undefined;
  }

  /** The models that can be used now (`get_available_models`), as pi lists them. */
  availableModels(): Model[] {
    return this.host.catalogue.models.filter((m) => this.isUsable(m));
  }

  /** Set the level (clamped to the model), record and announce it when it changes. */
  setThinkingLevel(level: ThinkingLevel): void {
    const agent = this.host.agent();
    const effective = clampThinkingLevel(agent.model, level);
    if (agent.model.reasoning || effective !== "off") this.preferredThinking = effective;
    if (effective === agent.thinkingLevel) return;
    const previousLevel = agent.thinkingLevel;
    agent.thinkingLevel = effective;
    this.host.store().append({ type: "thinking_level_change", thinkingLevel: effective });
    this.host.emit({ type: "thinking_level_changed", level: effective });
    void this.host.extensions().notify({ type: "thinking_level_select", level: effective, previousLevel });
  }

  /** Next of the levels the model offers; null when the model does not reason. */
  cycleThinkingLevel(): { level: ThinkingLevel } | null {
    const agent = this.host.agent();
    if (!agent.model.reasoning) return null;
    const levels = this.availableThinkingLevels();
    const i = levels.indexOf(agent.thinkingLevel);
    this.setThinkingLevel(levels[(i + 1) % levels.length]);
    return { level: agent.thinkingLevel };
  }

  /** `get_available_thinking_levels`: the levels the current model offers (`off` alone without reasoning). */
  availableThinkingLevels(): ThinkingLevel[] {
    return supportedThinkingLevels(this.host.agent().model);
  }

  /**
   * Where a request of a run goes: a virtual model's router decides (pi 1.6), told when
   * the request retries `failed`; undefined for a physical selection, which stands.
   */
  async routeRun(
    ctx: RouteRequestContext,
    failed: AssistantMessage | undefined,
  ): Promise<{ model: Model; thinkingLevel: ThinkingLevel } | undefined> {
    if (!isVirtualModel(ctx.model)) return undefined;
    return this.host.extensions().routeRequest({
      ...ctx,
      // pi's convertToLlm: extension messages as user text, failed responses kept (providers drop them).
      messages: ctx.messages.flatMap((m) =>
        m.role === "assistant" || m.role === "toolResult" ? [m] : toLlmMessages([m]),
      ),
      reason: routeReason(ctx.messages, failed),
      ...(failed ? { failed } : {}),
    });
  }

  /** The model a request outside a run (a summary) goes to: a virtual selection's router decides (`direct`). */
  async directModel(): Promise<Model> {
    const agent = this.host.agent();
    const model = agent.model;
    if (!isVirtualModel(model)) return model;
    const { thinkingLevel } = agent;
    const messages = toLlmMessages(agent.messages);
    const signal = new AbortController().signal;
    return (await this.host.extensions().routeRequest({ model, thinkingLevel, reason: "direct", messages, signal }))
      .model;
  }
}
