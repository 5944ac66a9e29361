/**
 * MCP, ours against pi 1.6.0 with the same script: a real stdio MCP server and a real
 * streamable-HTTP one, both written with the official SDK (test/support/mcp-probe-server.mjs,
 * mcp-http-server.ts). `pi mcp add` and `pi mcp list` print the same; the model's call of
 * a direct MCP tool gets the server's answer over stdio and over HTTP with a bearer token
 * from the environment; a server that crashes in the middle of a call is an error result
 * naming it, the next call reconnects, and nothing of it runs after the worker is gone;
 * `--no-mcp` leaves MCP out. The sides differ on purpose in two places: where pi says
 * "Run /mcp to fix", ours names `pi mcp list` (it has no /mcp); and what a crashed server
 * started dies with it on ours, where pi 1.6.0 leaves it running.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { startMcpHttpServer, type McpHttpServer } from "../support/mcp-http-server.js";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { isAlive, PI_BIN, type RpcWorker, waitForExit } from "../support/rpc-worker.js";
import { type Implementation, startOracle, UPSTREAM } from "../support/upstream-oracle.js";

const PI16 = UPSTREAM["1.6.0"];
const PROBE = resolve(import.meta.dirname, "../support/mcp-probe-server.mjs");
const IMPLS: Implementation[] = ["ours", "upstream"];

const fx = useOracleFixture();
const https: McpHttpServer[] = [];
const leftovers = new Set<number>();
afterEach(async () => {
  await Promise.all(https.splice(0).map((s) => s.close()));
  for (const pid of leftovers) if (isAlive(pid)) process.kill(pid, "SIGKILL");
  leftovers.clear();
});

/** Run `pi mcp ARGS` of `impl` with `home` as its agent directory, in `cwd`. */
async function piMcp(impl: Implementation, home: string, cwd: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const [bin, ...pre] = impl === "ours" ? [process.execPath, PI_BIN] : [PI16.node, PI16.cli];
  const homeEnv = impl === "ours" ? { PI_ORCH_HOME: home } : { PI_CODING_AGENT_DIR: home, PI_OFFLINE: "1" };
  const r = await execa(bin, [...pre, "mcp", ...args], { cwd, env: { ...homeEnv, ...env }, reject: false });
  const clean = (s: string) => s.replaceAll(home, "<home>").replaceAll(cwd, "<project>");
  return { code: r.exitCode, stdout: clean(r.stdout), stderr: clean(r.stderr) };
}

/** `mcp.json` in `home` with the stdio probe (direct) and, when given, the HTTP one (direct, bearer from $WEB_TOKEN). */
function writeMcpJson(home: string, http?: McpHttpServer, probeEnv: Record<string, string> = {}): void {
  const servers: Record<string, unknown> = {
    probe: { command: process.execPath, args: [PROBE], exposure: "direct", env: probeEnv },
  };
  if (http) servers.web = { url: http.url, headers: { Authorization: "Bearer ${WEB_TOKEN}" }, exposure: "direct" };
  writeFileSync(join(home, "mcp.json"), JSON.stringify({ mcpServers: servers }));
}

/** Start `impl` in RPC mode with builtin:mcp (pi 1.6.0's built-ins are off in the oracle but for -e ones). */
function startWithMcp(impl: Implementation, http?: McpHttpServer, extra: string[] = [], env: NodeJS.ProcessEnv = {}) {
  return startOracle(impl, fx.server, fx.dirs, {
    pi: "1.6.0",
    args: ["-e", "builtin:mcp", ...extra],
    env: { WEB_TOKEN: "s3cret", ...env },
    prepare: (home) => writeMcpJson(home, http),
  });
}

/** The text of every tool result of the run, in order, with whether it was an error. */
function toolResults(w: RpcWorker): { name: string; text: string; isError: boolean }[] {
  return w.received
    .filter((l) => l.type === "tool_execution_end")
    .map((l) => ({
      name: l.toolName,
      text: (l.result?.content ?? []).map((c: { text?: string }) => c.text ?? "").join(""),
      isError: l.isError === true,
    }));
}

