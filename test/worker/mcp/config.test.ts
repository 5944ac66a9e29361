/**
 * mcp.json as pi 1.6.0 reads it: entries checked with pi's messages, the project file only
 * when trusted, a project entry replacing a global one, a bare `{enabled:false}` switching
 * one off, and `pi mcp add|remove` edits that keep the rest of the file.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  addServerConfig,
  loadMcpConfig,
  removeServerConfig,
  validateServerConfig,
} from "../../../worker/mcp/config.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function temp(): string {
  const d = mkdtempSync(join(tmpdir(), "mcp-config-"));
  dirs.push(d);
  return d;
}

describe("validateServerConfig", () => {
  it.each([
    ["x y", { command: "a" }, 'invalid server name "x y" (use letters, digits, "_" and "-")'],
    ["s", "nope", 'server "s" must be an object'],
    ["s", {}, 'server "s" needs either "command" (stdio) or "url" (streamable HTTP)'],
    [
      "s",
      { type: "sse", url: "http://x" },
      'server "s": legacy SSE transport is not supported; use the streamable HTTP URL',
    ],
    ["s", { url: "ftp://x" }, 'server "s": url must be an http or https URL'],
    ["s", { command: "a", args: "b" }, 'server "s": args must be an array of strings'],
    ["s", { command: "a", env: { K: 1 } }, 'server "s": env must map names to strings'],
    ["s", { command: "a", timeout: 0 }, 'server "s": timeout must be a positive number of seconds'],
    [
      "s",
      { command: "a", exposure: "loud" },
      'server "s": exposure must be one of "codemode", "deferred", "direct", "hidden"',
    ],
    ["s", { url: "http://x", headers: { A: 2 } }, 'server "s": headers must map names to strings'],
  ])("refuses %s %j: %s", (name, raw, message) => {
    expect(validateServerConfig(name, raw)).toBe(message);
  });

  it("accepts stdio and HTTP entries and reads codemode-deferred as codemode", () => {
    expect(validateServerConfig("a", { command: "npx", args: ["-y", "x"], exposure: "codemode-deferred" })).toEqual({
      command: "npx",
      args: ["-y", "x"],
      exposure: "codemode",
    });
    expect(validateServerConfig("b-2", { type: "http", url: "https://x/mcp", headers: { A: "b" } })).toEqual({
      type: "http",
      url: "https://x/mcp",
      headers: { A: "b" },
    });
  });
});

describe("loadMcpConfig", () => {
  const write = (path: string, value: unknown) => {
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, JSON.stringify(value));
  };

  it("reads the project file only when trusted; its entries replace or override the global ones", () => {
    const home = temp();
    const cwd = temp();
    write(join(home, "mcp.json"), {
      mcpServers: {
        tools: { command: "t", env: { KEY: "${K}" } },
        docs: { url: "https://d/mcp" },
        "a-b": { command: "x" },
      },
    });
    write(join(cwd, ".pi", "mcp.json"), {
      mcpServers: {
        tools: { enabled: false },
        docs: { command: "local-docs" },
        a_b: { command: "y" },
        lonely: { enabled: false },
        extra: { enabled: false, args: ["z"] },
      },
    });
    const untrusted = loadMcpConfig({ home, cwd, trusted: false });
    expect(untrusted.servers.map((s) => s.name)).toEqual(["tools", "docs", "a-b"]);
    expect(untrusted.projectConfig).toBeUndefined();

    const trusted = loadMcpConfig({ home, cwd, trusted: true });
    const byName = Object.fromEntries(trusted.servers.map((s) => [s.name, s]));
    expect(byName.tools).toMatchObject({
      scope: "global",
      override: join(cwd, ".pi", "mcp.json"),
      config: { command: "t", env: { KEY: "${K}" }, enabled: false },
    });
    expect(byName.docs).toMatchObject({ scope: "project", config: { command: "local-docs" } });
    const project = join(cwd, ".pi", "mcp.json");
    expect(trusted.errors).toEqual([
      `${project}: server "a_b" conflicts with "a-b"`,
      `${project}: server "lonely" needs "command" or "url", or a global server to override`,
      `${project}: server "extra" needs "command" or "url", or a global server to override`,
    ]);
  });

  it("reports a broken file and goes on with the other", () => {
    const home = temp();
    const cwd = temp();
    writeFileSync(join(home, "mcp.json"), "{ nope");
    write(join(cwd, ".pi", "mcp.json"), { mcpServers: { ok: { command: "x" } } });
    const loaded = loadMcpConfig({ home, cwd, trusted: true });
    expect(loaded.servers.map((s) => s.name)).toEqual(["ok"]);
    expect(loaded.errors).toHaveLength(1);
    expect(loaded.errors[0]).toContain(join(home, "mcp.json"));
  });
});

describe("addServerConfig and removeServerConfig", () => {
  it("keep the rest of the file and its indentation", () => {
    const path = join(temp(), "sub", "mcp.json");
    expect(addServerConfig(path, "a", { command: "x" })).toBe(false);
    expect(addServerConfig(path, "a", { command: "y" })).toBe(true);
    writeFileSync(
      path,
      JSON.stringify({ other: 1, mcpServers: { a: { command: "y" }, b: { url: "http://b" } } }, null, "\t"),
    );
    expect(removeServerConfig(path, "a")).toBe(true);
    expect(removeServerConfig(path, "a")).toBe(false);
    expect(readFileSync(path, "utf8")).toBe(
      `${JSON.stringify({ other: 1, mcpServers: { b: { url: "http://b" } } }, null, "\t")}\n`,
    );
  });
});
