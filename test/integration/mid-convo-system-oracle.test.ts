/**
 * A model whose models.json `compat` says it takes system messages mid-conversation
 * (`supportsMidConvoSystemMessages`, and `supportsMidConvoToolAdditions`), with upstream
 * pi 1.6.0 as the oracle: a tool change is sent as a system message where the session
 * recorded it, not folded into the first, so the start of every request stays the same
 * bytes. Both sides run the same script on the same mock model (a prompt; only `read`
 * left; a prompt; a new tool registered and added; a prompt) and must send requests of the
 * same shape: the same roles in the same order, the same `tools`, the same tools declared
 * in place. Without the compat both fold, as before. Skipped when test/upstream is not installed.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import type { RpcWorker } from "../support/rpc-worker.js";
import { mockModelsJson, startOracle, UPSTREAM, type Implementation } from "../support/upstream-oracle.js";
import { toolChangeExtension } from "../support/tool-change-extension.js";

type Line = Record<string, any>;

const { server, dirs, dir } = useOracleFixture();
const IMPLS: Implementation[] = ["ours", "upstream"];

const COMMANDS = toolChangeExtension();

const COMPAT = { supportsMidConvoSystemMessages: true, supportsMidConvoToolAdditions: true };

/**
 * A request's shape: each message's role (a system message's text is each side's own
 * wording, see differential/deliberate.ts OWN_PROMPT; one declaring tools in place shows
 * their names), and the names in `tools`.
 */
function shape(body: Line): Line {
  return {
    messages: (body.messages as Line[]).map((m) =>
      m.tools ? `${m.role}+tools(${(m.tools as Line[]).map((t) => t.function.name).join(",")})` : m.role,
    ),
    tools: ((body.tools ?? []) as Line[]).map((t) => t.function.name),
  };
}

async function send(w: RpcWorker, message: string): Promise<void> {
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message }, 30_000)).toMatchObject({ success: true });
  if (!message.startsWith("/")) await w.event("agent_settled", 30_000, from);
}

async function script(impl: Implementation, extension: string, compat: object | undefined): Promise<Line[]> {
  const { w } = startOracle(impl, server, dirs, {
    pi: "1.6.0",
    sessions: true,
    args: ["-e", extension],
    prepare: (home) => {
      if (!compat) return;
      const models = mockModelsJson(server) as Line;
      models.providers.mock.models[0].compat = compat;
      writeFileSync(join(home, "models.json"), JSON.stringify(models));
    },
  });
  const at = server.requests.length;
  server.enqueue({ text: "one" }, { text: "two" }, { text: "three" });
  for (const message of ["first", "/only-read", "second", "/add-hello", "third"]) await send(w, message);
  w.kill();
  return server.requests.slice(at).map((r) => r.body as Line);
}

describe.skipIf(!UPSTREAM["1.6.0"].installed)("system messages mid-conversation, as the model's compat allows", () => {
  it("sends a tool change in place, keeping the start of the request, as pi 1.6.0 does", async () => {
    const extension = join(dir("pi-midconvo-ext-"), "commands.ts");
    writeFileSync(extension, COMMANDS);
    const sent = {} as Record<Implementation, Line[]>;
    for (const impl of IMPLS) sent[impl] = await script(impl, extension, COMPAT);
    expect(sent.upstream.map(shape)).toEqual([
      { messages: ["system", "user"], tools: ["read", "bash", "edit", "write"] },
      // The removal: in place as text, and the request's tools are the state after it.
      { messages: ["system", "user", "assistant", "system", "user"], tools: ["read"] },
      // The new tool: declared where it was added; the request's tools stay as they were.
      {
        messages: ["system", "user", "assistant", "system", "user", "assistant", "system+tools(hello)", "user"],
        tools: ["read"],
      },
    ]);
    expect(sent.ours.map(shape)).toEqual(sent.upstream.map(shape));
    for (const impl of IMPLS) {
      const [first, second, third] = sent[impl].map((b) => b.messages as Line[]);
      // Every request starts with the one before it, byte for byte.
      expect(second!.slice(0, first!.length), impl).toEqual(first);
      expect(third!.slice(0, second!.length), impl).toEqual(second);
    }
  }, 120_000);

  it("without the compat, a tool change is folded into the first system message on both sides", async () => {
    const extension = join(dir("pi-midconvo-ext-"), "commands.ts");
    writeFileSync(extension, COMMANDS);
    const sent = {} as Record<Implementation, Line[]>;
    for (const impl of IMPLS) sent[impl] = await script(impl, extension, undefined);
    expect(sent.upstream.map(shape)).toEqual([
      { messages: ["system", "user"], tools: ["read", "bash", "edit", "write"] },
      { messages: ["system", "user", "assistant", "user"], tools: ["read"] },
      { messages: ["system", "user", "assistant", "user", "assistant", "user"], tools: ["read", "hello"] },
    ]);
    expect(sent.ours.map(shape)).toEqual(sent.upstream.map(shape));
  }, 120_000);
});
