/**
 * The same recorded streams through upstream pi 0.73.1's providers (`@mariozechner/pi-ai`,
 * installed in test/upstream) and through ours, against the same mock replay: the
 * assembled content, stop reason and token counts must agree, except where this
 * project fixes what pi gets wrong (the DIVERGENCES table, each checked to still differ).
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AssistantMessage, Model } from "../../shared/schema/messages.js";
import { createAnthropicProvider } from "../../worker/providers/anthropic.js";
import { createOpenAIResponsesProvider } from "../../worker/providers/openai-responses.js";
import { createOpenAIProvider } from "../../worker/providers/openai.js";
import type { Provider } from "../../worker/types.js";
import { mockModel, sseFromChunks, startMockModelServer, type MockModelServer } from "../support/mock-model-server.js";

const FIXTURES = join(import.meta.dirname, "../fixtures/provider-streams");
const PI_AI = join(import.meta.dirname, "../upstream/node_modules/@mariozechner/pi-ai/dist/index.js");

/** Where we differ from pi on purpose: fixture file → what pi does. */
const DIVERGENCES: Record<string, string> = {
  "hand-made.anthropic-context-window-exceeded.chunks.txt":
    "pi: 'Unhandled stop reason' error, not an overflow; we compact and retry",
  "hand-made.anthropic-max-tokens-in-tool-call.chunks.txt":
    "0.73.1 keeps the cut call's salvaged arguments; pi 1.6 and we parse its text once: {} and argumentsError",
  "hand-made.anthropic-pause-turn.1.chunks.txt": "pi stops after the paused half; we continue the turn",
  "hand-made.anthropic-unknown-stop-reason.chunks.txt": "both fail; pi drops the final output count",
  "hand-made.ollama-index-0-calls.chunks.txt":
    "pi merges every index-0 call into the first; we start a call per new id",
  "openai-python.refusal.sse": "pi loses the refusal (empty message, stop); we show it and fail",
  "vercel-ai.anthropic-refusal.chunks.txt": "pi: 'An unknown error occurred'; we show the explanation",
  "vercel-ai.xai-tool-call.chunks.txt": "pi misses xAI's reasoning tokens (counted apart from completion_tokens)",
};

type Api = "anthropic-messages" | "openai-completions" | "openai-responses";

const apiOf = (file: string): Api =>
  file.includes("anthropic")
    ? "anthropic-messages"
    : file.includes("responses")
      ? "openai-responses"
      : "openai-completions";
const FILES = readdirSync(FIXTURES)
  .filter((f) => /\.(chunks\.txt|sse)$/.test(f) && !f.includes("pause-turn.2"))
  .sort();

function body(file: string, api: Api): string {
  const raw = readFileSync(join(FIXTURES, file), "utf8");
  if (file.endsWith(".sse")) return raw;
  return sseFromChunks(
    api === "anthropic-messages" ? "anthropic" : api === "openai-responses" ? "openai-responses" : "openai",
    raw,
  );
}

/** What both must agree on. */
function essence(m: AssistantMessage) {
  return {
    stopReason: m.stopReason,
    content: m.content,
    usage: { input: m.usage.input, output: m.usage.output, cacheRead: m.usage.cacheRead },
  };
}

let server: MockModelServer;
let piAi: { complete: (model: unknown, context: unknown, options: unknown) => Promise<AssistantMessage> };
beforeAll(async () => {
  server = await startMockModelServer();
  piAi = await import(PI_AI);
});
afterAll(async () => {
  await server.close();
});

describe("recorded streams: ours against upstream pi", () => {
  it("reads every recording", () => {
    expect(FILES.length).toBeGreaterThanOrEqual(25);
    for (const file of Object.keys(DIVERGENCES)) expect(FILES).toContain(file);
  });

  it.each(FILES)("%s", async (file) => {
    const api = apiOf(file);
    const model: Model = {
      ...mockModel(server, api),
      reasoning: false,
      provider: file.includes("deepseek") ? "deepseek" : "mock",
    };
    const context = { systemPrompt: "test", messages: [{ role: "user" as const, content: "hi", timestamp: 1 }] };

    server.enqueue({ replay: { body: body(file, api) } });
    if (file.includes("pause-turn.1")) server.enqueue({ replay: { body: body(file.replace(".1.", ".2."), api) } });
    const provider: Provider =
      api === "anthropic-messages"
        ? createAnthropicProvider()
        : api === "openai-responses"
          ? createOpenAIResponsesProvider()
          : createOpenAIProvider();
    let ours: AssistantMessage | undefined;
    for await (const e of provider.stream({
      model,
      ...context,
      tools: [],
      thinkingLevel: "off",
      apiKey: "k",
      signal: new AbortController().signal,
    })) {
      if (e.type === "done" || e.type === "error") ours = e.message;
    }

    server.enqueue({ replay: { body: body(file, api) } });
    const theirs = await piAi.complete(model, context, { apiKey: "k" });

    if (DIVERGENCES[file]) expect(essence(ours!), DIVERGENCES[file]).not.toEqual(essence(theirs));
    else expect(essence(ours!)).toEqual(essence(theirs));
  });
});
