/**
 * `--no-session` as pi 1.6.0 has it: a real session tree kept in memory, not a list of
 * messages. Side by side with upstream pi 1.6.0 on one script: an extension's `turn_end`
 * context edit (drop the first answer, add an instruction, continue once), a retried 503
 * (the failed reply omitted by a `context_edit`), a manual compaction and one more prompt.
 * Both sides must send the model the same requests, list the same entries linked the same
 * way (`get_entries`, `get_tree`), and answer `get_state`, `get_messages` and
 * `get_session_stats` alike, with no session file. Skipped when test/upstream is not installed.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import type { RpcWorker } from "../support/rpc-worker.js";
import {
  contentText,
  entryShape,
  isSummaryRequest,
  requestShape,
  summaryRequestShape,
} from "../support/session-shape.js";
import { startOracle, UPSTREAM, type Implementation } from "../support/upstream-oracle.js";

type Line = Record<string, any>;

const { server, dirs, dir } = useOracleFixture();
const IMPLS: Implementation[] = ["upstream", "ours"];

/** docs/extensions.md's turn_end example: the first answer leaves the context, an instruction joins it, one more request. */
const EDIT_ONCE = `export default function (pi) {
  let edited = false;
  pi.on("turn_end", async (event) => {
    if (edited || event.outcome !== "completed" || event.toolResults.length > 0) return;
    edited = true;
    return {
      entries: [
        ...event.entries,
        { type: "context_edit", targetId: event.messageEntryId, replacement: null },
        { type: "custom_message", customType: "again", content: "Answer again, shorter.", display: false },
      ],
      continue: true,
    };
  });
}
`;

/** A 10 ms first retry delay keeps the test short; a 10-token budget makes the compaction keep only the last turn. */
const settings = (home: string) =>
  writeFileSync(
    join(home, "settings.json"),
    JSON.stringify({ retry: { baseDelayMs: 10 }, compaction: { keepRecentTokens: 10 } }),
  );

async function run(w: RpcWorker, message: string): Promise<void> {
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message }, 30_000)).toMatchObject({ success: true });
  await w.event("agent_settled", 30_000, from);
}

/** A tree as nested entry positions (in `get_entries` order). */
function treeShape(nodes: Line[], at: Map<string, number>): unknown[] {
  return nodes.map((n) => [at.get(n.entry.id), treeShape(n.children ?? [], at)]);
}

interface Side {
  requests: Line[];
  entries: Line[];
  tree: unknown;
  leaf: number | undefined;
  state: Line;
  messages: string[];
  stats: Line;
  answers: Line;
}

async function script(impl: Implementation, extension: string): Promise<Side> {
  const { w } = startOracle(impl, server, dirs, { pi: "1.6.0", args: ["-e", extension], prepare: settings });
  const at = server.requests.length;
  server.enqueue({ text: "one" }, { text: "one again" });
  await run(w, "first");
  server.enqueue({ error: { status: 503, message: "Service Unavailable" } }, { text: "two" });
  await run(w, "second");
  server.enqueue({ text: "## Summary\nfirst and second" });
  const compact = await w.request({ type: "compact" }, 30_000);
  expect(compact, `${impl}: ${JSON.stringify(compact)}`).toMatchObject({ success: true });
  server.enqueue({ text: "three" });
  await run(w, "third");
  const { entries, leafId } = (await w.request({ type: "get_entries" })).data as Line;
  const positions = new Map((entries as Line[]).map((e, i) => [e.id as string, i]));
  const tree = (await w.request({ type: "get_tree" })).data as Line;
  const state = (await w.request({ type: "get_state" })).data as Line;
  const messages = (await w.request({ type: "get_messages" })).data.messages as Line[];
  const stats = (await w.request({ type: "get_session_stats" })).data as Line;
  w.kill();
  return {
    requests: server.requests.slice(at).map((r) => r.body as Line),
    entries: entryShape(entries, false),
    tree: treeShape(tree.tree, positions),
    leaf: positions.get(leafId),
    state: {
      hasSessionFile: "sessionFile" in state,
      sessionId: typeof state.sessionId,
      messageCount: state.messageCount,
    },
    messages: messages.map((m) => `${m.role}:${m.role === "system" ? "" : contentText(m.content ?? "").slice(0, 24)}`),
    stats: {
      hasSessionFile: "sessionFile" in stats,
      counts: [stats.userMessages, stats.assistantMessages, stats.toolResults, stats.totalMessages],
      tokens: stats.tokens,
    },
    answers: { compact: { tokensBefore: typeof compact.data?.tokensBefore, summary: compact.data?.summary } },
  };
}

describe.skipIf(!UPSTREAM["1.6.0"].installed)("--no-session keeps a session tree in memory, as pi 1.6.0", () => {
  it("a turn_end context edit, a retry and a compaction: same requests, same entries, no file", async () => {
    const extension = join(dir("pi-memory-ext-"), "edit.ts");
    writeFileSync(extension, EDIT_ONCE);
    const sides = {} as Record<Implementation, Side>;
    for (const impl of IMPLS) sides[impl] = await script(impl, extension);
    const { ours, upstream } = sides;

    // What 1.6.0 does in memory: the edit and the retry leave the context through
    // context_edit entries, the compaction keeps the last turn, and no file is named.
    const kinds = (entries: Line[]) =>
      entries.map((e) => (e.role ? `${e.role}${e.stopReason ? `(${e.stopReason})` : ""}` : e.type));
    expect(kinds(upstream.entries)).toEqual([
      "model_change",
      "thinking_level_change",
      "system",
      "user",
      "assistant(stop)",
      "context_edit",
      "custom_message",
      "assistant(stop)",
      "user",
      "assistant(error)",
      "context_edit",
      "assistant(stop)",
      "compaction",
      "user",
      "assistant(stop)",
    ]);
    expect(upstream.state.hasSessionFile).toBe(false);
    expect(upstream.stats.hasSessionFile).toBe(false);

    expect(ours.entries).toEqual(upstream.entries);
    expect(ours.tree).toEqual(upstream.tree);
    expect(ours.leaf).toEqual(upstream.leaf);
    expect(ours.state).toEqual(upstream.state);
    expect(ours.messages).toEqual(upstream.messages);
    expect(ours.stats).toEqual(upstream.stats);
    expect(ours.answers).toEqual(upstream.answers);

    // The same requests in the same order: the conversation's to the byte (asides in
    // requestShape), the compaction's summary request whole.
    expect(ours.requests.map(isSummaryRequest)).toEqual(upstream.requests.map(isSummaryRequest));
    expect(ours.requests.filter((b) => !isSummaryRequest(b)).map(requestShape)).toEqual(
      upstream.requests.filter((b) => !isSummaryRequest(b)).map(requestShape),
    );
    expect(ours.requests.filter(isSummaryRequest).map(summaryRequestShape)).toEqual(
      upstream.requests.filter(isSummaryRequest).map(summaryRequestShape),
    );
  }, 180_000);
});
