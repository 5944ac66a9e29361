/**
 * `anthropic-messages`: Claude through the official `@anthropic-ai/sdk`, streaming the
 * Messages API into MessageBuilder events. The SDK is imported on the first request so
 * a worker that never talks to Anthropic never loads it.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type { ThinkingContent } from "../../shared/schema/messages.js";
import type { Provider, ProviderEvent, ProviderRequest } from "../types.js";
import { buildAnthropicParams, replyPrice, type AnthropicParams } from "./anthropic-params.js";
import { sdkClientOptions } from "./client-options.js";
import { failStream, finishStream, mapAnthropicStop } from "./finish.js";
import { MessageBuilder } from "./message-builder.js";

/** How often a `pause_turn` is continued within one request before it counts as an error. */
const MAX_PAUSE_CONTINUATIONS = 5;

/** `message_delta.delta.stop_details`: why a refusal happened (newer than the SDK's types). */
interface StopDetails {
  type?: string;
  category?: string | null;
  explanation?: string | null;
}

/** Create the Anthropic provider. Stateless: one client per request, built from the request's model and key. */
export function createAnthropicProvider(): Provider {
  return {
    async *stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
      const { model, signal } = request;
      const builder = new MessageBuilder(model.api, model.provider, model.id);
      let stopReason: string | null = null;
      let stopDetails: StopDetails | undefined;
      try {
        const { default: AnthropicClient } = await import("@anthropic-ai/sdk");
        const client = new AnthropicClient(sdkClientOptions(request));
        // Token counts of earlier rounds of a paused turn; each round reports its own.
        const before = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
        // What the reply costs: the model's price, or a server-side fallback's (set at message_start).
        let price = model.cost;
        for (let round = 0; ; round++) {
          const built = buildAnthropicParams(
            round === 0 ? request : { ...request, messages: [...request.messages, builder.message] },
          );
          if (built.providerThinkingLevel) builder.message.providerThinkingLevel = built.providerThinkingLevel;
          const params = ((await request.onPayload?.(built.params)) ?? built.params) as AnthropicParams;
          // As the SDK's beta client does: the features go as a header, the rest as the body.
          const { betas, ...body } = params;
          const headers = betas && betas.length > 0 ? { "anthropic-beta": betas.join(",") } : undefined;
          const { data: events, response } = await client.messages
            .create(body as Anthropic.MessageCreateParamsStreaming, { signal, ...(headers ? { headers } : {}) })
            .withResponse();
          await request.onResponse?.({ status: response.status, headers: Object.fromEntries(response.headers) });
          if (round === 0) yield builder.start();
          stopReason = null;
          for await (const event of events) {
            // pi 1.6's provider_stream_event: the SDK's parsed event, before it is normalized.
            if (request.onStreamEvent) await request.onStreamEvent(event);
            switch (event.type) {
              case "message_start": {
                builder.setResponseId(event.message.id);
                // Another model answered: Anthropic's server-side fallback (pi 1.6 records it and its price).
                const answered = event.message.model;
                if (answered && answered !== model.id) builder.message.responseModel = answered;
                price = replyPrice(model, builder.message.responseModel);
                const u = event.message.usage;
                builder.setUsage(
                  {
                    input: before.input + (u.input_tokens ?? 0),
                    output: before.output + (u.output_tokens ?? 0),
                    cacheRead: before.cacheRead + (u.cache_read_input_tokens ?? 0),
                    cacheWrite: before.cacheWrite + (u.cache_creation_input_tokens ?? 0),
                  },
                  price,
                );
                break;
              }
              case "content_block_start": {
                const block = event.content_block;
                // The server moved to a fallback model before any output: nothing to show. After
                // output the reply would be two models' halves, which pi 1.6 refuses as well.
                if ((block as { type: string }).type === "fallback") {
                  if (builder.message.content.length > 0)
                    throw new Error("Anthropic performed an unsupported mid-output model fallback");
                  break;
                }
                if (block.type === "text") yield* builder.text(block.text);
                else if (block.type === "thinking")
                  yield* builder.thinking(block.thinking, block.signature || undefined);
                else if (block.type === "redacted_thinking") {
                  // The payload is opaque; it travels back to the API as the block's signature.
                  yield* builder.thinking("[Reasoning redacted]", block.data);
                  (builder.message.content[builder.message.content.length - 1] as ThinkingContent).redacted = true;
                } else if (block.type === "tool_use") yield* builder.toolCallStart(block.id, block.name);
                break;
              }
              case "content_block_delta": {
                const delta = event.delta;
                if (delta.type === "text_delta") yield* builder.text(delta.text);
                else if (delta.type === "thinking_delta") yield* builder.thinking(delta.thinking);
                else if (delta.type === "signature_delta") yield* builder.thinking("", delta.signature);
                else if (delta.type === "input_json_delta") yield* builder.toolCallDelta(delta.partial_json);
                break;
              }
              case "content_block_stop": {
                const end = builder.closeOpen();
                if (end) yield end;
                break;
              }
              case "message_delta": {
                stopReason = event.delta.stop_reason ?? stopReason;
                stopDetails = (event.delta as { stop_details?: StopDetails | null }).stop_details ?? stopDetails;
                const u = event.usage;
                // Proxies often omit input counts here; keep the ones from message_start then.
                builder.setUsage(
                  {
                    output: before.output + (u.output_tokens ?? builder.message.usage.output - before.output),
                    ...(u.input_tokens != null ? { input: before.input + u.input_tokens } : {}),
                    ...(u.cache_read_input_tokens != null
                      ? { cacheRead: before.cacheRead + u.cache_read_input_tokens }
                      : {}),
                    ...(u.cache_creation_input_tokens != null
                      ? { cacheWrite: before.cacheWrite + u.cache_creation_input_tokens }
                      : {}),
                  },
                  price,
                );
                break;
              }
            }
          }
          // pause_turn: the API stopped a long turn to be sent back as is and continued.
          if (stopReason !== "pause_turn" || signal.aborted || round >= MAX_PAUSE_CONTINUATIONS) break;
          const end = builder.closeOpen();
          if (end) yield end;
          const u = builder.message.usage;
          Object.assign(before, { input: u.input, output: u.output, cacheRead: u.cacheRead, cacheWrite: u.cacheWrite });
        }
      } catch (error) {
        yield* failStream(builder, error, signal.aborted, request.maxRetryDelayMs);
        return;
      }
      // The SDK ends the iteration quietly when the signal aborts it.
      yield* finishStream(builder, {
        aborted: signal.aborted,
        rawReason: stopReason,
        outcome: stopReason === null ? null : mapAnthropicStop(stopReason),
        field: "stop_reason",
        ...(stopDetails?.explanation ? { refusal: stopDetails.explanation } : {}),
        ...(stopDetails?.category ? { refusalDetail: `category "${stopDetails.category}"` } : {}),
      });
    },
  };
}
