/**
 * `codemode`, ours against pi 1.6.0 with the same script on the same mock model: a script
 * that calls a built-in tool (`ls`) and an MCP tool of a real stdio server written with the
 * SDK in parallel returns one result, whose content must be the same on both sides (the
 * wall time aside). The MCP server's default `codemode` exposure switches the tool on.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import type { RpcWorker } from "../support/rpc-worker.js";
import { type Implementation, startOracle, UPSTREAM } from "../support/upstream-oracle.js";

const PROBE = resolve(import.meta.dirname, "../support/mcp-probe-server.mjs");
const IMPLS: Implementation[] = ["ours", "upstream"];
const fx = useOracleFixture();

type Declared = { function: { name: string } };

/** The codemode results of a run, with the wall time (the one line that differs run to run) masked. */
function results(w: RpcWorker) {
  return w.received
    .filter((l) => l.type === "tool_execution_end" && !l.parentToolCallId)
    .map((l) => ({
      name: l.toolName,
      isError: l.isError,
      content: (l.result.content as { type: string; text?: string }[]).map((b) =>
        b.type === "text" ? (b.text ?? "").replace(/^Wall time [\d.]+ seconds$/m, "Wall time N seconds") : b.type,
      ),
    }));
}

/** The nested calls the script made, as `tool_execution_end` events with a parent. */
function nested(w: RpcWorker) {
  return w.received
    .filter((l) => l.type === "tool_execution_end" && l.parentToolCallId)
    .map((l) => ({ name: l.toolName, parent: l.parentToolCallId, isError: l.isError }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

const SCRIPT = [
  "const [listing, sum] = await Promise.all([",
  '  tools.read({ path: "notes.txt" }),',
  "  tools.mcp__probe__add({ a: 2, b: 3 }),",
  "]);",
  'console.log("read", listing.length, "characters");',
  "text(listing);",
  "return sum;",
].join("\n");

describe.skipIf(!UPSTREAM["1.6.0"].installed)("codemode, ours and pi 1.6.0", () => {
  it("a script calls a built-in tool and an MCP tool in parallel and returns one result", async () => {
    const seen: Record<string, unknown> = {};
    const decl: Record<string, unknown> = {};
    for (const impl of IMPLS) {
      const first = fx.server.requests.length;
      fx.server.enqueue({ toolCalls: [{ id: "c1", name: "codemode", arguments: { code: SCRIPT } }] }, { text: "done" });
      const { w } = startOracle(impl, fx.server, fx.dirs, {
        pi: "1.6.0",
        args: ["-e", "builtin:mcp", "-e", "builtin:codemode"],
        prepare: (home) =>
          writeFileSync(
            join(home, "mcp.json"),
            JSON.stringify({ mcpServers: { probe: { command: process.execPath, args: [PROBE] } } }),
          ),
        prepareProject: (project) => {
          mkdirSync(join(project, "src"));
          writeFileSync(join(project, "notes.txt"), "hello");
        },
      });
      await w.request({ type: "prompt", message: "add and list" });
      await w.event("agent_settled", 30_000);
      const declared = fx.server.requests
        .slice(first)
        .map((r) =>
          ((r.body.tools ?? []) as Declared[])
            .map((t) => t.function.name)
            .filter((n) => n === "codemode" || n.startsWith("mcp__")),
        );
      seen[impl] = { results: results(w), nested: nested(w), declared };
      const tools = (fx.server.requests[first]!.body.tools ?? []) as {
        function: { name: string; description: string; parameters: unknown };
      }[];
      const codemode = tools.find((t) => t.function.name === "codemode")!.function;
      // This worker has no classifier or image models, so its description has no `models` line.
      decl[impl] = { ...codemode, description: codemode.description.replace(/\n- `models`: .*$/, "") };
    }
    expect(seen.ours).toEqual(seen.upstream);
    expect(decl.ours).toEqual(decl.upstream);
    expect((seen.ours as { results: unknown }).results).toEqual([
      {
        name: "codemode",
        isError: false,
        content: [
          "Script completed\nWall time N seconds\nOutput:\n",
          '==> text 1/2 <==\nhello\n==> text 2/2 <==\n{"content":[{"type":"text","text":"5"}]}\n' +
            "<console_output>\nread 5 characters\n</console_output>",
        ],
      },
    ]);
  });

  it("a script's calls pass the same tool_call and tool_result hooks: one blocked, one changed", async () => {
    const seen: Record<string, unknown> = {};
    for (const impl of IMPLS) {
      const dir = fx.dir(`codemode-hooks-${impl}-`);
      const extension = join(dir, "hooks.ts");
      writeFileSync(extension, HOOKS);
      fx.server.enqueue(
        { toolCalls: [{ id: "c1", name: "codemode", arguments: { code: HOOKED_SCRIPT } }] },
        { text: "done" },
      );
      const { w } = startOracle(impl, fx.server, fx.dirs, {
        pi: "1.6.0",
        args: ["-e", "builtin:mcp", "-e", "builtin:codemode", "-e", extension],
        prepare: (home) =>
          writeFileSync(
            join(home, "mcp.json"),
            JSON.stringify({ mcpServers: { probe: { command: process.execPath, args: [PROBE] } } }),
          ),
      });
      await w.request({ type: "prompt", message: "hooks" });
      await w.event("agent_settled", 30_000);
      seen[impl] = results(w);
    }
    expect(seen.ours).toEqual(seen.upstream);
    expect(seen.ours).toEqual([
      {
        name: "codemode",
        isError: false,
        content: [
          "Script completed\nWall time N seconds\nOutput:\n",
          '[{"status":"rejected","reason":"blocked by the test"},{"status":"fulfilled","value":"seen by the hook"}]',
        ],
      },
    ]);
  });
  it("autoEnableCodemode false, or no codemode and no tool_search, leaves the tools unreachable with pi's warning", async () => {
    const seen: Record<string, unknown> = {};
    const cases = {
      autoOff: { args: ["-e", "builtin:mcp", "-e", "builtin:codemode"], auto: false },
      neither: { args: ["-e", "builtin:mcp"], auto: undefined },
    };
    for (const impl of IMPLS) {
      for (const [name, { args, auto }] of Object.entries(cases)) {
        const first = fx.server.requests.length;
        fx.server.enqueue({ text: "ok" });
        const { w } = startOracle(impl, fx.server, fx.dirs, {
          pi: "1.6.0",
          args,
          prepare: (home) =>
            writeFileSync(
              join(home, "mcp.json"),
              JSON.stringify({
                ...(auto === undefined ? {} : { autoEnableCodemode: auto }),
                mcpServers: { probe: { command: process.execPath, args: [PROBE] } },
              }),
            ),
        });
        await w.request({ type: "prompt", message: "hello" });
        await w.event("agent_settled", 30_000);
        const declared = ((fx.server.requests[first]!.body.tools ?? []) as Declared[]).map((t) => t.function.name);
        const warnings = w.received
          .filter((l) => l.type === "extension_ui_request" && /only reachable/.test(l.message ?? ""))
          .map((l) => l.message);
        seen[`${impl} ${name}`] = { declared, warnings };
      }
    }
    expect(seen["ours autoOff"]).toEqual(seen["upstream autoOff"]);
    expect(seen["ours neither"]).toEqual(seen["upstream neither"]);
    expect(seen["ours autoOff"]).toEqual({
      declared: ["read", "bash", "edit", "write"],
      warnings: [
        "MCP tools are only reachable from the codemode or tool_search tool, but neither is active (autoEnableCodemode is false); they cannot be called.",
      ],
    });
  });
});

/** Blocks the probe's `echo` and rewrites `read`'s result, whoever calls them. */
const HOOKS = `export default function (pi) {
  pi.on("tool_call", (event) => (event.toolName === "mcp__probe__echo" ? { block: true, reason: "blocked by the test" } : undefined));
  pi.on("tool_result", (event) =>
    event.toolName === "read" ? { content: [{ type: "text", text: "seen by the hook" }], structuredContent: "seen by the hook" } : undefined,
  );
}
`;

const HOOKED_SCRIPT = [
  "const settled = await Promise.allSettled([",
  '  tools.mcp__probe__echo({ text: "hi" }),',
  '  tools.read({ path: "missing.txt" }),',
  "]);",
  'return settled.map((s) => (s.status === "fulfilled" ? s : { status: s.status, reason: s.reason.message }));',
].join("\n");
