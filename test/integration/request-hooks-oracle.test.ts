/**
 * pi 1.6's request-time hooks, with upstream pi 1.6.0 as the oracle: `context` (the
 * conversation only; a changed list keeps the prompt and tools), `context_with_system`
 * (the whole transcript, sent as returned; dropping the leading system message is
 * reported) and `provider_stream_event` (each parsed stream event, with the provider, api
 * and model). Both sides run the same extension and script against the mock model server;
 * what the server received and what the extension told must agree. Skipped when
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
  let events = 0;
  const where = new Set();
  pi.on("context", (e) => {
    // Only the conversation: a system message here would be a leak of pi's own.
    const roles = e.messages.map((m) => m.role);
    if (roles.includes("system")) throw new Error("context saw a system message");
    return { messages: e.messages.filter((m) => !(m.role === "user" && JSON.stringify(m.content).includes("drop me"))) };
  });
  pi.on("context_with_system", (e) => {
    const [head, ...rest] = e.messages;
    if (!head || head.role !== "system") throw new Error("no leading system message");
    const text = typeof head.content === "string" ? head.content : head.content.map((b) => b.text ?? "").join("");
    const patched = {
      ...head,
      content: text + "\\nEXTRA LINE FROM THE HOOK",
      toolsAdded: (head.toolsAdded ?? []).filter((t) => t.name !== "write"),
    };
    return { messages: [patched, ...rest] };
  });
  pi.on("provider_stream_event", (e) => {
    events++;
    where.add(e.provider + "/" + e.api + "/" + e.model + "/" + typeof e.data);
  });
  pi.on("agent_end", (_e, ctx) => ctx.ui.notify("stream events " + (events > 0) + " " + [...where].join(",")));
}
`;

const DROPS_HEAD = `export default function (pi) {
  pi.on("context_with_system", (e) => ({ messages: e.messages.filter((m) => m.role !== "system") }));
}
`;

/** What a chat-completions request carried: its system text, its tool names, its user texts. */
function seen(body: any) {
  const messages = body.messages as { role: string; content: unknown }[];
  const text = (c: unknown) =>
    typeof c === "string" ? c : (c as { text?: string }[]).map((b) => b.text ?? "").join("");
  return {
    system: messages.filter((m) => m.role === "system" || m.role === "developer").map((m) => text(m.content)),
    tools: ((body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name).sort(),
    users: messages.filter((m) => m.role === "user").map((m) => text(m.content)),
  };
}

describe.skipIf(!UPSTREAM["1.6.0"].installed)("context, context_with_system and provider_stream_event", () => {
  it("shape the request and see the stream as pi 1.6.0 does", async () => {
    const extension = join(dir("pi-hooks-ext-"), "hooks.ts");
    writeFileSync(extension, EXTENSION);
    const result: Partial<Record<Implementation, unknown>> = {};
    for (const impl of IMPLS) {
      const first = server.requests.length;
      const { w } = startOracle(impl, server, dirs, { pi: "1.6.0", args: ["-e", extension] });
      server.enqueue({ text: "first answer" }, { text: "second answer" });
      for (const message of ["drop me", "keep me"]) {
        const from = w.received.length;
        await w.request({ type: "prompt", message }, 30_000);
        await w.event("agent_settled", 30_000, from);
      }
      const second = seen(server.requests[first + 1]!.body);
      const errors = w.received.filter((l: Line) => l.type === "extension_error");
      const told = w.received
        .filter((l: Line) => l.type === "extension_ui_request" && l.method === "notify")
        .map((l: Line) => String(l.message));
      w.kill();
      result[impl] = {
        promptPatched: second.system.length === 1 && second.system[0]!.includes("EXTRA LINE FROM THE HOOK"),
        tools: second.tools,
        users: second.users,
        errors: errors.map((e: Line) => e.error),
        told,
      };
    }
    expect(result.upstream).toEqual({
      promptPatched: true,
      tools: ["bash", "edit", "read"],
      users: ["keep me"],
      errors: [],
      told: [
        "stream events true mock/openai-completions/mock-1/object",
        "stream events true mock/openai-completions/mock-1/object",
      ],
    });
    expect(result.ours).toEqual(result.upstream);
  }, 90_000);

  it("reports a handler that drops the leading system message, and still sends what it returned", async () => {
    const extension = join(dir("pi-hooks-drop-"), "drop.ts");
    writeFileSync(extension, DROPS_HEAD);
    const result: Partial<Record<Implementation, unknown>> = {};
    for (const impl of IMPLS) {
      const first = server.requests.length;
      const { w } = startOracle(impl, server, dirs, { pi: "1.6.0", args: ["-e", extension] });
      server.enqueue({ text: "answer" });
      const from = w.received.length;
      await w.request({ type: "prompt", message: "hello" }, 30_000);
      await w.event("agent_settled", 30_000, from);
      const sent = seen(server.requests[first]!.body);
      const errors = w.received.filter((l: Line) => l.type === "extension_error");
      w.kill();
      result[impl] = {
        system: sent.system,
        tools: sent.tools,
        errors: errors.map((e: Line) => [e.event, e.error]),
      };
    }
    expect(result.upstream).toMatchObject({ system: [], tools: [] });
    expect((result.upstream as { errors: unknown[] }).errors).toHaveLength(1);
    expect(result.ours).toEqual(result.upstream);
  }, 90_000);
});
