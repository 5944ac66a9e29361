/**
 * Constructor options shared by the model SDK clients (Anthropic and OpenAI take the
 * same four): where to send the request, with which key and headers, and no retries.
 */
import type { ProviderRequest } from "../types.js";

/** Client options for one request's model and key. */
export function sdkClientOptions(request: ProviderRequest): {
  baseURL: string;
  apiKey: string;
  defaultHeaders: Record<string, string> | undefined;
  maxRetries: number;
} {
  return {
    baseURL: request.model.baseUrl,
    // A placeholder rather than `undefined`: local servers need no key, and each SDK would
    // otherwise pick up its environment key (ANTHROPIC_API_KEY, OPENAI_API_KEY) and send it
    // to whatever baseUrl this model names.
    apiKey: request.apiKey ?? "none",
    defaultHeaders: request.model.headers,
    // The agent loop owns retries (with `auto_retry_*` events); the SDK must not retry behind it.
    maxRetries: 0,
  };
}
