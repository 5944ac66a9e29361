/**
 * The text of an aborted model request, on our worker and on upstream pi 1.6.0 as the
 * oracle, through each wire API the mock speaks (OpenAI chat completions, Anthropic
 * messages, OpenAI Responses): pi words it by where the abort met the request (sent and
 * waiting for its answer, reading its stream), and by API once it streams. The same mock
 * script runs on both; the transcripts (the aborted reply's `errorMessage` with the rest)
 * must be equal. An abort that keeps the next request from starting is in
 * tool-call-outcomes-oracle.test.ts. Skipped when test/upstream is not installed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { MockReply } from "../support/mock-model-server.js";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { transcriptsOf, type OracleSide } from "../support/oracle-transcript.js";
import { UPSTREAM } from "../support/upstream-oracle.js";

const { servers, dirs } = useOracleFixture();

type Line = Record<string, any>;

/** The mock provider on `api` (the Anthropic SDK's base URL has no /v1). */
const onApi = (api: string) => (home: string) => {
  const file = join(home, "models.json");
  const models = JSON.parse(readFileSync(file, "utf8"));
  models.providers.mock.api = api;
  if (api === "anthropic-messages") models.providers.mock.baseUrl = models.providers.mock.baseUrl.slice(0, -3);
  writeFileSync(file, JSON.stringify(models));
};

/** Prompt, abort once `ready` says the request is where the case wants it, and wait for the run's end. */
async function abortWhen(s: OracleSide, reply: MockReply, ready: (from: number, requests: number) => Promise<unknown>) {
  s.server.enqueue(reply);
  const from = s.w.received.length;
  const requests = s.server.requests.length;
  await s.send({ type: "prompt", message: "hi" });
  await ready(from, requests);
  await s.send({ type: "abort" });
  await s.w.event("agent_end", 30_000, from);
}

const aborted = (lines: unknown[]) =>
  (lines as Line[])
    .filter((l) => l.type === "message_end" && l.message.stopReason === "aborted")
    .map((l) => l.message.errorMessage);

const CASES = [
  {
    api: "openai-completions",
    waiting: "Request aborted",
    streaming: "Request was aborted",
  },
  {
    api: "anthropic-messages",
    waiting: "Request aborted",
    streaming: "This operation was aborted",
  },
  {
    api: "openai-responses",
    waiting: "Request aborted",
    streaming: "OpenAI Responses stream ended before a terminal response event",
  },
];

describe.skipIf(!UPSTREAM["1.6.0"].installed)("an aborted request's text: ours and upstream pi 1.6.0", () => {
  it.each(CASES)(
    "$api: aborted while waiting for the answer, and while reading its stream",
    async (c) => {
      const t = await transcriptsOf(servers, dirs, { pi: "1.6.0", prepare: onApi(c.api) }, async (s) => {
        // The server has the request and sends nothing, not even the headers.
        await abortWhen(s, { hang: "before-headers" }, (_from, n) => s.server.waitForRequests(n + 1));
        // The response has started (the reply's message_start), and its stream sends nothing more.
        await abortWhen(s, { hang: true }, (from) =>
          s.w.waitFor((l) => l.type === "message_start" && l.message.role === "assistant", 30_000, from),
        );
      });
      expect(t.ours.lines).toEqual(t.upstream.lines);
      // pi's own words, so a change of either side is told apart from a difference.
      expect(aborted(t.upstream.lines)).toEqual([c.waiting, c.streaming]);
    },
    60_000,
  );
});
