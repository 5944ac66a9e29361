/**
 * The providers a session calls and the model catalogue they serve: models.json's, with
 * the extensions' registered providers (and their own stream APIs) applied over it and
 * their virtual models added; the keys bash may see follow each change.
 */
import type { ExtensionHooks } from "../extensions/hooks.js";
import { withVirtualModels } from "../extensions/virtual-models.js";
import { loadFauxScript } from "../providers/faux.js";
import { ProviderSet } from "../providers/index.js";
import { applyProviders, type ModelCatalogue } from "../providers/models.js";
import { streamSimpleProvider } from "../providers/stream-simple.js";
import { maxRetryDelayMs, type Settings } from "../resources/settings.js";
import { inheritKeysFromEnv, setToolEnv, toolEnvFor } from "../tools/tool-env.js";
import type { WorkerOptions } from "./worker-options.js";

/** A session's providers over its catalogue. */
export class ProviderCatalogue {
  /** One provider instance per API, for the life of the worker. */
  readonly providers: ProviderSet;
  /** The catalogue as models.json gave it; extensions' providers are applied over it. */
  private readonly disk: Pick<ModelCatalogue, "models" | "keySettings">;
  /** Whether bash sees provider keys (`--bash-inherit-keys`), kept for when providers change. */
  private readonly inheritKeys: boolean;

  /** `catalogue` is the session's, changed in place when providers change (its readers see it live). */
  constructor(
    private readonly catalogue: ModelCatalogue,
    private readonly options: WorkerOptions,
    env: NodeJS.ProcessEnv,
    settings: Settings,
  ) {
    this.disk = { models: [...catalogue.models], keySettings: new Map(catalogue.keySettings) };
    this.inheritKeys = options.bashInheritKeys === true || inheritKeysFromEnv(env);
    this.shareKeysWithTools();
    const chunkMs = Number(env.PI_ORCH_FAUX_CHUNK_MS ?? 0);
    const retryCap = maxRetryDelayMs(settings);
    this.providers = new ProviderSet(
      {
        script: options.fauxScript ? loadFauxScript(options.fauxScript) : undefined,
        chunkDelayMs: Number.isFinite(chunkMs) ? chunkMs : 0,
      },
      retryCap === undefined ? {} : { maxRetryDelayMs: retryCap },
    );
  }

  /** Bash sees the environment without the keys the catalogue names (unless it inherits them). */
  private shareKeysWithTools(): void {
    setToolEnv(toolEnvFor(process.env, this.catalogue.keySettings.values(), this.options.apiKey, this.inheritKeys));
  }

  /**
   * pi's `registerProvider` / `unregisterProvider`: the model list is models.json's with
   * the extensions' providers applied in order, live at once (`get_available_models`,
   * `set_model`); bash stops seeing a key named by a registered provider, as for models.json.
   */
  applyExtensions(extensions: ExtensionHooks): void {
    const registered = extensions.providers();
    const { models, keySettings } = applyProviders(this.disk, registered);
    this.providers.setCustomApis(
      new Map(
        registered.flatMap((p) =>
          p.streamSimple && p.config.api
            ? [[p.config.api, streamSimpleProvider(p.streamSimple, `provider "${p.name}" (${p.path})`)]]
            : [],
        ),
      ),
    );
    this.catalogue.models = withVirtualModels(models, extensions.virtualModels());
    this.catalogue.keySettings.clear();
    for (const [name, key] of keySettings) this.catalogue.keySettings.set(name, key);
    this.catalogue.commandKeys.clear();
    this.shareKeysWithTools();
  }
}
