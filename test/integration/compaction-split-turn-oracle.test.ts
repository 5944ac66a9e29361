/**
 * pi's compaction when the cut falls inside a turn, with upstream pi 0.73.1 as the oracle:
 * the same session on our worker and on upstream `pi --mode rpc`, the same mock model
 * server recording every request. When the kept part starts inside the last turn, pi asks
 * for two summaries at once (the history before that turn, and the turn's prefix) and joins
 * them; both sides must send the same requests, covering the same messages, and keep the
 * same. Skipped when test/upstream is not installed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RecordedRequest } from "../support/mock-model-server.js";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { killAllWorkers, type RpcWorker } from "../support/rpc-worker.js";
import { startOracle, upstreamInstalled as installed, type Implementation } from "../support/upstream-oracle.js";

type Line = Record<string, any>;

const { server, dirs } = useOracleFixture();

const IMPLS: Implementation[] = ["ours", "upstream"];
const text = (m: Line): string =>
  typeof m.content === "string" ? m.content : (m.content as Line[]).map((c) => c.text ?? "").join("");
const entries = (file: string) =>
  readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Line);

async function turn(w: RpcWorker, message: string): Promise<void> {
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message }, 30_000)).toMatchObject({ success: true });
  await w.event("agent_end", 30_000, from);
}

/** Markers of each message of the session; a summary request covers a message when it holds its marker. */
const MARKERS = ["Question-0", "Answer-0", "Question-1", "checks-output", "Answer-1", "Question-2"];
const covers = (req: RecordedRequest): string[] => {
  const all = ((req.body as Line).messages as Line[]).map(text).join("\n");
  return MARKERS.filter((m) => all.includes(m));
};

describe.skipIf(!installed)(
  "compaction with a cut inside a turn: our worker and upstream pi send the same requests",
  () => {
    it("two summary requests (the history, and the split turn's prefix), joined into one summary; the turn's end is kept", async () => {
      const seen: Record<string, Line> = {};
      for (const impl of IMPLS) {
        const { w, project } = startOracle(impl, server, dirs, {
          sessions: true,
          // The last answer alone (about 125 tokens) passes the budget: the cut falls on it, inside its turn
          // (the prompt, a read and a bash call before it).
          prepare: (home) =>
            writeFileSync(join(home, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 100 } })),
        });
        writeFileSync(join(project, "notes.txt"), "notes\n");
        server.enqueue({ text: `Answer-0: the parser ${"is fine ".repeat(20)}` });
        await turn(w, `Question-0: how is the parser? ${"tell me ".repeat(20)}`);
        server.enqueue(
          { toolCalls: [{ id: "call_0", name: "read", arguments: { path: "notes.txt" } }] },
          { toolCalls: [{ id: "call_1", name: "bash", arguments: { command: "echo checks-output" } }] },
          { text: `Answer-1: the checks ${"pass again ".repeat(45)}` },
        );
        await turn(w, "Question-1: run the checks");

        const at = server.requests.length;
        // Replies by what is asked: the two requests run at once, in either order.
        const reply = (req: RecordedRequest) => ({
          text: covers(req).includes("Question-0") ? "## History\nparser fine" : "## Turn\nchecks ran",
        });
        server.enqueue(reply, reply);
        const res = await w.request({ type: "compact" }, 30_000);
        expect(res, `${impl}: ${JSON.stringify(res)}`).toMatchObject({ success: true });
        const requests = server.requests.slice(at);
        const file = (await w.request({ type: "get_state" })).data.sessionFile as string;
        const compaction = entries(file).find((e) => e.type === "compaction")!;
        const kept = entries(file).find((e) => e.id === compaction.firstKeptEntryId)!;

        // The next request sees the summary, then the kept end of the turn.
        server.enqueue({ text: "next" });
        await turn(w, "Question-2: and now?");
        const next = (server.requests.at(-1)!.body as Line).messages as Line[];
        seen[impl] = {
          requests: requests
            // Not compared: the output budget. pi asks for 0.8 and 0.5 × reserveTokens (here above
            // the model's maxTokens) as max_completion_tokens; ours sends the model's maxTokens as
            // max_tokens, as for every request to an OpenAI-compatible server that is not OpenAI's.
            .map((r) => ({ covers: covers(r), tools: (r.body as Line).tools, model: (r.body as Line).model }))
            .sort((a, b) => a.covers.join().localeCompare(b.covers.join())),
          summary: res.data.summary,
          entry: { summary: compaction.summary, details: compaction.details, kept: text(kept.message) },
          // Each side words the summary message its own way: compared by what it carries.
          next: next
            .filter((m) => m.role !== "system")
            .map(
              (m) =>
                `${m.role}: ${covers({ body: { messages: [m] } } as RecordedRequest).join(",")} ${text(m).includes("checks ran") ? "(summary)" : ""}`,
            ),
        };
        await killAllWorkers();
      }
      expect(seen.upstream!.requests.map((r: Line) => r.covers)).toEqual([
        ["Question-0", "Answer-0"],
        ["Question-1", "checks-output"],
      ]);
      // The file the turn's prefix read is listed after the joined summary, and kept in the details.
      expect(seen.upstream!.summary).toBe(
        "## History\nparser fine\n\n---\n\n**Turn Context (split turn):**\n\n## Turn\nchecks ran\n\n<read-files>\nnotes.txt\n</read-files>",
      );
      expect(seen.upstream!.entry.details).toEqual({ readFiles: ["notes.txt"], modifiedFiles: [] });
      expect(seen.upstream!.next).toEqual(["user:  (summary)", "assistant: Answer-1 ", "user: Question-2 "]);
      expect(seen.ours).toEqual(seen.upstream);
    });
  },
);
