/**
 * Anthropic's server-side fallback, ours against pi 1.6.0 as the oracle: a catalogue model
 * whose `compat.allowedFallbackModels` names models the server may answer with when it
 * refuses (claude-fable-5) asks for them (`fallbacks` in the body, the
 * `server-side-fallback-2026-07-01` beta); a reply a fallback model made (its `model` in
 * `message_start`, a `fallback` block before any output) is recorded with `responseModel`
 * and priced at the fallback's price; a fallback after output had begun ends the reply in
 * an error. The replies are hand-made SSE in the Messages API's event shapes (no public
 * recording of this beta exists); both sides get the same bytes on their own mock server.
 * Skipped when test/upstream is not installed.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import type { MockModelServer } from "../support/mock-model-server.js";
import { sseFromChunks } from "../support/mock-model-server.js";
import type { RpcWorker } from "../support/rpc-worker.js";
import { startOracle, UPSTREAM, type Implementation } from "../support/upstream-oracle.js";

type Json = Record<string, any>;

const { servers, dirs } = useOracleFixture();
const IMPLS: Implementation[] = ["ours", "upstream"];

const usage = { input_tokens: 1000, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
const start = (id: string, model: string) => ({
  type: "message_start",
  message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, usage },
});
const fallbackBlock = (index: number) => [
  { type: "content_block_start", index, content_block: { type: "fallback", from_model: "claude-fable-5" } },
  { type: "content_block_stop", index },
];
const textBlock = (index: number, text: string) => [
  { type: "content_block_start", index, content_block: { type: "text", text: "" } },
  { type: "content_block_delta", index, delta: { type: "text_delta", text } },
  { type: "content_block_stop", index },
];
const end = [
  { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 200 } },
  { type: "message_stop" },
];
const sse = (events: object[]) => sseFromChunks("anthropic", events.map((e) => JSON.stringify(e)).join("\n"));

/** A fallback model answered from the start. */
const ANSWERED_BY_FALLBACK = sse([
  start("msg_fb_1", "claude-opus-5"),
  ...fallbackBlock(0),
  ...textBlock(1, "answered by the fallback"),
  ...end,
]);
/** The fallback came after output had begun. */
const MID_OUTPUT = sse([
  start("msg_fb_2", "claude-opus-5"),
  ...textBlock(0, "half an answer"),
  ...fallbackBlock(1),
  ...textBlock(2, "the other half"),
  ...end,
]);
/** The asked model answered (no fallback). */
const OWN = sse([start("msg_own", "claude-fable-5"), ...textBlock(0, "answered by fable"), ...end]);

async function send(w: RpcWorker, message: string): Promise<void> {
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message }, 30_000)).toMatchObject({ success: true });
  await w.event("agent_settled", 30_000, from);
}

interface Side {
  requests: { beta: unknown; fallbacks: unknown; model: unknown }[];
  replies: Json[];
}

async function script(impl: Implementation, server: MockModelServer): Promise<Side> {
  const { w } = startOracle(impl, server, dirs, {
    pi: "1.6.0",
    args: ["--provider", "anthropic", "--model", "claude-fable-5", "--thinking", "off"],
    env: { ANTHROPIC_API_KEY: "a" },
    prepare: (home) => {
      writeFileSync(join(home, "models.json"), JSON.stringify({ providers: { anthropic: { baseUrl: server.url } } }));
      // One reply per request: the error must not be retried.
      writeFileSync(join(home, "settings.json"), JSON.stringify({ retry: { enabled: false } }));
    },
  });
  const at = server.requests.length;
  server.enqueue(
    { replay: { body: ANSWERED_BY_FALLBACK } },
    { replay: { body: OWN } },
    { replay: { body: MID_OUTPUT } },
  );
  await send(w, "first");
  await send(w, "second");
  await send(w, "third");
  const messages = (await w.request({ type: "get_messages" })).data.messages as Json[];
  w.kill();
  return {
    requests: server.requests.slice(at).map((r) => ({
      beta: r.headers["anthropic-beta"],
      fallbacks: r.body.fallbacks,
      model: r.body.model,
    })),
    replies: messages
      .filter((m) => m.role === "assistant")
      .map((m) => ({
        model: m.model,
        responseModel: m.responseModel,
        responseId: m.responseId,
        stopReason: m.stopReason,
        errorMessage: m.errorMessage,
        text: (m.content as Json[]).filter((c) => c.type === "text").map((c) => c.text),
        usage: { input: m.usage.input, output: m.usage.output, cost: m.usage.cost },
      })),
  };
}

describe.skipIf(!UPSTREAM["1.6.0"].installed)("Anthropic server-side fallback, as pi 1.6.0", () => {
  it("asks for the catalogue's fallbacks, records and prices a fallback's reply, refuses one mid-output", async () => {
    const [ours, upstream] = await Promise.all(IMPLS.map((impl) => script(impl, servers[impl])));
    // What pi 1.6.0 does, so the comparison below compares something.
    expect(upstream.requests).toHaveLength(3);
    for (const r of upstream.requests) {
      expect(r.fallbacks).toEqual([{ model: "claude-opus-4-8" }, { model: "claude-opus-5" }]);
      expect(String(r.beta).split(",")).toContain("server-side-fallback-2026-07-01");
    }
    expect(upstream.replies.map((r) => [r.responseModel, r.stopReason])).toEqual([
      ["claude-opus-5", "stop"],
      [undefined, "stop"],
      ["claude-opus-5", "error"],
    ]);
    expect(upstream.replies[2]!.errorMessage).toContain("mid-output model fallback");
    // The fallback's price (claude-opus-5: $5/$25 per million) for its reply, fable's ($10/$50) for its own.
    expect(upstream.replies[0]!.usage.cost.input).toBeCloseTo(0.005, 9);
    expect(upstream.replies[1]!.usage.cost.input).toBeCloseTo(0.01, 9);

    expect(ours.requests).toEqual(upstream.requests);
    expect(ours.replies).toEqual(upstream.replies);
  });
});
