/**
 * pi's compaction and session-state examples with upstream pi 1.6.0 as the oracle (see
 * pi-examples-oracle-more.test.ts): custom-compaction, trigger-compact, summarize and tools
 * run the same RPC script on our worker and on upstream `pi --mode rpc`, on the same mock
 * model server, and end the same way. Skipped when test/upstream is not installed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type RpcWorker, killAllWorkers } from "../support/rpc-worker.js";
import {
  mockModelsJson,
  startOracle,
  UPSTREAM,
  type Implementation,
  type OracleStart,
} from "../support/upstream-oracle.js";
import { useOracleFixture } from "../support/oracle-fixture.js";

type Line = Record<string, any>;

/** The oracle: pi 1.6.0, whose examples both sides load. */
const PI = "1.6.0";
const installed = UPSTREAM[PI].installed;
const { server, dirs } = useOracleFixture();

const IMPLS: Implementation[] = ["ours", "upstream"];
const notify = (text: string) => (l: Line) =>
  l.type === "extension_ui_request" && l.method === "notify" && l.message === text;
const notices = (w: RpcWorker, from: number) =>
  w.received
    .slice(from)
    .filter((l) => l.type === "extension_ui_request" && l.method === "notify")
    .map((l) => l.message as string);
const entries = (file: string) =>
  readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Line);
const userText = (body: Line): string => {
  const content = body.messages.at(-1).content;
  return typeof content === "string" ? content : content.map((c: Line) => c.text ?? "").join("");
};

/**
 * A home whose settings keep few recent tokens, so a short conversation has something to
 * summarize: the last turn (about 200 tokens) is kept whole, the cut falls on its user message
 * (a cut inside a turn is compaction-split-turn-oracle.test.ts).
 */
function smallKeep(extra?: (home: string) => void): OracleStart["prepare"] {
  return (home) => {
    writeFileSync(join(home, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 150 } }));
    extra?.(home);
  };
}

async function prompt(w: RpcWorker, message: string): Promise<number> {
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message }, 30_000)).toMatchObject({ success: true });
  return from;
}

/** Two turns of about 100 tokens each (pi estimates chars / 4). */
async function converse(w: RpcWorker): Promise<void> {
  for (const [i, topic] of ["parser", "printer"].entries()) {
    server.enqueue({ text: `Answer ${i}: the ${topic} ${"is fine ".repeat(50)}` });
    const from = await prompt(w, `Question ${i}: how is the ${topic}? ${"tell me ".repeat(50)}`);
    await w.event("agent_end", 30_000, from);
  }
}

