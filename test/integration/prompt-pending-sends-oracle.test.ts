/**
 * A command's prompt is answered without waiting for a `sendUserMessage` an earlier
 * command made, on upstream pi 0.73.1 and on our worker with the same script: /go's message
 * waits on an input handler's confirm, and while that dialog is open the next command's
 * prompt and get_state are answered (ours waited for every pending send, session-wide,
 * which held the RPC queue until a person answered). Skipped when test/upstream is not installed.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startOracle, upstreamInstalled, type Implementation } from "../support/upstream-oracle.js";
import { useOracleFixture } from "../support/oracle-fixture.js";

type Line = Record<string, any>;

const { server, dirs, dir } = useOracleFixture();

const EXTENSION = `
export default function (pi) {
  pi.on("input", async (event, ctx) => {
    if (event.source !== "extension") return { action: "continue" };
    return (await ctx.ui.confirm("Send it?", event.text)) ? { action: "continue" } : { action: "handled" };
  });
  pi.registerCommand("go", { description: "sends a message", handler: async () => pi.sendUserMessage("from go") });
  pi.registerCommand("noop", { description: "does nothing", handler: async () => {} });
}
`;

const IMPLS: Implementation[] = ["ours", "upstream"];

describe.skipIf(!upstreamInstalled)("a command's prompt answer does not wait for an earlier command's send", () => {
  it.each(IMPLS)(
    "%s: with /go's message waiting on a confirm, /noop and get_state are answered; the confirm then sends it",
    async (impl) => {
      const extDir = dir("pi-pending-sends-ext-");
      writeFileSync(join(extDir, "sends.ts"), EXTENSION);
      const { w } = startOracle(impl, server, dirs, { args: ["-e", join(extDir, "sends.ts")] });
      const from = w.received.length;
      const go = w.request({ type: "prompt", message: "/go" }, 30_000);
      const ask: Line = await w.waitFor(
        (l) => l.type === "extension_ui_request" && l.method === "confirm",
        30_000,
        from,
      );
      expect(ask.message).toBe("from go");
      expect(await w.request({ type: "prompt", message: "/noop" }, 30_000)).toMatchObject({ success: true });
      expect((await w.request({ type: "get_state" }, 30_000)).data.isStreaming).toBe(false);
      server.enqueue({ text: "got it" });
      w.writeRaw(`${JSON.stringify({ type: "extension_ui_response", id: ask.id, confirmed: true })}\n`);
      expect(await go).toMatchObject({ success: true });
      const end: Line = await w.event("agent_end", 30_000, from);
      expect(end.messages.find((m: Line) => m.role === "user").content).toEqual([{ type: "text", text: "from go" }]);
    },
  );
});
