/**
 * MCP on our worker alone, where there is nothing of pi 1.6.0's to compare: the faux model
 * (`--faux-script`) calling a direct MCP tool of a real stdio server written with the SDK,
 * and what this worker refuses with a message that says what to do: OAuth sign-in (a server
 * answering 401 without a configured Authorization header, `pi mcp login`) and a `${VAR}`
 * that is not set.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { startMcpHttpServer, type McpHttpServer } from "../support/mcp-http-server.js";
import { killAllWorkers, PI_BIN, RpcWorker, tempDir } from "../support/rpc-worker.js";

const PROBE = resolve(import.meta.dirname, "../support/mcp-probe-server.mjs");
const dirs: { cleanup: () => void }[] = [];
const https: McpHttpServer[] = [];
afterEach(async () => {
  await killAllWorkers();
  await Promise.all(https.splice(0).map((s) => s.close()));
  for (const d of dirs.splice(0)) d.cleanup();
});

function folders(): { home: string; project: string } {
  const home = tempDir("mcp-worker-home-");
  const project = tempDir("mcp-worker-project-");
  dirs.push(home, project);
  return { home: home.path, project: project.path };
}

function mcpJson(home: string, servers: Record<string, unknown>): void {
  writeFileSync(join(home, "mcp.json"), JSON.stringify({ mcpServers: servers }));
}

describe("MCP on our worker", () => {
  it("the faux model's call of a direct MCP tool returns the server's answer", async () => {
    const { home, project } = folders();
    mcpJson(home, { probe: { command: process.execPath, args: [PROBE], exposure: "direct" } });
    const script = join(home, "script.json");
    writeFileSync(
      script,
      JSON.stringify([
        { toolCalls: [{ name: "mcp__probe__add", arguments: { a: 40, b: 2 } }] },
        { toolCalls: [{ name: "mcp__probe__fail", arguments: {} }] },
        { text: "done" },
      ]),
    );
    const w = new RpcWorker(["--mode", "rpc", "--provider", "faux", "--faux-script", script, "--no-session"], {
      cwd: project,
      env: { PI_ORCH_HOME: home },
    });
    await w.request({ type: "prompt", message: "add" });
    await w.event("agent_settled", 30_000);
    const ends = w.received.filter((l) => l.type === "tool_execution_end");
    expect(ends.map((e) => [e.toolName, e.result.content[0].text, e.isError])).toEqual([
      ["mcp__probe__add", "42", false],
      ["mcp__probe__fail", "the probe failed on purpose", true],
    ]);
    expect(ends[0]!.result.details).toEqual({ server: "probe", tool: "add" });
  });

  it("refuses OAuth with a message naming it and what to do instead", async () => {
    const http = await startMcpHttpServer({ token: "s3cret" });
    https.push(http);
    const { home, project } = folders();
    mcpJson(home, { web: { url: http.url, exposure: "direct" } });
    const run = (args: string[]) =>
      execa(process.execPath, [PI_BIN, "mcp", ...args], { cwd: project, env: { PI_ORCH_HOME: home }, reject: false });
    const list = await run(["list"]);
    expect(list.exitCode).toBe(1);
    expect(list.stdout).toContain("web: failed (direct, global)");
    expect(list.stdout).toContain('MCP server "web" asks for a sign-in (HTTP 401), and OAuth sign-in is not supported');
    expect(list.stdout).toContain("--bearer-token-env-var");
    const login = await run(["login", "web"]);
    expect(login.exitCode).toBe(1);
    expect(login.stderr).toContain("OAuth sign-in is not supported by this worker");

    const w = new RpcWorker(["--mode", "rpc", "--provider", "faux", "--no-session"], {
      cwd: project,
      env: { PI_ORCH_HOME: home },
    });
    const notice = await w.waitFor((l) => l.type === "extension_ui_request" && l.method === "notify", 30_000);
    expect(notice.message).toContain("web: failed:");
    expect(notice.message).toContain("OAuth sign-in is not supported");
    expect((await w.request({ type: "get_state" })).success).toBe(true);
  });

  it("a header variable that is not set fails that server with the variable's name; a set one gets it in", async () => {
    const http = await startMcpHttpServer({ token: "s3cret" });
    https.push(http);
    const { home, project } = folders();
    mcpJson(home, { web: { url: http.url, headers: { Authorization: "Bearer ${WEB_TOKEN}" } } });
    const list = (env: NodeJS.ProcessEnv) =>
      execa(process.execPath, [PI_BIN, "mcp", "list"], {
        cwd: project,
        env: { PI_ORCH_HOME: home, WEB_TOKEN: undefined, ...env },
        extendEnv: true,
        reject: false,
      });
    const unset = await list({});
    expect(unset.exitCode).toBe(1);
    expect(unset.stdout).toContain(
      'Failed to resolve MCP server "web" header "Authorization" from environment variable: WEB_TOKEN',
    );
    const set = await list({ WEB_TOKEN: "s3cret" });
    expect(set.exitCode).toBe(0);
    expect(set.stdout).toContain("web: connected, 6 tools (codemode, global)");
    expect(http.authorizations).toContain("Bearer s3cret");
  });

  it("--no-extensions and a -builtin:mcp setting keep every server from starting; -e builtin:mcp brings MCP back", async () => {
    const { home, project } = folders();
    const marker = join(project, "started");
    mcpJson(home, { probe: { command: "sh", args: ["-c", `touch ${marker}; sleep 5`], exposure: "direct" } });
    const ask = async (args: string[], settings?: object) => {
      writeFileSync(join(home, "settings.json"), JSON.stringify(settings ?? {}));
      const w = new RpcWorker(["--mode", "rpc", "--provider", "faux", "--no-session", ...args], {
        cwd: project,
        env: { PI_ORCH_HOME: home },
      });
      await w.request({ type: "prompt", message: "hi" });
      await w.event("agent_settled", 30_000);
      w.closeStdin();
      await w.exited;
      return existsSync(marker);
    };
    expect(await ask(["--no-extensions"])).toBe(false);
    expect(await ask([], { extensions: ["-builtin:mcp"] })).toBe(false);
    // The first prompt waited for the server, which wrote the marker as it started.
    expect(await ask(["--no-extensions", "-e", "builtin:mcp"])).toBe(true);
  });

  it("a server of codemode exposure (pi's default) switches codemode on, whose scripts call its tools", async () => {
    const { home, project } = folders();
    mcpJson(home, { probe: { command: process.execPath, args: [PROBE] } });
    const script = join(home, "script.json");
    const code = "const r = await tools.mcp__probe__add({ a: 1, b: 2 });\nreturn r.content[0].text;";
    writeFileSync(
      script,
      JSON.stringify([{ toolCalls: [{ name: "codemode", arguments: { code } }] }, { text: "done" }]),
    );
    const w = new RpcWorker(["--mode", "rpc", "--provider", "faux", "--faux-script", script, "--no-session"], {
      cwd: project,
      env: { PI_ORCH_HOME: home },
    });
    await w.request({ type: "prompt", message: "add" });
    await w.event("agent_settled", 30_000);
    const ends = w.received.filter((l) => l.type === "tool_execution_end");
    expect(ends.map((e) => [e.toolName, e.parentToolCallId !== undefined, e.result.content.at(-1).text])).toEqual([
      ["mcp__probe__add", true, "3"],
      ["codemode", false, "3"],
    ]);
  });

  it("without builtin:codemode, tool_search reaches a server of codemode exposure", async () => {
    const { home, project } = folders();
    mcpJson(home, { probe: { command: process.execPath, args: [PROBE] } });
    const script = join(home, "script.json");
    writeFileSync(
      script,
      JSON.stringify([
        { toolCalls: [{ name: "tool_search", arguments: { query: "add two numbers", limit: 1 } }] },
        { toolCalls: [{ name: "mcp__probe__add", arguments: { a: 1, b: 2 } }] },
        { text: "done" },
      ]),
    );
    const w = new RpcWorker(
      [
        ...["--mode", "rpc", "--provider", "faux", "--faux-script", script, "--no-session"],
        ...["--no-extensions", "-e", "builtin:mcp", "-e", "builtin:tool-search"],
      ],
      { cwd: project, env: { PI_ORCH_HOME: home } },
    );
    await w.request({ type: "prompt", message: "add" });
    await w.event("agent_settled", 30_000);
    const ends = w.received.filter((l) => l.type === "tool_execution_end");
    expect(ends.map((e) => [e.toolName, e.result.content[0].text])).toEqual([
      ["tool_search", "Loaded 1 tool. They are available from your next call:\n- mcp__probe__add: Add two numbers"],
      ["mcp__probe__add", "3"],
    ]);
    expect(w.received.some((l) => l.type === "extension_ui_request" && /cannot be called/.test(l.message ?? ""))).toBe(
      false,
    );
  });
});
