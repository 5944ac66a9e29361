/**
 * Tool calls that end without running as asked, on our worker and on upstream pi 1.6.0 as
 * the oracle: the calls of a reply the output token limit cut off, a call the run's abort
 * kept from starting (no `tool_result` handler sees it), and argument texts that are not a
 * JSON object, or are one once pi's repair escapes their strings, through the OpenAI and
 * the Anthropic API. The same mock model script
 * runs on both; the transcripts (events, messages, and what the next request
 * carries to the model) must be equal. Skipped when test/upstream is not installed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { transcriptsOf } from "../support/oracle-transcript.js";
import { UPSTREAM } from "../support/upstream-oracle.js";

const { servers, dirs, dir } = useOracleFixture();

/**
 * `hold` waits for the run's abort, then fails; it runs alone (sequential), so the call
 * after it is prepared once the run is aborted. A `tool_result` handler marks every result
 * it sees.
 */
const HOLD_EXTENSION = `
import { Type } from "typebox";

export default function (pi) {
  pi.registerTool({
    name: "hold",
    label: "hold",
    description: "waits until the run is aborted",
    parameters: Type.Object({}),
    executionMode: "sequential",
    execute: (_id, _params, signal, onUpdate) =>
      new Promise((_resolve, reject) => {
        signal.addEventListener("abort", () => reject(new Error("hold stopped")), { once: true });
        onUpdate({ content: [{ type: "text", text: "holding" }], details: {} });
      }),
  });
  pi.on("tool_result", (event) => ({
    content: [...event.content, { type: "text", text: " (seen by tool_result)" }],
  }));
}
`;

type Line = Record<string, any>;

/** The tool results' texts of a transcript, in order. */
const resultTexts = (lines: unknown[]): string[] =>
  (lines as Line[])
    .filter((l) => l.type === "message_end" && l.message.role === "toolResult")
    .map((l) => l.message.content.map((c: Line) => c.text).join(""));

describe.skipIf(!UPSTREAM["1.6.0"].installed)("tool call outcomes: our worker and upstream pi 1.6.0", () => {
  it("runs none of the calls of a reply cut off by the output token limit", async () => {
    const t = await transcriptsOf(
      servers,
      dirs,
      { pi: "1.6.0", prepareProject: (p) => writeFileSync(join(p, "a.txt"), "one\n") },
      async (s) => {
        await s.run(
          "read and write",
          {
            stopReason: "length",
            toolCalls: [
              { id: "c1", name: "read", arguments: { path: "a.txt" } },
              { id: "c2", name: "nothere", arguments: {} },
              { id: "c3", name: "write", arguments: { path: "b.txt", content: "half" } },
            ],
          },
          { text: "done" },
        );
      },
    );
    expect(t.ours.lines).toEqual(t.upstream.lines);
    expect(t.ours.requests.map((r) => r.messages)).toEqual(t.upstream.requests.map((r) => r.messages));
    const cut = (name: string) =>
      `Tool call "${name}" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments.`;
    expect(resultTexts(t.upstream.lines)).toEqual([cut("read"), cut("nothere"), cut("write")]);
  }, 60_000);

  it("answers a call the abort kept from starting with pi's text, unseen by tool_result handlers", async () => {
    const extension = join(dir("tool-outcomes-"), "hold.ts");
    writeFileSync(extension, HOLD_EXTENSION);
    const t = await transcriptsOf(
      servers,
      dirs,
      { pi: "1.6.0", args: ["-e", extension], prepareProject: (p) => writeFileSync(join(p, "a.txt"), "one\n") },
      async (s) => {
        s.server.enqueue({
          toolCalls: [
            { id: "h1", name: "hold", arguments: {} },
            { id: "r1", name: "read", arguments: { path: "a.txt" } },
          ],
        });
        const from = s.w.received.length;
        await s.send({ type: "prompt", message: "hold, then read" });
        await s.w.waitFor((l) => l.type === "tool_execution_update" && l.toolCallId === "h1", 30_000, from);
        await s.send({ type: "abort" });
        await s.w.event("agent_end", 30_000, from);
      },
    );
    expect(t.ours.lines).toEqual(t.upstream.lines);
    expect(t.ours.requests.map((r) => r.messages)).toEqual(t.upstream.requests.map((r) => r.messages));
    expect(resultTexts(t.upstream.lines)).toEqual(["hold stopped (seen by tool_result)", "Operation aborted"]);
    // The request the abort kept from starting: pi's run signal's own words.
    const replies = (t.upstream.lines as Line[]).filter(
      (l) => l.type === "message_end" && l.message.role === "assistant",
    );
    expect(replies.at(-1)!.message).toMatchObject({
      stopReason: "aborted",
      errorMessage: "This operation was aborted",
    });
  }, 60_000);

  it.each(["openai-completions", "anthropic-messages"])(
    "answers argument texts that are no JSON object with pi's words, and runs repaired ones (%s)",
    async (api) => {
      const t = await transcriptsOf(
        servers,
        dirs,
        {
          pi: "1.6.0",
          // The mock provider on the API under test (the Anthropic SDK's base URL has no /v1).
          prepare: (home) => {
            const file = join(home, "models.json");
            const models = JSON.parse(readFileSync(file, "utf8"));
            models.providers.mock.api = api;
            if (api === "anthropic-messages")
              models.providers.mock.baseUrl = models.providers.mock.baseUrl.slice(0, -3);
            writeFileSync(file, JSON.stringify(models));
          },
        },
        async (s) => {
          const raw = [
            '{"command": "echo cut',
            '{"command": "echo one\ttwo; echo \\q"}',
            "[1, 2]",
            '{"command": "echo hi"} and more',
            '{"command": "echo x",',
          ];
          await s.run(
            "run them",
            ...raw.map((rawArguments, i) => ({
              toolCalls: [{ id: `j${i}`, name: "bash", arguments: {}, rawArguments, argChunks: 3 }],
            })),
            {
              stopReason: "length",
              toolCalls: [{ id: "cut", name: "bash", arguments: {}, rawArguments: '{"command": "ec' }],
            },
            { text: "done" },
          );
        },
      );
      expect(t.ours.lines).toEqual(t.upstream.lines);
      expect(t.ours.requests.map((r) => r.messages)).toEqual(t.upstream.requests.map((r) => r.messages));
      const texts = resultTexts(t.upstream.lines);
      expect(texts[0]).toBe(
        'Invalid arguments for tool "bash": Unterminated string in JSON at position 21 (line 1 column 22)\n\nReceived arguments:\n{"command": "echo cut',
      );
      // The raw tab escaped by the repair (bash's output shows it as a space), `\q` made `\\q`.
      expect(texts[1]).toBe("one two\nq\n");
      expect(texts[2]).toContain("Tool arguments must be a JSON object");
    },
    60_000,
  );
});
