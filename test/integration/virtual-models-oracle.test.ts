/**
 * pi 1.6's virtual models (docs/virtual-models.md), with upstream pi 1.6.0 as the oracle:
 * the same extension and RPC script on our worker and on upstream `pi --mode rpc` (same
 * mock model server). The extension registers `router/auto`, whose route() tells what it
 * was asked (reason, selection, previous response, stored state) and sends every request
 * to the physical `mock/mock-1` with a new state, and `router/broken`, which routes to
 * itself. Both transcripts must be equal: the catalogue entries, the selection and its
 * thinking levels, what each route() saw, the state entries on the branch, the physical
 * model each response names, a failed routing's error response, and the model list after
 * `unregisterVirtualModel`. Skipped when test/upstream is not installed.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { transcriptOf, type OracleSide, type Transcript } from "../support/oracle-transcript.js";
import { UPSTREAM, type Implementation } from "../support/upstream-oracle.js";

type Line = Record<string, any>;

const { server, dirs, dir } = useOracleFixture();

const ROUTER = `
export default function (pi) {
  pi.registerVirtualModel({
    provider: "router",
    id: "auto",
    name: "Auto",
    thinkingLevels: ["low", "high"],
    contextWindow: 272000,
    async route(request, ctx) {
      ctx.ui.notify(JSON.stringify({
        reason: request.reason,
        selected: request.model.provider + "/" + request.model.id + ":" + request.thinkingLevel,
        previous: request.previous && request.previous.model.provider + "/" + request.previous.model.id + ":" + request.previous.thinkingLevel,
        state: request.state,
        failed: request.failed && request.failed.model.id + ":" + request.failed.message.stopReason,
        // pi 1.6 also passes its system messages (the session-context issue's part).
        roles: request.messages.filter((m) => m.role !== "system").map((m) => m.role),
        aborts: request.signal instanceof AbortSignal,
      }));
      const n = (request.state?.n ?? 0) + 1;
      return { model: ctx.modelRegistry.find("mock", "mock-1"), thinkingLevel: "high", state: { n } };
    },
  });
  pi.registerVirtualModel({
    provider: "router",
    id: "broken",
    route: (request) => ({ model: request.model, thinkingLevel: "off" }),
  });
  pi.registerCommand("drop", { description: "unregister router/auto", handler: async () => pi.unregisterVirtualModel("router", "auto") });
}
`;

/** What a client sees of the router's models in get_available_models. */
async function routerModels(s: OracleSide): Promise<unknown> {
  const models = await s.send({ type: "get_available_models" });
  return (models.data?.models ?? []).filter((m: Line) => m.provider === "router");
}

/** The physical model each assistant response since `from` names, and the router state entries appended. */
function dispatched(s: OracleSide, from: number): unknown[] {
  return s.w.received.slice(from).flatMap((l: Line): unknown[] =>
    l.type === "message_end" && l.message.role === "assistant"
      ? [
          {
            response: `${l.message.provider}/${l.message.model}:${l.message.thinkingLevel}`,
            api: l.message.api,
            stopReason: l.message.stopReason,
            // The 503's text is each provider client's own wording.
            ...(l.message.errorMessage && !l.message.errorMessage.startsWith("503")
              ? { errorMessage: l.message.errorMessage }
              : {}),
          },
        ]
      : l.type === "entry_appended" && l.entry.customType === "pi.virtual-model-state"
        ? [{ stateEntry: l.entry.data }]
        : [],
  );
}

describe.skipIf(!UPSTREAM["1.6.0"].installed)("virtual models: our worker and upstream pi 1.6.0", () => {
  it("list, select, route each request to a physical model with state on the branch, and unregister, as pi 1.6.0", async () => {
    const extension = join(dir("pi-virtual-models-"), "router.ts");
    writeFileSync(extension, ROUTER);
    const t: Partial<Record<Implementation, Transcript>> = {};
    for (const impl of ["ours", "upstream"] as const) {
      t[impl] = await transcriptOf(
        impl,
        server,
        dirs,
        {
          pi: "1.6.0",
          args: ["-e", extension],
          sessions: true,
          prepare: (home) => writeFileSync(join(home, "settings.json"), JSON.stringify({ retry: { baseDelayMs: 10 } })),
        },
        async (s) => {
          s.note(await routerModels(s));
          await s.send({ type: "set_model", provider: "router", modelId: "auto" }, true);
          await s.send({ type: "get_available_thinking_levels" }, true);
          let from = s.w.received.length;
          await s.run(
            "list the files",
            { toolCalls: [{ id: "c1", name: "bash", arguments: { command: "echo hi" } }] },
            { text: "two files" },
          );
          s.note(dispatched(s, from));
          from = s.w.received.length;
          await s.run("and now?", { text: "still two" });
          s.note(dispatched(s, from));
          const state = await s.send({ type: "get_state" });
          s.note(`${state.data.model.provider}/${state.data.model.id}:${state.data.thinkingLevel}`);
          await s.send({ type: "set_model", provider: "router", modelId: "broken" }, true);
          from = s.w.received.length;
          await s.run("this cannot be routed");
          s.note(dispatched(s, from));
          await s.send({ type: "set_model", provider: "router", modelId: "auto" });
          server.enqueue({ error: { status: 503, message: "overloaded" } }, { text: "second time lucky" });
          from = s.w.received.length;
          await s.command("this request fails once, then works");
          await s.w.event("agent_settled", 30_000, from);
          s.note(dispatched(s, from));
          await s.command("/drop");
          s.note(await routerModels(s));
        },
      );
    }
    // The 503's text is each provider client's own wording (pi's OpenAI SDK quotes the body).
    const same = (x: Transcript) =>
      JSON.parse(JSON.stringify(x).replace(/"errorMessage":"503(?:[^"\\]|\\.)*"/g, '"errorMessage":"503"'));
    expect(same(t.ours!)).toEqual(same(t.upstream!));
    // Upstream's facts, so a change of either side is told apart from a difference.
    const notes = t.upstream!.notes as unknown[];
    expect(notes[1]).toEqual([
      { stateEntry: { provider: "router", modelId: "auto", state: { n: 1 } } },
      { response: "mock/mock-1:off", api: "openai-completions", stopReason: "toolUse" },
      { stateEntry: { provider: "router", modelId: "auto", state: { n: 2 } } },
      { response: "mock/mock-1:off", api: "openai-completions", stopReason: "stop" },
    ]);
    expect(notes[4]).toEqual([
      {
        response: "router/broken:undefined",
        api: "pi-virtual",
        stopReason: "error",
        errorMessage: "Virtual model router/broken routed to router/broken, which is not a physical model.",
      },
    ]);
    // The failed request stored its state too; the retry (reason "retry") stores the next.
    expect(notes[5]).toEqual([
      { stateEntry: { provider: "router", modelId: "auto", state: { n: 4 } } },
      { response: "mock/mock-1:off", api: "openai-completions", stopReason: "error" },
      { stateEntry: { provider: "router", modelId: "auto", state: { n: 5 } } },
      { response: "mock/mock-1:off", api: "openai-completions", stopReason: "stop" },
    ]);
    expect((notes[6] as Line[]).map((m) => m.id)).toEqual(["broken"]);
  }, 90_000);
});
