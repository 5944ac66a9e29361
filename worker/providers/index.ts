/**
 * Picks the provider implementation for a model's API. SDK-backed providers are
 * loaded on first use so a worker that never calls a model never pays for them.
 */
import type { Model } from "../../shared/schema/messages.js";
import type { Provider, ProviderEvent, ProviderRequest } from "../types.js";
import { createFauxProvider, type FauxOptions } from "./faux.js";

/** A provider that loads its implementation on the first request. */
function lazy(load: () => Promise<Provider>): Provider {
  let loaded: Promise<Provider> | null = null;
  return {
    async *stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
      loaded ??= load();
      const provider = await loaded;
      yield* provider.stream(request);
    },
  };
}

/** Holds one provider instance per API for the life of a worker. */
export class ProviderSet {
  private readonly byApi = new Map<string, Provider>();

  constructor(private readonly faux: FauxOptions = {}) {}

  /** The provider for this model's API. */
  for(model: Model): Provider {
    let provider = this.byApi.get(model.api);
    if (provider) return provider;
    switch (model.api) {
      case "faux":
        provider = createFauxProvider(this.faux);
        break;
      case "anthropic-messages":
        provider = lazy(async () => (await import("./anthropic.js")).createAnthropicProvider());
        break;
      case "openai-completions":
        provider = lazy(async () => (await import("./openai.js")).createOpenAIProvider());
        break;
      case "openai-responses":
        provider = lazy(async () => (await import("./openai-responses.js")).createOpenAIResponsesProvider());
        break;
    }
    this.byApi.set(model.api, provider);
    return provider;
  }
}