describe.skipIf(!installed)("pi's compaction examples: our worker and upstream pi end the same way", () => {
  // PENDING on pi 1.6.0: compact's result with an extension's summary: ours estimates 226 tokens after, pi 1.6 1545, and ours gives no usage.
  it.skip("custom-compaction: its own summary, made by google/gemini-2.5-flash (on the mock), is what compact returns and the session file keeps", async () => {
    const seen: Record<string, Line> = {};
    for (const impl of IMPLS) {
      const { w } = startOracle(impl, server, dirs, {
        pi: PI,
        examples: ["custom-compaction"],
        sessions: true,
        prepare: smallKeep((home) => {
          const models = mockModelsJson(server) as { providers: Record<string, Line> };
          models.providers.google = {
            ...models.providers.mock,
            models: [{ id: "gemini-2.5-flash", name: "Gemini Flash (mock)", contextWindow: 128_000, maxTokens: 8192 }],
          };
          writeFileSync(join(home, "models.json"), JSON.stringify(models));
        }),
      });
      await converse(w);
      const at = server.requests.length;
      server.enqueue({ text: `## Summary by ${impl}\nparser and printer are fine` });
      const from = w.received.length;
      const res = await w.request({ type: "compact" }, 30_000);
      expect(res, `${impl}: ${JSON.stringify(res)} ${JSON.stringify(notices(w, from))}`).toMatchObject({
        success: true,
      });
      const summaryRequest = server.requests[at]!.body as Line;
      const file = (await w.request({ type: "get_state" })).data.sessionFile as string;
      const compaction = entries(file).find((e) => e.type === "compaction")!;
      seen[impl] = {
        // Entry ids are random: the kept entry is compared by its content.
        result: {
          ...res.data,
          summary: res.data.summary.replace(impl, "IMPL"),
          firstKeptEntryId: res.data.firstKeptEntryId === compaction.firstKeptEntryId,
        },
        entry: {
          summary: compaction.summary.replace(impl, "IMPL"),
          tokensBefore: compaction.tokensBefore,
          fromHook: compaction.fromHook,
          details: compaction.details,
          kept: entries(file).find((e) => e.id === compaction.firstKeptEntryId)?.message?.content,
        },
        model: summaryRequest.model,
        prompt: userText(summaryRequest),
        notices: notices(w, from),
        requests: server.requests.length - at,
      };
      await killAllWorkers();
    }
    expect(seen.ours!.model).toBe("gemini-2.5-flash");
    expect(seen.ours!.entry.summary).toBe("## Summary by IMPL\nparser and printer are fine");
    expect(seen.ours!.prompt).toContain("<conversation>");
    expect(seen.ours).toEqual(seen.upstream);
  });

  it("trigger-compact: /trigger-compact runs pi's own compaction (a summary from the model) and notifies start and end", async () => {
    const seen: Record<string, Line> = {};
    for (const impl of IMPLS) {
      const { w } = startOracle(impl, server, dirs, {
        pi: PI,
        examples: ["trigger-compact"],
        sessions: true,
        prepare: smallKeep(),
      });
      await converse(w);
      const at = server.requests.length;
      server.enqueue({ text: "## Goal\nparser and printer" });
      const from = await prompt(w, "/trigger-compact");
      await w.waitFor(notify("Compaction completed"), 30_000, from);
      const file = (await w.request({ type: "get_state" })).data.sessionFile as string;
      const compaction = entries(file).find((e) => e.type === "compaction")!;
      seen[impl] = {
        notices: notices(w, from),
        entry: {
          summary: compaction.summary,
          fromHook: compaction.fromHook,
          details: compaction.details,
          tokensBefore: compaction.tokensBefore,
        },
        model: (server.requests[at]!.body as Line).model,
        requests: server.requests.length - at,
      };
      await killAllWorkers();
    }
    expect(seen.ours!.notices).toEqual(["Compaction started", "Compaction completed"]);
    expect(seen.ours!.entry.summary).toContain("parser and printer");
    expect(seen.ours).toEqual(seen.upstream);
  });

  // The example summarizes with the built-in openai/gpt-5.2 (modelRegistry.find),
  // whose base URL is OpenAI's own: no test may reach it, so both run without an OpenAI key and
  // end at the example's "no key" notice; the summary dialog (ctx.ui.custom) is not reached.
  it.each(IMPLS)(
    "summarize on %s: nothing to summarize, then the branch is read and the missing key is named",
    async (impl) => {
      const { w } = startOracle(impl, server, dirs, { pi: PI, examples: ["summarize"], env: { OPENAI_API_KEY: "" } });
      let from = await prompt(w, "/summarize");
      await w.waitFor(notify("No conversation text found"), 30_000, from);
      await converse(w);
      from = await prompt(w, "/summarize");
      await w.waitFor(notify("No authentication configured for openai/gpt-5.2"), 30_000, from);
      expect(notices(w, from)).toEqual(["Preparing summary...", "No authentication configured for openai/gpt-5.2"]);
      expect(server.requests).toHaveLength(2);
    },
  );

  // /tools opens a ctx.ui.custom selector, which RPC mode does not show (it resolves at once),
  // so the state it would save is written into the session file here, as the selector does.
  it("tools: a saved tools-config entry is restored on session_start, so only those tools (that exist) reach the model", async () => {
    const seen: Record<string, Line> = {};
    for (const impl of IMPLS) {
      const first = startOracle(impl, server, dirs, { pi: PI, examples: ["tools"], sessions: true });
      server.enqueue({ text: "hello" });
      let from = await prompt(first.w, "hi");
      await first.w.event("agent_end", 30_000, from);
      const all = ((server.requests.at(-1)!.body as Line).tools as Line[]).map((t) => t.function.name);
      from = await prompt(first.w, "/tools");
      const file = (await first.w.request({ type: "get_state" })).data.sessionFile as string;
      const last = entries(file).at(-1)!;
      const saved = {
        type: "custom",
        customType: "tools-config",
        data: { enabledTools: ["read", "grep", "gone"] },
        id: "t00ls001",
        parentId: last.id,
        timestamp: new Date().toISOString(),
      };
      writeFileSync(file, `${readFileSync(file, "utf8")}${JSON.stringify(saved)}\n`);
      await killAllWorkers();

      const again = startOracle(impl, server, dirs, { pi: PI, examples: ["tools"], args: ["--session", file] });
      server.enqueue({ text: "again" });
      from = await prompt(again.w, "hi again");
      await again.w.event("agent_end", 30_000, from);
      const restored = ((server.requests.at(-1)!.body as Line).tools as Line[] | undefined)?.map(
        (t) => t.function.name,
      );
      seen[impl] = { all, restored };
      await killAllWorkers();
    }
    expect(seen.ours!.restored).toEqual(["read", "grep"]);
    expect(seen.ours).toEqual(seen.upstream);
    // Four workers one after another, two of them pi 1.6 (seconds each to start on a loaded machine).
  }, 90_000);
});
