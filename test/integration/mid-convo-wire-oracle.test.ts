/**
 * The whole request of a catalogue model whose `compat` takes system messages, tool changes
 * and effort inside the conversation (pi 1.6.0's `supportsMidConvoSystemMessages`,
 * `supportsMidConvoToolChanges`, `supportsMidConvoEffort`), ours against pi 1.6.0 as the
 * oracle: both run one script on the mock model server (the built-in provider's `baseUrl`
 * pointed at it) — a prompt with a tool call, only `read` left, a higher thinking level, a
 * prompt, a new tool registered by an extension, a prompt, a lower level, a prompt — and
 * every request body must be the same, and the `anthropic-beta` header too. Set aside, as
 * everywhere (test/differential/deliberate.ts): the system prompt's text and the built-in
 * tools' own descriptions and schemas. Skipped when test/upstream is not installed.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import type { RpcWorker } from "../support/rpc-worker.js";
import { startOracle, UPSTREAM, type Implementation } from "../support/upstream-oracle.js";
import { toolChangeExtension } from "../support/tool-change-extension.js";

type Json = Record<string, any>;

const { server, dirs, dir } = useOracleFixture();
const IMPLS: Implementation[] = ["ours", "upstream"];
const BUILT_IN_TOOLS = new Set(["read", "bash", "edit", "write"]);

const COMMANDS = toolChangeExtension();

/** A built-in tool's definition with its own wording set aside (our tools declare their own). */
function builtIn(tool: Json): Json {
  if (!BUILT_IN_TOOLS.has(tool.name)) return tool;
  const { description: _d, input_schema: _s, parameters: _p, strict: _strict, ...rest } = tool;
  return { ...rest, description: "<built-in>" };
}

/** pi-ai's own notices in a Responses instruction stay; the prompt's text before them is each side's own. */
function instruction(text: string): string {
  if (text.startsWith("This is an incremental tools update.")) return text;
  const notice = text.indexOf("The following tools are no longer available.");
  return notice < 0 ? "<system prompt>" : `<system prompt update>\n\n${text.slice(notice)}`;
}

/**
 * A request body with each side's own words set aside: the system prompt's text and the
 * built-in tools; and the mock server's reply ids, which count both sides' requests.
 */
function normalize(body: Json): Json {
  const out = structuredClone(body);
  if (Array.isArray(out.system)) for (const b of out.system) b.text = "<system prompt>";
  if (out.tools) out.tools = (out.tools as Json[]).map(builtIn);
  for (const m of (out.messages ?? []) as Json[]) {
    if (m.role !== "system" || !Array.isArray(m.content)) continue;
    for (const b of m.content as Json[]) if (b.type === "text") b.text = "<system prompt update>";
  }
  for (const item of (out.input ?? []) as Json[]) {
    if ((item.role === "developer" || item.role === "system") && typeof item.content === "string")
      item.content = instruction(item.content);
    if (item.type === "additional_tools") item.tools = (item.tools as Json[]).map(builtIn);
    if (item.type === "message" && /^msg_mock_\d+$/.test(item.id)) item.id = "<reply id>";
    if (item.type === "function_call" && /^fc_mock_\d+_\d+$/.test(item.id)) item.id = "<call item id>";
  }
  // The session's id: both send theirs.
  if (typeof out.prompt_cache_key === "string") out.prompt_cache_key = "<session id>";
  return out;
}

async function send(w: RpcWorker, message: string): Promise<void> {
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message }, 30_000)).toMatchObject({ success: true });
  if (!message.startsWith("/")) await w.event("agent_settled", 30_000, from);
}

async function level(w: RpcWorker, to: string): Promise<void> {
  expect(await w.request({ type: "set_thinking_level", level: to })).toMatchObject({ success: true });
}

/** The requests `impl` sends for the script, with `provider/model` pointed at the mock server. */
async function script(impl: Implementation, model: string, extension: string, compat?: Json): Promise<Json[]> {
  const [provider, id] = model.split("/") as [string, string];
  const { w } = startOracle(impl, server, dirs, {
    pi: "1.6.0",
    sessions: true,
    args: ["-e", extension, "--provider", provider, "--model", id],
    env: { OPENAI_API_KEY: "o", ANTHROPIC_API_KEY: "a" },
    prepare: (home) =>
      writeFileSync(
        join(home, "models.json"),
        JSON.stringify({
          providers: {
            openai: { baseUrl: `${server.url}/v1`, ...(compat ? { compat } : {}) },
            anthropic: { baseUrl: server.url },
          },
        }),
      ),
    prepareProject: (project) => writeFileSync(join(project, "notes.txt"), "a note\n"),
  });
  const at = server.requests.length;
  server.enqueue(
    { toolCalls: [{ id: "call_1", name: "read", arguments: { path: "notes.txt" } }] },
    { text: "one" },
    { text: "two" },
    { text: "three" },
    { text: "four" },
  );
  await send(w, "first");
  await send(w, "/only-read");
  await level(w, "xhigh");
  await send(w, "second");
  await send(w, "/add-hello");
  await send(w, "third");
  await level(w, "low");
  await send(w, "fourth");
  w.kill();
  return server.requests.slice(at).map((r) => ({ beta: r.headers["anthropic-beta"], body: normalize(r.body) }));
}

