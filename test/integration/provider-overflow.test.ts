/**
 * Every server's real context-overflow error (test/fixtures/provider-streams/overflow-errors.json)
 * sent to the built `pi --mode rpc` through the official SDK: each leads to exactly one
 * compaction and one retry of the request, never to an automatic retry of the same request.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { MockReply } from "../support/mock-model-server.js";
import { useMockWorkerEnv } from "../support/mock-worker-env.js";
import { RpcWorker } from "../support/rpc-worker.js";

interface OverflowError {
  server: string;
  status: number | null;
  body: Record<string, unknown>;
  source: string;
}

const ERRORS = JSON.parse(
  readFileSync(join(import.meta.dirname, "../fixtures/provider-streams/overflow-errors.json"), "utf8"),
) as OverflowError[];
const isAnthropic = (e: OverflowError) => e.body.type === "error";

const ctx = useMockWorkerEnv();

/**
 * The reply carrying the error as that server sends it: OpenAI-style bodies under `error`
 * unless the server puts its fields at the top (`object: "error"`: vLLM, Mistral), Anthropic's
 * as they are, and a status-less one as an error chunk inside a 200 stream.
 */
function errorReply(e: OverflowError): MockReply {
  if (e.status === null) return { replay: { body: `data: ${JSON.stringify({ error: e.body })}\n\n` } };
  const wire = isAnthropic(e) || e.body.object === "error" ? e.body : { error: e.body };
  return { error: { status: e.status, body: JSON.stringify(wire) } };
}

describe.each([
  ["anthropic-messages", ERRORS.filter(isAnthropic)],
  ["openai-completions", ERRORS.filter((e) => !isAnthropic(e))],
] as const)("context overflow through pi --mode rpc (%s)", (api, errors) => {
  it(`compacts once and retries once for each of ${errors.length} servers`, async () => {
    ctx.writeModels({ api });
    const w = new RpcWorker(
      [
        "--mode",
        "rpc",
        "--provider",
        "mock",
        "--model",
        "mock-1",
        "--retry-delay-ms",
        "10",
        "--compaction-keep-tokens",
        "1",
      ],
      {
        cwd: ctx.project,
        env: { PI_ORCH_HOME: ctx.home, ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" },
      },
    );
    // Something to compact before the first overflow.
    ctx.server.enqueue({ text: "warm-up answer" });
    await w.request({ type: "prompt", message: "warm up" });
    await w.event("agent_end");

    for (const e of errors) {
      ctx.server.enqueue(errorReply(e), { text: `SUMMARY before ${e.server}` }, { text: `answer after ${e.server}` });
      const requestsBefore = ctx.server.requests.length;
      const from = w.received.length;
      await w.request({ type: "prompt", message: `question for ${e.server}` });
      await w.waitFor((l) => l.type === "agent_end", 15_000, from);
      const lines = w.received.slice(from);
      const types = lines.map((l) => l.type);
      expect(
        types.filter((t) => t === "compaction_start"),
        e.server,
      ).toHaveLength(1);
      expect(lines.find((l) => l.type === "compaction_start")).toEqual({
        type: "compaction_start",
        reason: "overflow",
      });
      expect(lines.find((l) => l.type === "compaction_end")).toMatchObject({
        reason: "overflow",
        aborted: false,
        willRetry: true,
      });
      expect(types, e.server).not.toContain("auto_retry_start");
      // The overflowed request, the summary request, and one retry.
      expect(ctx.server.requests.length - requestsBefore, e.server).toBe(3);
      const retried = JSON.stringify(ctx.server.requests.at(-1)!.body.messages);
      expect(retried).toContain(`SUMMARY before ${e.server}`);
      expect(retried).toContain(`question for ${e.server}`);
      const end = lines.find((l) => l.type === "agent_end");
      const last = end!.messages.at(-1);
      expect(last).toMatchObject({
        role: "assistant",
        stopReason: "stop",
        content: [{ type: "text", text: `answer after ${e.server}` }],
      });
    }
  });
});
