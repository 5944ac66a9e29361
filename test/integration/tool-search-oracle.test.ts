/**
 * `tool_search`, ours against pi 1.6.0 with the same script on the same mock model: an MCP
 * server of `deferred` exposure (a real stdio server written with the SDK) switches the tool
 * on; the model searches, the match is declared from the next request on and its call gets
 * the server's answer; the system prompt lists the server in its `mcp_servers` section; and
 * `--tools +tool_search` without any server finds nothing. The declarations of `tool_search`
 * itself are compared whole.
 */
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import type { RecordedRequest } from "../support/mock-model-server.js";
import type { RpcWorker } from "../support/rpc-worker.js";
import { type Implementation, startOracle, UPSTREAM } from "../support/upstream-oracle.js";

const PROBE = resolve(import.meta.dirname, "../support/mcp-probe-server.mjs");
const IMPLS: Implementation[] = ["ours", "upstream"];
const fx = useOracleFixture();

type Declared = { function: { name: string; description: string; parameters: unknown } };

/** What a request declared of tool_search and MCP tools, and its mcp_servers section. */
function requestView(req: RecordedRequest) {
  const tools = (req.body.tools ?? []) as Declared[];
  const system = String(req.body.messages?.find((m: { role: string }) => m.role === "system")?.content ?? "");
  return {
    tools: tools.map((t) => t.function.name).filter((n) => n === "tool_search" || n.startsWith("mcp__")),
    section: /<mcp_servers>\n?([\s\S]*?)\n?<\/mcp_servers>/.exec(system)?.[1] ?? null,
  };
}

function results(w: RpcWorker) {
  return w.received
    .filter((l) => l.type === "tool_execution_end")
    .map((l) => ({ name: l.toolName, text: l.result.content[0]?.text, isError: l.isError }));
}

describe.skipIf(!UPSTREAM["1.6.0"].installed)("tool_search, ours and pi 1.6.0", () => {
  it("a deferred MCP server's tool is found, declared from the next request, and called", async () => {
    const seen: Record<string, unknown> = {};
    const declarations: Record<string, unknown> = {};
    for (const impl of IMPLS) {
      const first = fx.server.requests.length;
      fx.server.enqueue(
        { toolCalls: [{ id: "q1", name: "tool_search", arguments: { query: "echo the text back", limit: 1 } }] },
        { toolCalls: [{ id: "e1", name: "mcp__probe__echo", arguments: { text: "found" } }] },
        { text: "done" },
      );
      const { w } = startOracle(impl, fx.server, fx.dirs, {
        pi: "1.6.0",
        args: ["-e", "builtin:mcp", "-e", "builtin:tool-search"],
        prepare: (home) =>
          writeFileSync(
            join(home, "mcp.json"),
            JSON.stringify({
              mcpServers: {
                probe: {
                  command: process.execPath,
                  args: [PROBE],
                  exposure: "deferred",
                  description: "Probe tools for the tests",
                },
              },
            }),
          ),
      });
      await w.request({ type: "prompt", message: "find a tool" });
      await w.event("agent_settled", 30_000);
      const requests = fx.server.requests.slice(first);
      seen[impl] = { results: results(w), requests: requests.map(requestView) };
      declarations[impl] = (requests[0]!.body.tools as Declared[]).find((t) => t.function.name === "tool_search");
    }
    expect(seen.ours).toEqual(seen.upstream);
    expect(declarations.ours).toEqual(declarations.upstream);
    const section =
      "MCP servers whose tools are not declared to you. Load the tools of `tool_search` servers with `tool_search`.\n" +
      "- mcp__probe (tool_search): Probe tools for the tests";
    expect(seen.ours).toEqual({
      results: [
        {
          name: "tool_search",
          text: "Loaded 1 tool. They are available from your next call:\n- mcp__probe__echo: Echo the text back",
          isError: false,
        },
        { name: "mcp__probe__echo", text: "echo: found", isError: false },
      ],
      requests: [
        { tools: ["tool_search"], section },
        { tools: ["tool_search", "mcp__probe__echo"], section },
        { tools: ["tool_search", "mcp__probe__echo"], section },
      ],
    });
  });

  it("a tool it loaded stays declared when its session is opened again, once the server is back", async () => {
    const seen: Record<string, unknown> = {};
    for (const impl of IMPLS) {
      fx.server.enqueue(
        { toolCalls: [{ id: "q1", name: "tool_search", arguments: { query: "echo the text back", limit: 1 } }] },
        { text: "one" },
      );
      const { w } = startOracle(impl, fx.server, fx.dirs, {
        pi: "1.6.0",
        sessions: true,
        args: ["-e", "builtin:mcp", "-e", "builtin:tool-search"],
        prepare: (home) =>
          writeFileSync(
            join(home, "mcp.json"),
            JSON.stringify({
              mcpServers: { probe: { command: process.execPath, args: [PROBE], exposure: "deferred" } },
            }),
          ),
      });
      await w.request({ type: "prompt", message: "find" });
      await w.event("agent_settled", 30_000);
      const file = (await w.request({ type: "get_state" })).data.sessionFile as string;
      // The servers close with the session and connect again with it.
      expect((await w.request({ type: "switch_session", sessionPath: file })).success).toBe(true);
      const from = w.received.length;
      await w.request({ type: "prompt", message: "/mcp" });
      await w.waitFor(
        (l) => l.type === "extension_ui_request" && /^probe: connected/.test(l.message ?? ""),
        30_000,
        from,
      );
      fx.server.enqueue({ text: "two" });
      const first = fx.server.requests.length;
      await w.request({ type: "prompt", message: "again" });
      await w.waitFor((l) => l.type === "agent_settled", 30_000, from);
      seen[impl] = fx.server.requests.slice(first).map(requestView);
    }
    expect(seen.ours).toEqual(seen.upstream);
    expect((seen.ours as { tools: string[] }[])[0]!.tools).toEqual(["tool_search", "mcp__probe__echo"]);
  });

  it("--tools +tool_search without MCP servers declares it and finds nothing", async () => {
    const seen: Record<string, unknown> = {};
    for (const impl of IMPLS) {
      const first = fx.server.requests.length;
      fx.server.enqueue(
        { toolCalls: [{ id: "q1", name: "tool_search", arguments: { query: "deploy" } }] },
        { text: "none" },
      );
      const { w } = startOracle(impl, fx.server, fx.dirs, {
        pi: "1.6.0",
        args: ["-e", "builtin:tool-search", "--tools", "+tool_search"],
      });
      await w.request({ type: "prompt", message: "search" });
      await w.event("agent_settled", 30_000);
      seen[impl] = { results: results(w), requests: fx.server.requests.slice(first).map(requestView) };
    }
    expect(seen.ours).toEqual(seen.upstream);
    expect((seen.ours as { results: unknown }).results).toEqual([
      { name: "tool_search", text: "No matching tools found.", isError: false },
    ]);
  });
});