describe.skipIf(!UPSTREAM["1.6.0"].installed)("mid-conversation system messages, tool changes and effort", () => {
  it("anthropic/claude-opus-5-5: every request as pi 1.6.0 sends it", async () => {
    const extension = join(dir("pi-midconvo-wire-"), "commands.ts");
    writeFileSync(extension, COMMANDS);
    const sent = {} as Record<Implementation, Json[]>;
    for (const impl of IMPLS) sent[impl] = await script(impl, "anthropic/claude-opus-5-5", extension);
    const last = sent.upstream.at(-1)!.body;
    // What the oracle shows, so the comparison below compares something: the tool list of the
    // first request with the placeholder, the changes in place, an effort marker before each reply.
    expect((last.tools as Json[]).map((t) => t.name)).toEqual([
      "read",
      "bash",
      "edit",
      "write",
      "__pi_deferred_placeholder__",
    ]);
    expect(
      (last.messages as Json[]).map((m) =>
        m.role === "system"
          ? m.output_config
            ? `effort ${m.output_config.effort}`
            : m.content.map((b: Json) => b.type).join("+")
          : m.role,
      ),
    ).toEqual([
      "user",
      "effort medium",
      "assistant",
      "user",
      "effort medium",
      "assistant",
      "user",
      "text+tool_removal+tool_removal+tool_removal",
      "effort xhigh",
      "assistant",
      "user",
      "tool_addition",
      "effort xhigh",
      "assistant",
      "user",
      "effort low",
    ]);
    expect(sent.upstream[0]!.beta).toBe(
      "mid-conversation-output-config-2026-07-01,thinking-binding-controls-2026-08-01,inline-tools-2026-09-15",
    );
    expect(sent.ours).toEqual(sent.upstream);
  }, 120_000);

  it("openai/gpt-6.2-sol: every request as pi 1.6.0 sends it", async () => {
    const extension = join(dir("pi-midconvo-wire-"), "commands.ts");
    writeFileSync(extension, COMMANDS);
    const sent = {} as Record<Implementation, Json[]>;
    for (const impl of IMPLS) sent[impl] = await script(impl, "openai/gpt-6.2-sol", extension);
    const last = sent.upstream.at(-1)!.body;
    // What the oracle shows: every tool in additional_tools items, none at the top, the
    // removal said in text, a configuration update before each reply and at the end.
    expect(last.tools).toBeUndefined();
    expect(last.reasoning).toEqual({ effort: "medium", summary: "auto" });
    expect(
      (last.input as Json[]).map((i) =>
        i.type === "additional_tools"
          ? `tools ${(i.tools as Json[]).map((t) => t.name).join(",")}`
          : i.type === "configuration_update"
            ? `effort ${i.reasoning.effort}`
            : (i.role ?? i.type),
      ),
    ).toEqual([
      "tools read,bash,edit,write",
      "developer",
      "user",
      "effort medium",
      "function_call",
      "function_call_output",
      "effort medium",
      "assistant",
      "developer",
      "user",
      "effort xhigh",
      "assistant",
      "developer",
      "tools hello",
      "user",
      "effort xhigh",
      "assistant",
      "user",
      "effort low",
    ]);
    expect(sent.ours).toEqual(sent.upstream);
  }, 120_000);

  // Models with some or none of the flags: system messages in place but tools at the top
  // (gpt-5.4), everything folded (o3, claude-sonnet-4-6), a thinking budget (claude-haiku-4-5).
  it.each(["openai/gpt-5.4", "openai/o3", "anthropic/claude-sonnet-4-6", "anthropic/claude-haiku-4-5"])(
    "%s: every request as pi 1.6.0 sends it",
    async (model) => {
      const extension = join(dir("pi-midconvo-wire-"), "commands.ts");
      writeFileSync(extension, COMMANDS);
      const sent = {} as Record<Implementation, Json[]>;
      for (const impl of IMPLS) sent[impl] = await script(impl, model, extension);
      expect(sent.upstream).toHaveLength(5);
      expect(sent.ours).toEqual(sent.upstream);
    },
    120_000,
  );

  // A client tool search (`supportsToolSearch`, which no catalogue model has alone), set in models.json.
  it("openai/gpt-5.4 with a client tool search: every request as pi 1.6.0 sends it", async () => {
    const extension = join(dir("pi-midconvo-wire-"), "commands.ts");
    writeFileSync(extension, COMMANDS);
    const compat = { supportsToolSearch: true };
    const sent = {} as Record<Implementation, Json[]>;
    for (const impl of IMPLS) sent[impl] = await script(impl, "openai/gpt-5.4", extension, compat);
    const types = (sent.upstream.at(-1)!.body.input as Json[]).map((i) => i.type);
    expect(types).toContain("tool_search_call");
    expect(sent.ours).toEqual(sent.upstream);
  }, 120_000);
});