describe.skipIf(!PI16.installed)("MCP, ours and pi 1.6.0", () => {
  it("pi mcp add and list print the same, for a stdio and an HTTP server with a bearer token", async () => {
    const http = await startMcpHttpServer({ token: "s3cret" });
    https.push(http);
    const out: Record<string, string[]> = {};
    // The sides at once, each in its own home and project (the steps of a side in turn).
    const side = async (impl: (typeof IMPLS)[number]) => {
      const home = fx.dir(`mcp-cli-${impl}-home-`);
      const project = fx.dir(`mcp-cli-${impl}-project-`);
      const steps = [
        await piMcp(impl, home, project, ["add", "probe", "--exposure", "direct", "--", process.execPath, PROBE]),
        await piMcp(impl, home, project, ["add", "web", "--url", http.url, "--bearer-token-env-var", "WEB_TOKEN"]),
        await piMcp(impl, home, project, [
          "add",
          "broken",
          "--env",
          "PROBE_FAIL_START=yes",
          "--",
          process.execPath,
          PROBE,
        ]),
        await piMcp(impl, home, project, ["list"], { WEB_TOKEN: "s3cret" }),
        await piMcp(impl, home, project, ["list", "--json"], { WEB_TOKEN: "s3cret" }),
        await piMcp(impl, home, project, ["remove", "broken"]),
        await piMcp(impl, home, project, ["remove", "--local", "probe"]),
        await piMcp(impl, home, project, ["list"], { WEB_TOKEN: "s3cret" }),
      ];
      out[impl] = steps.map((s) => `${s.code}\n${s.stdout}\n${s.stderr}`);
    };
    await Promise.all(IMPLS.map(side));
    expect(out.ours).toEqual(out.upstream);
    // What the steps showed, read once on our side.
    expect(out.ours[3]).toContain("probe: connected, 6 tools (direct, global)");
    expect(out.ours[3]).toContain("web: connected, 6 tools (codemode, global)");
    expect(out.ours[3]).toMatch(/broken: failed[^\n]*\n.*\n {2}MCP connection closed\n {2}probe: refusing to start/);
    expect(out.ours[3]).toMatch(/^1\n/);
    expect(out.ours[7]).toMatch(/^0\n/);
    // Sixteen CLI runs, pi 1.6.0's at ~2.5 s each on a loaded machine, ours beside them.
  }, 120_000);

  it("the model's call of a direct MCP tool gets the server's answer, over stdio and over HTTP", async () => {
    const http = await startMcpHttpServer({ token: "s3cret" });
    https.push(http);
    const results: Record<string, unknown> = {};
    for (const impl of IMPLS) {
      fx.server.enqueue(
        {
          toolCalls: [
            { id: "c1", name: "mcp__probe__echo", arguments: { text: "hello" } },
            { id: "c2", name: "mcp__web__add", arguments: { a: 2, b: 3 } },
          ],
        },
        { text: "done" },
      );
      const { w } = startWithMcp(impl, http);
      await w.request({ type: "prompt", message: "use the tools" });
      await w.event("agent_settled", 30_000);
      // The two calls run in parallel: their ends come in the order they finish.
      results[impl] = toolResults(w).sort((a, b) => a.name.localeCompare(b.name));
      const declared = fx.server.requests
        .at(-2)
        ?.body.tools.map((t: { function: { name: string } }) => t.function.name);
      expect(declared).toEqual(expect.arrayContaining(["mcp__probe__echo", "mcp__web__add", "mcp__web__pid"]));
    }
    expect(results.ours).toEqual(results.upstream);
    expect(results.ours).toEqual([
      { name: "mcp__probe__echo", text: "echo: hello", isError: false },
      { name: "mcp__web__add", text: "5", isError: false },
    ]);
  });

  it("a server that crashes mid-call is an error naming it, the next call reconnects, and nothing of it outlives the worker", async () => {
    const seen: Record<string, { results: ReturnType<typeof toolResults>; pids: number[] }> = {};
    for (const impl of IMPLS) {
      fx.server.enqueue(
        { toolCalls: [{ id: "p1", name: "mcp__probe__pid", arguments: {} }] },
        { toolCalls: [{ id: "s1", name: "mcp__probe__spawn_sleeper", arguments: {} }] },
        { toolCalls: [{ id: "x1", name: "mcp__probe__crash", arguments: {} }] },
        { toolCalls: [{ id: "p2", name: "mcp__probe__pid", arguments: {} }] },
        { toolCalls: [{ id: "s2", name: "mcp__probe__spawn_sleeper", arguments: {} }] },
        { text: "done" },
      );
      const { w } = startWithMcp(impl);
      await w.request({ type: "prompt", message: "crash it" });
      await w.event("agent_settled", 30_000);
      const results = toolResults(w);
      const pids = [results[0], results[1], results[3], results[4]].map((r) => Number(r?.text));
      for (const pid of pids) leftovers.add(pid);
      // The worker answers after the crash: it lives.
      expect((await w.request({ type: "get_state" })).success).toBe(true);
      w.closeStdin();
      await w.exited;
      const gone = await Promise.all(pids.map((pid) => waitForExit(pid, impl === "ours" ? 5_000 : 1_000)));
      // Deliberately better than pi 1.6.0, which leaves what the crashed server started
      // running (the sleeper, pids[1]): ours takes a dropped server's process group down.
      expect({ impl, gone }).toEqual({ impl, gone: [true, impl === "ours", true, true] });
      seen[impl] = { results, pids };
    }
    for (const impl of IMPLS) {
      const { results, pids } = seen[impl]!;
      expect(results.map((r) => [r.name, r.isError])).toEqual([
        ["mcp__probe__pid", false],
        ["mcp__probe__spawn_sleeper", false],
        ["mcp__probe__crash", true],
        ["mcp__probe__pid", false],
        ["mcp__probe__spawn_sleeper", false],
      ]);
      // A new server process answered after the crash.
      expect(pids[2]).not.toBe(pids[0]);
    }
    expect(seen.ours!.results[2]!.text).toContain('MCP server "probe"');
    expect(seen.ours!.results[2]!.text).toContain("probe: crashing on purpose");
    expect(seen.upstream!.results[2]!.text).toBe("MCP connection closed");
  });

  it("--no-mcp leaves MCP out: no server starts, no mcp__ tool is declared", async () => {
    for (const impl of IMPLS) {
      fx.server.enqueue({ text: "nothing to call" });
      const marker = fx.dir(`mcp-nomcp-${impl}-`);
      const { w } = startOracle(impl, fx.server, fx.dirs, {
        pi: "1.6.0",
        args: ["-e", "builtin:mcp", "--no-mcp"],
        prepare: (home) => {
          // A server that would leave a file if it ever started.
          writeFileSync(
            join(home, "mcp.json"),
            JSON.stringify({
              mcpServers: {
                probe: { command: "sh", args: ["-c", `touch ${marker}/started; sleep 5`], exposure: "direct" },
              },
            }),
          );
        },
      });
      await w.request({ type: "prompt", message: "hi" });
      await w.event("agent_settled", 30_000);
      const declared = fx.server.requests
        .at(-1)
        ?.body.tools?.map((t: { function: { name: string } }) => t.function.name);
      expect({ impl, mcp: (declared ?? []).filter((n: string) => n.startsWith("mcp__")) }).toEqual({ impl, mcp: [] });
      expect({ impl, started: existsSync(join(marker, "started")) }).toEqual({ impl, started: false });
    }
  });

  it("a server that fails to start is one notice naming it, and the worker goes on", async () => {
    const notices: Record<string, string> = {};
    for (const impl of IMPLS) {
      fx.server.enqueue({ text: "fine" });
      const { w } = startOracle(impl, fx.server, fx.dirs, {
        pi: "1.6.0",
        args: ["-e", "builtin:mcp"],
        prepare: (home) => {
          writeMcpJson(home, undefined, { PROBE_FAIL_START: "on purpose" });
        },
      });
      const notice = await w.waitFor(
        (l) =>
          l.type === "extension_ui_request" && l.method === "notify" && /MCP servers need attention/.test(l.message),
        30_000,
      );
      notices[impl] = notice.message;
      await w.request({ type: "prompt", message: "still there?" });
      await w.event("agent_settled", 30_000);
    }
    const firstLines = (m: string) => m.split("\n").slice(0, 2);
    expect(firstLines(notices.ours!)).toEqual(firstLines(notices.upstream!));
    expect(notices.ours).toContain("probe: failed: MCP connection closed");
  });

  it("an extension's servers connect like configured ones; later changes fire mcp_servers_change", async () => {
    const seen: Record<string, unknown> = {};
    for (const impl of IMPLS) {
      const dir = fx.dir(`mcp-ext-${impl}-`);
      const extension = join(dir, "servers.ts");
      writeFileSync(extension, EXTENSION);
      fx.server.enqueue(
        { toolCalls: [{ id: "e1", name: "mcp__ext__echo", arguments: { text: "x" } }] },
        { text: "one" },
        { toolCalls: [{ id: "l1", name: "mcp__late__echo", arguments: { text: "y" } }] },
        { text: "two" },
        { text: "three" },
      );
      const { w } = startOracle(impl, fx.server, fx.dirs, {
        pi: "1.6.0",
        args: ["-e", "builtin:mcp", "-e", extension],
      });
      const notices = () =>
        w.received.filter((l) => l.type === "extension_ui_request" && l.method === "notify").map((l) => l.message);
      const settle = async (message: string) => {
        const from = w.received.length;
        await w.request({ type: "prompt", message });
        await w.waitFor((l) => l.type === "agent_settled", 30_000, from);
      };
      await settle("call ext");
      await w.request({ type: "prompt", message: "/add-late" });
      await w.waitFor((l) => l.type === "extension_ui_request" && /^late:/.test(l.message ?? ""), 30_000);
      await settle("call late");
      await w.request({ type: "prompt", message: "/drop-ext" });
      await w.waitFor((l) => l.type === "extension_ui_request" && l.message === "change: late", 30_000);
      await settle("last");
      const declared = fx.server.requests
        .at(-1)
        ?.body.tools.map((t: { function: { name: string } }) => t.function.name)
        .filter((n: string) => n.startsWith("mcp__"));
      seen[impl] = { results: toolResults(w), notices: notices(), declared };
    }
    expect(seen.ours).toEqual(seen.upstream);
    expect(seen.ours).toMatchObject({
      results: [
        { name: "mcp__ext__echo", text: "echo: x", isError: false },
        { name: "mcp__late__echo", text: "echo: y", isError: false },
      ],
      notices: ["change: ext,late", "late: true; servers: ext,late", "change: late"],
    });
    expect((seen.ours as { declared: string[] }).declared).not.toContain("mcp__ext__echo");
    expect((seen.ours as { declared: string[] }).declared).toContain("mcp__late__echo");
  });
});

