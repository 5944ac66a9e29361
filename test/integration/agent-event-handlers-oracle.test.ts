/**
 * A run ends when its loop ends, also while an extension's handler of one of its events
 * still waits, on upstream pi 0.73.1 and on our worker with the same script: an agent_start
 * handler awaiting `ctx.waitForIdle()` (a command's ctx kept from earlier) does not hold the
 * run, so `abort` is answered at once and get_state says the agent is idle (turn_end is
 * pi 1.6's boundary now, which the run waits for: turn-end-boundary-oracle.test.ts). The events still go out after their handlers.
 * Skipped when test/upstream is not installed.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RpcWorker } from "../support/rpc-worker.js";
import { startOracle, upstreamInstalled, type Implementation } from "../support/upstream-oracle.js";
import { useOracleFixture } from "../support/oracle-fixture.js";

type Line = Record<string, any>;

const { server, dirs, dir } = useOracleFixture();

const HANDLERS = `
let saved;
export default function (pi) {
  pi.registerCommand("keep", { description: "keeps its ctx", handler: async (_args, ctx) => { saved = ctx; } });
  pi.on("agent_start", async () => { if (process.env.WAIT_IDLE && saved) await saved.waitForIdle(); });
  pi.on("turn_end", async (_event, ctx) => { if (process.env.CONFIRM_TURN) await ctx.ui.confirm("Keep going?", "the turn ended"); });
  if (!process.env.NO_TOOL_END) pi.on("tool_execution_end", () => {});
  let prompts = 0;
  pi.on("before_agent_start", async () => { if (process.env.SEND_BEFORE && ++prompts === 2) await pi.sendUserMessage("steered in before the run", { deliverAs: "steer" }); });
  pi.registerTool({
    name: "big",
    label: "Big",
    description: "returns details JSON cannot hold",
    parameters: { type: "object", properties: {} },
    execute: async () => ({ content: [{ type: "text", text: "big" }], details: { n: 10n } }),
  });
}
`;

function start(impl: Implementation, env: NodeJS.ProcessEnv): RpcWorker {
  const extDir = dir("pi-event-handlers-ext-");
  writeFileSync(join(extDir, "handlers.ts"), HANDLERS);
  return startOracle(impl, server, dirs, { args: ["-e", join(extDir, "handlers.ts")], env }).w;
}

const IMPLS: Implementation[] = ["ours", "upstream"];

describe.skipIf(!upstreamInstalled)("a run ends with its loop, not with the extensions' handlers of its events", () => {
  it.each(IMPLS)(
    "%s: an agent_start handler awaiting ctx.waitForIdle() lets the run end; abort is answered",
    async (impl) => {
      const w = start(impl, { WAIT_IDLE: "1" });
      expect(await w.request({ type: "prompt", message: "/keep" }, 30_000)).toMatchObject({ success: true });
      server.enqueue({ text: "done" });
      const from = w.received.length;
      expect(await w.request({ type: "prompt", message: "hello" }, 30_000)).toMatchObject({ success: true });
      expect(await w.request({ type: "abort" }, 30_000)).toMatchObject({ success: true });
      const end: Line = await w.event("agent_end", 30_000, from);
      expect(end.messages.at(-1).role).toBe("assistant");
      expect((await w.request({ type: "get_state" }, 30_000)).data.isStreaming).toBe(false);
    },
  );

  it.each([
    { held: "a tool_execution_end handler holds it", env: {} },
    { held: "no handler of it, nothing held", env: { NO_TOOL_END: "1" } },
  ])(
    "ours: an event that cannot be written (tool details holding a BigInt; $held) is reported on stderr and the worker lives (it was an unhandled rejection)",
    async ({ env }) => {
      const w = start("ours", env);
      server.enqueue({ toolCalls: [{ id: "c1", name: "big", arguments: {} }] }, { text: "after big" });
      expect(await w.request({ type: "prompt", message: "use big" }, 30_000)).toMatchObject({ success: true });
      await w.waitFor(
        (l) => l.type === "message_end" && l.message.role === "assistant" && l.message.content[0]?.text === "after big",
        30_000,
      );
      expect(w.stderr.join("")).toContain(
        "pi: could not send the tool_execution_end event: Do not know how to serialize a BigInt",
      );
      expect(await w.request({ type: "get_state" }, 30_000)).toMatchObject({ success: true });
      expect(w.proc.exitCode).toBe(null);
    },
  );

  // A turn_end handler's open confirm held nothing on 0.73.1; pi 1.6 made turn_end an actionable
  // boundary the run waits for, and 1.6 wins: test/integration/turn-end-boundary-oracle.test.ts.

  it.each(IMPLS)(
    "%s: a before_agent_start handler awaiting its own send on a later prompt does not hold that run (ours waited for the run it was in)",
    async (impl) => {
      const w = start(impl, { SEND_BEFORE: "1" });
      server.enqueue({ text: "first" });
      expect(await w.request({ type: "prompt", message: "one" }, 30_000)).toMatchObject({ success: true });
      await w.event("agent_end", 30_000);
      server.enqueue({ text: "second" }, { text: "third" }, { text: "fourth" });
      const from = w.received.length;
      expect(await w.request({ type: "prompt", message: "two" }, 30_000)).toMatchObject({ success: true });
      await w.event("agent_end", 30_000, from);
      expect(await w.request({ type: "abort" }, 30_000)).toMatchObject({ success: true });
      expect((await w.request({ type: "get_state" }, 30_000)).data.isStreaming).toBe(false);
    },
  );
});
