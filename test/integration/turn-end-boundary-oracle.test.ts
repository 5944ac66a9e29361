/**
 * pi 1.6's actionable `turn_end`, with upstream pi 1.6.0 as the oracle: handlers run
 * before the turn_end event and the run waits for them (a dialog they open keeps the
 * agent streaming, abort included), and they may write entries and ask for one more
 * request: the example of docs/extensions.md (drop the answer, add an instruction,
 * continue once) gives the same requests and entries on both. Skipped when test/upstream
 * is not installed.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { startOracle, UPSTREAM, type Implementation } from "../support/upstream-oracle.js";

type Line = Record<string, any>;

const { server, dirs, dir } = useOracleFixture();
const IMPLS: Implementation[] = ["upstream", "ours"];

/** docs/extensions.md's turn_end example, as written there. */
const REPLACE_ONCE = `export default function (pi) {
  let replacedResponse = false;
  pi.on("turn_end", async (event, ctx) => {
    ctx.ui.notify("turn_end " + event.turnIndex + " " + event.outcome + " " + typeof event.messageEntryId + " " + event.toolResultEntryIds.length);
    if (replacedResponse || event.outcome !== "completed" || event.toolResults.length > 0) return;
    replacedResponse = true;
    return {
      entries: [
        ...event.entries,
        { type: "context_edit", targetId: event.messageEntryId, replacement: null },
        { type: "custom_message", customType: "replacement-instruction", content: "Answer again using the persisted user request.", display: false },
      ],
      continue: true,
    };
  });
}
`;

/** A compaction draft that keeps nothing before it, written once at the first turn's end. */
const COMPACT_ONCE = `export default function (pi) {
  let done = false;
  pi.on("turn_end", async (event) => {
    if (done) return;
    done = true;
    return { entries: [{ type: "compaction", summary: "SUMMARY OF EVERYTHING SO FAR", firstKeptEntryId: null }] };
  });
}
`;

const CONFIRM = `export default function (pi) {
  pi.on("turn_end", async (_e, ctx) => { await ctx.ui.confirm("keep going?", "x"); });
}
`;

/** A request's user-side texts and assistant texts, in order. */
function texts(body: any): string[] {
  return (body.messages as { role: string; content: unknown }[])
    .filter((m) => m.role === "user" || m.role === "assistant")
    .map(
      (m) =>
        `${m.role}: ${typeof m.content === "string" ? m.content : (m.content as { text?: string }[]).map((b) => b.text ?? "").join("")}`,
    );
}

