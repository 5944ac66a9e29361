/**
 * Picks the provider implementation for a model's API. SDK-backed providers are
 * loaded on first use so a worker that never calls a model never pays for them.
 */
import type { Model } from "../../shared/schema/messages.js";
import type { Provider, ProviderEvent, ProviderRequest } from "../types.js";
import { createFauxProvider, type FauxOptions } from "./faux.js";
import { MessageBuilder } from "./message-builder.js";

/**
 * A provider that loads its implementation on the first request. `maxRetryDelayMs`
 * fills in the request's cap on provider-requested waits when the request has none.
 */
function lazy(load: () => Promise<Provider>, maxRetryDelayMs: () => number | undefined): Provider {
  let loaded: Promise<Provider> | null = null;
  return {
    async *stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
      loaded ??= load();
      const provider = await loaded;
      const cap = request.maxRetryDelayMs ?? maxRetryDelayMs();
      yield* provider.stream(cap === undefined ? request : { ...request, maxRetryDelayMs: cap });
    },
  };
}

/** A provider for an API nobody streams (any more): every request fails saying so. */
function unknownApi(model: Model): Provider {
  return {
    async *stream(): AsyncGenerator<ProviderEvent> {
      const builder = new MessageBuilder(model.api, model.provider, model.id);
      yield builder.start();
      yield* builder.fail(
        `no stream for api "${model.api}" of ${model.provider}/${model.id}: the extension that registered it is not loaded; choose another model`,
        { retryable: false },
      );
    },
  };
}

/** Holds one provider instance per API for the life of a worker. */
export class ProviderSet {
  private readonly byApi = new Map<string, Provider>();
  /** Extensions' own stream APIs (`registerProvider` with `streamSimple`), by api name; they win. */
  private custom = new Map<string, Provider>();
  /**
   * Longest wait a provider may ask for before a retry (pi's `retry.provider.maxRetryDelayMs`;
   * default 60 s, 0 = no cap). Give the session's automatic retry the same number.
   */
  maxRetryDelayMs: number | undefined;

  constructor(
    private readonly faux: FauxOptions = {},
    opts: { maxRetryDelayMs?: number } = {},
  ) {
    this.maxRetryDelayMs = opts.maxRetryDelayMs;
  }

  /** Replace the extensions' stream APIs (after a provider was registered or removed). */
  setCustomApis(custom: Map<string, Provider>): void {
    this.custom = custom;
  }

  /** The provider for this model's API. */
  for(model: Model): Provider {
    const custom = this.custom.get(model.api);
    if (custom) return custom;
    let provider = this.byApi.get(model.api);
    if (provider) return provider;
    switch (model.api) {
      case "faux":
        provider = createFauxProvider(this.faux);
        break;
      case "anthropic-messages":
        provider = lazy(
          async () => (await import("./anthropic.js")).createAnthropicProvider(),
          () => this.maxRetryDelayMs,
        );
        break;
      case "openai-completions":
        provider = lazy(
          async () => (await import("./openai.js")).createOpenAIProvider(),
          () => this.maxRetryDelayMs,
        );
        break;
      case "openai-responses":
        provider = lazy(
          async () => (await import("./openai-responses.js")).createOpenAIResponsesProvider(),
          () => this.maxRetryDelayMs,
        );
        break;
      default:
        // A stream API whose extension removed it (the model was chosen while it was there).
        return unknownApi(model);
    }
    this.byApi.set(model.api, provider);
    return provider;
  }
}
