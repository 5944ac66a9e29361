/**
 * pi's example extensions with upstream pi 1.6.0 as the oracle: the same exercise,
 * the same mock model server (real OpenAI SDK on both sides), run once on our
 * worker and once on upstream `pi --mode rpc`, and both must end the same way.
 * Skipped when test/upstream is not installed (the e2e project's setup, test/support/e2e-setup.ts, installs it).
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RpcWorker } from "../support/rpc-worker.js";
import { startOracle, UPSTREAM, type Implementation } from "../support/upstream-oracle.js";
import { useOracleFixture } from "../support/oracle-fixture.js";

type Line = Record<string, any>;

/** The oracle: pi 1.6.0, whose examples both sides load. */
const PI = "1.6.0";
const installed = UPSTREAM[PI].installed;
const { server, dirs } = useOracleFixture();

function start(impl: Implementation, examples: string[]): { w: RpcWorker; project: string } {
  return startOracle(impl, server, dirs, { pi: PI, examples });
}

async function prompt(w: RpcWorker, message: string): Promise<number> {
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message }, 30_000)).toMatchObject({ success: true });
  return from;
}

const notify = (text: string) => (l: Line) =>
  l.type === "extension_ui_request" && l.method === "notify" && l.message === text;
/** The text of the last user or tool message of a recorded OpenAI request. */
const lastContent = (body: Line): string => {
  const content = body.messages.at(-1).content;
  return typeof content === "string" ? content : content.map((c: Line) => c.text ?? "").join("");
};

describe.skipIf(!installed)("pi's examples: our worker and upstream pi end the same way", () => {
  it.each<Implementation>(["ours", "upstream"])(
    "input-transform on %s: ping is answered without the model, ?quick is rewritten",
    async (impl) => {
      const { w } = start(impl, ["input-transform"]);
      const from = await prompt(w, "ping");
      await w.waitFor(notify("pong"), 30_000, from);
      expect(w.eventTypes(from)).not.toContain("agent_start");
      server.enqueue({ text: "brief" });
      const at = await prompt(w, "?quick what is a monad");
      await w.event("agent_end", 30_000, at);
      expect(server.requests).toHaveLength(1);
      expect(lastContent(server.requests[0].body as Line)).toBe("Respond briefly in 1-2 sentences: what is a monad");
    },
  );

  it.each<Implementation>(["ours", "upstream"])(
    "protected-paths on %s: the write to .env is blocked and the model gets the reason",
    async (impl) => {
      const { w, project } = start(impl, ["protected-paths"]);
      server.enqueue(
        { toolCalls: [{ id: "call_1", name: "write", arguments: { path: ".env", content: "SECRET=1" } }] },
        { text: "ok" },
      );
      const from = await prompt(w, "write the env file");
      await w.event("agent_end", 30_000, from);
      expect(existsSync(join(project, ".env"))).toBe(false);
      expect(lastContent(server.requests[1].body as Line)).toBe('Path ".env" is protected');
      await w.waitFor(notify("Blocked write to protected path: .env"), 30_000, from);
    },
  );

  it.each<Implementation>(["ours", "upstream"])(
    "provider-payload on %s: logs the request payload and the response status",
    async (impl) => {
      const { w, project } = start(impl, ["provider-payload"]);
      mkdirSync(join(project, ".pi"));
      server.enqueue({ text: "logged" });
      const from = await prompt(w, "log this request");
      await w.event("agent_end", 30_000, from);
      const log = readFileSync(join(project, ".pi", "provider-payload.log"), "utf8");
      const payload = JSON.parse(log.slice(0, log.indexOf("\n\n"))) as Line;
      expect(payload).toMatchObject({ model: "mock-1", stream: true });
      expect(lastContent(payload)).toBe("log this request");
      expect(log).toMatch(/\n\[200\] \{.*"content-type":"text\/event-stream/);
    },
  );
});