describe.skipIf(!UPSTREAM["1.6.0"].installed)("turn_end as pi 1.6's actionable boundary", () => {
  it("writes the handler's entries and makes the one request it asks for, as 1.6.0 does", async () => {
    const extension = join(dir("pi-turnend-ext-"), "replace.ts");
    writeFileSync(extension, REPLACE_ONCE);
    const result: Partial<Record<Implementation, unknown>> = {};
    for (const impl of IMPLS) {
      const first = server.requests.length;
      const { w } = startOracle(impl, server, dirs, { pi: "1.6.0", sessions: true, args: ["-e", extension] });
      server.enqueue({ text: "first answer" }, { text: "second answer" });
      const from = w.received.length;
      await w.request({ type: "prompt", message: "the user request" }, 30_000);
      await w.event("agent_settled", 30_000, from);
      const requests = server.requests.slice(first).map((r) => texts(r.body));
      const got = w.received.slice(from);
      w.kill();
      result[impl] = {
        requests,
        appended: got.filter((l: Line) => l.type === "entry_appended").map((l: Line) => l.entry.type),
        told: got
          .filter((l: Line) => l.type === "extension_ui_request" && l.method === "notify")
          .map((l: Line) => l.message),
        order: got
          .map((l: Line) => l.type)
          .filter((t: string) =>
            ["turn_start", "turn_end", "entry_appended", "agent_end", "agent_settled"].includes(t),
          ),
      };
    }
    expect(result.upstream).toEqual({
      requests: [
        ["user: the user request"],
        ["user: the user request", "user: Answer again using the persisted user request."],
      ],
      appended: ["context_edit", "custom_message"],
      told: ["turn_end 0 completed string 0", "turn_end 1 completed string 0"],
      order: [
        "turn_start",
        "entry_appended",
        "entry_appended",
        "turn_end",
        "turn_start",
        "turn_end",
        "agent_end",
        "agent_settled",
      ],
    });
    expect(result.ours).toEqual(result.upstream);
  }, 90_000);

  it("writes a compaction draft that keeps nothing before it; the next request starts from its summary", async () => {
    const extension = join(dir("pi-turnend-compact-"), "compact.ts");
    writeFileSync(extension, COMPACT_ONCE);
    const result: Partial<Record<Implementation, unknown>> = {};
    for (const impl of IMPLS) {
      const first = server.requests.length;
      const { w } = startOracle(impl, server, dirs, { pi: "1.6.0", sessions: true, args: ["-e", extension] });
      server.enqueue({ text: "first answer" }, { text: "second answer" });
      for (const message of ["first prompt", "second prompt"]) {
        const from = w.received.length;
        await w.request({ type: "prompt", message }, 30_000);
        await w.event("agent_settled", 30_000, from);
      }
      const appended = w.received.filter((l: Line) => l.type === "entry_appended").map((l: Line) => l.entry);
      const entries = (await w.request({ type: "get_entries" }, 30_000)).data?.entries as Line[] | undefined;
      w.kill();
      const compaction = appended.find((e: Line) => e.type === "compaction");
      result[impl] = {
        requests: server.requests.slice(first).map((r) => texts(r.body).map((t) => t.slice(0, 60))),
        compaction: compaction && {
          keepsItself: compaction.firstKeptEntryId === compaction.id,
          fromHook: compaction.fromHook,
          counted: compaction.tokensBefore > 0,
          withSystem: compaction.systemMessage?.role === "system",
        },
        onFile: entries === undefined ? "no get_entries" : entries.some((e) => e.type === "compaction"),
      };
    }
    expect((result.upstream as { compaction: unknown }).compaction).toEqual({
      keepsItself: true,
      fromHook: true,
      counted: true,
      withSystem: true,
    });
    expect(result.ours).toEqual(result.upstream);
  }, 90_000);

  it("keeps the agent streaming while a handler's dialog is open; abort is answered once the run ended", async () => {
    const extension = join(dir("pi-turnend-confirm-"), "confirm.ts");
    writeFileSync(extension, CONFIRM);
    const result: Partial<Record<Implementation, unknown>> = {};
    for (const impl of IMPLS) {
      const { w } = startOracle(impl, server, dirs, { pi: "1.6.0", args: ["-e", extension] });
      server.enqueue({ text: "done" });
      const from = w.received.length;
      await w.request({ type: "prompt", message: "hello" }, 30_000);
      const dialog = await w.waitFor((l: Line) => l.type === "extension_ui_request" && l.method === "confirm");
      const aborted = w.request({ type: "abort" }, 30_000);
      const state = await w.request({ type: "get_state" }, 30_000);
      const endedBefore = w.received.some((l: Line) => l.type === "agent_end");
      w.writeRaw(`${JSON.stringify({ type: "extension_ui_response", id: dialog.id, confirmed: true })}\n`);
      expect((await aborted).success, impl).toBe(true);
      await w.event("agent_settled", 30_000, from);
      const order = w.received
        .slice(from)
        .map((l: Line) => l.type)
        .filter((t: string) => ["turn_end", "agent_end", "agent_settled"].includes(t));
      w.kill();
      result[impl] = { streaming: state.data.isStreaming, endedBefore, order };
    }
    expect(result.upstream).toEqual({
      streaming: true,
      endedBefore: false,
      order: ["turn_end", "agent_end", "agent_settled"],
    });
    expect(result.ours).toEqual(result.upstream);
  }, 90_000);
});
