/**
 * The agent's hooks the extensions answer: the context of a request (`context`,
 * `context_with_system`), the provider's payload, response and stream events, tool calls
 * and results, and a finished message (`message_end`). A hook no extension listens to is
 * left out, so the agent does no work for it.
 */
import type { AgentHooks } from "../agent/types.js";
import type { ExtensionHooks } from "../extensions/hooks.js";

/** The extension-answered part of the agent's hooks, reading the extensions loaded at each call (a reload replaces them). */
export function extensionAgentHooks(
  extensions: () => ExtensionHooks,
): Pick<
  AgentHooks,
  | "transformContext"
  | "transformFullContext"
  | "streamEvents"
  | "beforeToolCall"
  | "afterToolCall"
  | "finalizeMessage"
  | "onPayload"
  | "onResponse"
> {
  return {
    transformContext: async (messages) => (await extensions().context(messages)) ?? messages,
    transformFullContext: () =>
      extensions().has("context_with_system") ? (messages) => extensions().contextWithSystem(messages) : undefined,
    streamEvents: (model) =>
      extensions().has("provider_stream_event")
        ? (data) =>
            extensions().notify({
              type: "provider_stream_event",
              provider: model.provider,
              api: model.api,
              model: model.id,
              data,
            })
        : undefined,
    beforeToolCall: ({ toolCall, args }) => extensions().toolCall(toolCall, args),
    afterToolCall: async ({ toolCall, args, result, isError }) =>
      extensions().toolResult(toolCall, args, result, isError),
    finalizeMessage: (message) => extensions().messageEnd(message),
    onPayload: async (payload) =>
      extensions().has("before_provider_request") ? extensions().providerRequest(payload) : payload,
    onResponse: async ({ status, headers }) => {
      if (extensions().has("after_provider_response"))
        await extensions().notify({ type: "after_provider_response", status, headers });
    },
  };
}
