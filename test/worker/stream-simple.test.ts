/**
 * pi's custom stream contract as a provider: pi's events become ours, and a stream that
 * throws, or ends without `done` / `error`, becomes one `error` event (a provider never throws).
 */
import { describe, expect, it } from "vitest";
import { BUILT_IN_MODELS } from "../../worker/providers/models.js";
import {
  createAssistantMessageEventStream,
  streamSimpleProvider,
  type StreamSimple,
} from "../../worker/providers/stream-simple.js";
import type { ProviderEvent } from "../../worker/types.js";

const model = { ...BUILT_IN_MODELS.find((m) => m.api === "faux")!, api: "own-api" as never, provider: "own" };
const request = () => ({
  model,
  systemPrompt: "",
  messages: [],
  tools: [],
  thinkingLevel: "off" as const,
  signal: new AbortController().signal,
});
const message = (extra: Record<string, unknown> = {}) =>
  ({
    role: "assistant",
    content: [],
    api: "own-api",
    provider: "own",
    model: model.id,
    usage: {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason: "stop",
    timestamp: 0,
    ...extra,
  }) as never;

async function collect(fn: StreamSimple): Promise<ProviderEvent[]> {
  const out: ProviderEvent[] = [];
  for await (const e of streamSimpleProvider(fn, "test").stream(request())) out.push(e);
  return out;
}

describe("streamSimpleProvider", () => {
  it.each<[string, StreamSimple, string[], string | undefined]>([
    [
      "done ends it, with start first",
      () => {
        const s = createAssistantMessageEventStream();
        s.push({ type: "done", reason: "stop", message: message() });
        s.push({ type: "done", reason: "stop", message: message() });
        s.end();
        return s;
      },
      ["start", "done"],
      undefined,
    ],
    [
      "pi's error event carries the error message",
      () => {
        const s = createAssistantMessageEventStream();
        s.push({ type: "start", partial: message() });
        s.push({ type: "error", reason: "error", error: message({ stopReason: "error", errorMessage: "down" }) });
        return s;
      },
      ["start", "error"],
      "down",
    ],
    [
      "a throw becomes an error event",
      () => {
        throw new Error("cannot connect");
      },
      ["start", "error"],
      "cannot connect",
    ],
    [
      "a stream ending without done is an error",
      () => {
        const s = createAssistantMessageEventStream();
        s.push({ type: "start", partial: message() });
        s.end();
        return s;
      },
      ["start", "error"],
      "the stream of test ended without a done or error event",
    ],
    [
      "an error event without its message is the stream's error, said as such",
      () => {
        const s = createAssistantMessageEventStream();
        s.push({ type: "error", reason: "error" } as never);
        return s;
      },
      ["start", "error"],
      "the stream of test sent an error event without an assistant message (error: undefined)",
    ],
  ])("%s", async (_name, fn, types, errorMessage) => {
    const events = await collect(fn);
    expect(events.map((e) => e.type)).toEqual(types);
    const last = events.at(-1)!;
    if (errorMessage)
      expect(last).toMatchObject({
        type: "error",
        retryable: false,
        message: { errorMessage: expect.stringContaining(errorMessage) },
      });
  });

  it("result() resolves with the final message", async () => {
    const s = createAssistantMessageEventStream();
    const m = message({ stopReason: "stop" });
    s.push({ type: "done", reason: "stop", message: m });
    expect(await s.result()).toBe(m);
  });
});
