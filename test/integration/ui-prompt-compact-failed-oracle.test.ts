/**
 * Two notifications of pi 1.6, with upstream pi 1.6.0 as the oracle: `ui_prompt_start` /
 * `ui_prompt_end` around an extension's dialog (nested ones as one span), and
 * `session_compact_failed` when a compaction is cancelled. An extension tells each as a
 * notify; both sides run the same script and must tell the same. Skipped when
 * test/upstream is not installed.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { startOracle, UPSTREAM, type Implementation } from "../support/upstream-oracle.js";

type Line = Record<string, any>;

const { server, dirs, dir } = useOracleFixture();
const IMPLS: Implementation[] = ["upstream", "ours"];

const EXTENSION = `export default function (pi) {
  const tell = (ctx, text) => ctx.ui.notify(text);
  pi.on("ui_prompt_start", (e, ctx) => tell(ctx, "start " + e.kind + " " + (e.title ?? "") + " " + e.reason));
  pi.on("ui_prompt_end", (e, ctx) => tell(ctx, "end " + e.kind));
  pi.on("session_before_compact", () => ({ cancel: true }));
  pi.on("session_compact_failed", (e, ctx) =>
    tell(ctx, "compact failed " + e.reason + " aborted=" + e.aborted + " retry=" + e.willRetry + " ext=" + e.fromExtension));
  pi.registerCommand("ask", {
    handler: async (_args, ctx) => {
      const ok = await ctx.ui.confirm("Deploy?", "to production");
      tell(ctx, "answered " + ok);
    },
  });
}
`;

describe.skipIf(!UPSTREAM["1.6.0"].installed)("ui_prompt and session_compact_failed", () => {
  it("tells a dialog's span and a cancelled compaction as pi 1.6.0 does", async () => {
    const extension = join(dir("pi-uiprompt-ext-"), "tell.ts");
    writeFileSync(extension, EXTENSION);
    const told: Partial<Record<Implementation, string[]>> = {};
    for (const impl of IMPLS) {
      // A small kept part, so the compaction reaches session_before_compact (which cancels it).
      const prepare = (home: string) =>
        writeFileSync(join(home, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 10 } }));
      const { w } = startOracle(impl, server, dirs, { pi: "1.6.0", sessions: true, args: ["-e", extension], prepare });
      server.enqueue({ text: `one ${"word ".repeat(60)}` }, { text: `two ${"word ".repeat(60)}` });
      for (const message of ["first", "second"]) {
        const from = w.received.length;
        await w.request({ type: "prompt", message }, 30_000);
        await w.event("agent_settled", 30_000, from);
      }
      const asking = w.request({ type: "prompt", message: "/ask" }, 30_000);
      const dialog = await w.waitFor((l) => l.type === "extension_ui_request" && l.method === "confirm");
      await w.waitFor((l) => l.method === "notify" && String(l.message).startsWith("start "));
      w.writeRaw(`${JSON.stringify({ type: "extension_ui_response", id: dialog.id, confirmed: true })}\n`);
      await asking;
      await w.waitFor((l) => l.method === "notify" && l.message === "end confirm");
      const compact = await w.request({ type: "compact" }, 30_000);
      expect(compact.success, impl).toBe(false);
      await w.waitFor((l) => l.method === "notify" && String(l.message).startsWith("compact failed"));
      told[impl] = w.received
        .filter((l: Line) => l.type === "extension_ui_request" && l.method === "notify")
        .map((l: Line) => String(l.message));
      w.kill();
    }
    expect(told.upstream).toEqual([
      "start confirm Deploy? ui_prompt",
      "end confirm",
      "answered true",
      "compact failed manual aborted=true retry=false ext=false",
    ]);
    expect(told.ours).toEqual(told.upstream);
  }, 90_000);
});