describe.skipIf(!PI16.installed)("/mcp, ours and pi 1.6.0", () => {
  it("prints each server's state, reconnects one, and names a server it does not know", async () => {
    const seen: Record<string, string[]> = {};
    for (const impl of IMPLS) {
      const { w } = startOracle(impl, fx.server, fx.dirs, {
        pi: "1.6.0",
        args: ["-e", "builtin:mcp"],
        prepare: (home) =>
          writeFileSync(
            join(home, "mcp.json"),
            JSON.stringify({
              mcpServers: {
                probe: { command: process.execPath, args: [PROBE], exposure: "direct" },
                broken: { command: process.execPath, args: [PROBE], env: { PROBE_FAIL_START: "on purpose" } },
                off: { command: process.execPath, args: [PROBE], enabled: false },
              },
            }),
          ),
      });
      const notices: string[] = [];
      for (const command of ["/mcp", "/mcp reconnect probe", "/mcp reconnect nosuch", "/mcp frob x y"]) {
        const from = w.received.length;
        await w.request({ type: "prompt", message: command });
        const notice = await w.waitFor(
          // Not the start-up notices (a failed server; tools nothing can reach), which come when they come.
          (l) =>
            l.type === "extension_ui_request" &&
            l.method === "notify" &&
            !/need attention|only reachable|cannot be called/.test(l.message),
          30_000,
          from,
        );
        notices.push(notice.message);
      }
      seen[impl] = notices;
    }
    expect(seen.ours).toEqual(seen.upstream);
    expect(seen.ours![0]).toBe(
      [
        "probe: connected, 6 tools (direct)",
        "broken: failed (codemode)",
        "    MCP connection closed",
        "    probe: refusing to start (on purpose)",
        "off: disabled (codemode)",
      ].join("\n"),
    );
    expect(seen.ours![1]).toBe('Reconnected to MCP server "probe" (connected · 6 tools).');
  });
});

/** An extension with a server of its own, one it adds later (/add-late) and the removal of the first (/drop-ext). */
const EXTENSION = `
const PROBE = ${JSON.stringify(PROBE)};
const server = (name: string) => ({ command: process.execPath, args: [PROBE], exposure: "direct", env: { PROBE_NAME: name } });
export default function (pi: any) {
  pi.registerMcpServer("ext", server("ext"));
  pi.on("mcp_servers_change", (event: any, ctx: any) => {
    ctx.ui.notify("change: " + event.servers.map((s: any) => s.name).join(","), "info");
  });
  pi.registerCommand("add-late", {
    handler: async (_args: string, ctx: any) => {
      pi.registerMcpServer("late", server("late"));
      const has = () => pi.getAllTools().some((t: any) => t.name === "mcp__late__echo");
      for (let i = 0; i < 400 && !has(); i++) await new Promise((r) => setTimeout(r, 50));
      ctx.ui.notify("late: " + has() + "; servers: " + pi.getMcpServers().map((s: any) => s.name).join(","), "info");
    },
  });
  pi.registerCommand("drop-ext", { handler: async () => pi.unregisterMcpServer("ext") });
}
`;
