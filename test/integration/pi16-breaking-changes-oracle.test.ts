/**
 * The changes listed under "Breaking Changes" in pi 1.6.0's CHANGELOG since 0.73.1 that
 * touch extensions, with upstream pi 1.6.0 as the oracle: one extension and one RPC script
 * on our worker and on upstream `pi --mode rpc`; the transcripts must be equal. Here:
 * - 1.5.0: tool arguments are coerced before they are checked (`"5"` for a number, a single
 *   value for an array, `"true"` for a boolean);
 * - 1.2.0: `before_agent_start` fires for a run `sendMessage(..., {triggerTurn: true})`
 *   starts (`messageType: "custom"`), and the session is busy while a run starts
 *   (`ctx.isIdle()` is false in the handler);
 * - 0.87.0: a run an `agent_settled` handler asks for starts after every settled handler ran;
 * - 0.86.0: `user_bash` fails closed: a handler that throws, or answers something other
 *   than undefined, `{ operations }` or `{ result }`, aborts the command;
 * - 0.84.0 / 0.80.8: `ctx.modelRegistry.refresh()` is async and resolves to
 *   `{ aborted, errors }`; `getApiKeyAndHeaders()` resolves to `{ ok, apiKey, headers }`.
 * Elsewhere: `message_update` deltas only (0.84.0) and `structuredContent` in the RPC
 * differential suite; `getCurrentSystemPrompt()` / `getCurrentTools()` for custom providers
 * (0.86.0) in test/worker/extensions-pi16.test.ts; virtual models, `systemPromptOptions`
 * and `defaultTools` in their own oracle tests. Not applicable headless: 1.6.0's readonly
 * `render()` of terminal components (RPC mode renders nothing, in pi too). The SDK-only
 * changes (`ModelRuntime`, `AuthStorage`, the agent-core harness, `shouldStopAfterTurn`,
 * `GrepOperations.readFile`, TypeBox 1.3.7's removed APIs, provider renames) have no
 * extension-facing behaviour here; `ContextEditEntry` and `TurnEndEvent`'s boundary fields
 * belong to the session-context issue. Skipped when test/upstream is not installed.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { transcriptOf, type Transcript } from "../support/oracle-transcript.js";
import { UPSTREAM, type Implementation } from "../support/upstream-oracle.js";

const { server, dirs, dir } = useOracleFixture();

const EXTENSION = `
import { Type } from "typebox";
export default function (pi) {
  pi.registerTool({
    name: "typed",
    label: "typed",
    description: "takes a number, a list and a flag",
    parameters: Type.Object({ n: Type.Number(), tags: Type.Array(Type.String()), flag: Type.Optional(Type.Boolean()) }),
    execute: async (_id, params) => ({ content: [{ type: "text", text: JSON.stringify(params) }] }),
  });
  pi.on("before_agent_start", (event, ctx) => {
    ctx.ui.notify("before_agent_start " + event.messageType + " idle=" + ctx.isIdle());
  });
  let settled = 0;
  pi.on("agent_settled", (_event, ctx) => {
    settled++;
    ctx.ui.notify("settled " + settled + " (first handler)");
    if (settled === 1) pi.sendUserMessage("asked for by agent_settled");
  });
  pi.on("agent_settled", (_event, ctx) => ctx.ui.notify("settled " + settled + " (second handler)"));
  pi.on("agent_start", (_event, ctx) => ctx.ui.notify("agent_start"));
  pi.on("user_bash", (event) => {
    if (event.command.includes("throws")) throw new Error("not allowed here");
    if (event.command.includes("invalid")) return { result: { output: 1 } };
    return undefined;
  });
  pi.registerCommand("nudge", {
    description: "starts a run with a custom message",
    handler: async () => pi.sendMessage({ customType: "nudge", content: "nudged", display: true }, { triggerTurn: true }),
  });
  pi.registerCommand("registry", {
    description: "what the model registry answers",
    handler: async (_args, ctx) => {
      const refreshed = await ctx.modelRegistry.refresh();
      const auth = await ctx.modelRegistry.getApiKeyAndHeaders(ctx.model);
      ctx.ui.notify(JSON.stringify({
        refreshed: { aborted: refreshed.aborted, errors: refreshed.errors instanceof Map ? "Map(" + refreshed.errors.size + ")" : typeof refreshed.errors },
        auth: { ok: auth.ok, apiKey: auth.apiKey },
      }));
    },
  });
}
`;

describe.skipIf(!UPSTREAM["1.6.0"].installed)(
  "pi 1.6.0's breaking changes for extensions: our worker and upstream",
  () => {
    it("coerced tool arguments, before_agent_start's runs, settled handlers' runs, user_bash failing closed, the model registry", async () => {
      const extension = join(dir("pi16-breaking-"), "breaking.ts");
      writeFileSync(extension, EXTENSION);
      const t: Partial<Record<Implementation, Transcript>> = {};
      for (const impl of ["ours", "upstream"] as const) {
        t[impl] = await transcriptOf(impl, server, dirs, { pi: "1.6.0", args: ["-e", extension] }, async (s) => {
          server.enqueue({ text: "the settled handler's run" });
          let from = s.w.received.length;
          await s.run(
            "call typed loosely",
            { toolCalls: [{ id: "c1", name: "typed", arguments: { n: "5", tags: "x", flag: "true" } }] },
            { text: "typed" },
          );
          // The first run settles, its settled handlers ask for a run, which starts after both ran.
          // Each wait starts after the event it follows, so the next step never races a settle.
          const end = await s.w.event("agent_end", 30_000, s.w.received.length);
          await s.w.event("agent_settled", 30_000, s.w.received.indexOf(end));
          from = s.w.received.length;
          server.enqueue({ text: "nudge answered" });
          await s.command("/nudge");
          const nudged = await s.w.waitFor(
            (l) => l.type === "message_end" && JSON.stringify(l.message?.content ?? "").includes("nudge answered"),
            30_000,
            from,
          );
          await s.w.event("agent_settled", 30_000, s.w.received.indexOf(nudged));
          await s.send({ type: "bash", command: "echo throws" }, true);
          await s.send({ type: "bash", command: "echo invalid" }, true);
          await s.send({ type: "bash", command: "echo fine" }, true);
          await s.command("/registry");
        });
      }
      expect(t.ours).toEqual(t.upstream);
      // Upstream's facts, so a change of either side is told apart from a difference.
      const text = JSON.stringify(t.upstream);
      expect(text).toContain(String.raw`{\"n\":5,\"tags\":[\"x\"],\"flag\":true}`);
      expect(text).toContain("before_agent_start custom idle=false");
      expect(text).toContain('"error":"not allowed here"');
      const notices = (t.upstream!.lines as { method?: string; message?: string }[])
        .filter((l) => l.method === "notify")
        .map((l) => l.message);
      expect(notices.slice(0, 6)).toEqual([
        "before_agent_start user idle=false",
        "agent_start",
        "settled 1 (first handler)",
        "settled 1 (second handler)",
        "before_agent_start user idle=false",
        "agent_start",
      ]);
    }, 90_000);
  },
);
