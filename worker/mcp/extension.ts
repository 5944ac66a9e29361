/**
 * `builtin:mcp`, the worker's MCP support as a built-in extension (pi 1.6.0 ships it the
 * same way): at `session_start` it reads `mcp.json` (the project's only when trusted) and
 * the servers extensions registered, connects every enabled one in the background, and
 * registers the tools of `direct` exposure as `mcp__<server>__<tool>`. The first prompt
 * waits up to 10 s for servers with direct tools, so they are in its first request.
 * Problems are told once (a notice, on stderr in print mode); a server that drops
 * reconnects on its next call. The MCP client (the SDK) is loaded only when a server is to
 * connect, so a worker without servers never pays for it.
 *
 * Tools of `deferred` and `codemode` (the default) exposure are registered inactive: the
 * `codemode` tool (worker/codemode) is switched on for servers of `codemode` exposure, and
 * scripts call their tools; `tool_search` is for `deferred` ones, and loads them for the
 * model. Without `builtin:codemode`, `tool_search` reaches `codemode` ones too. Such
 * servers are listed in the system prompt's `mcp_servers` section. With neither
 * (`-ne -e builtin:mcp`) a notice says they cannot be called.
 */
import { existsSync } from "node:fs";
import type { McpServerConfig } from "../../shared/schema/mcp.js";
import type { ExtensionContext, ExtensionToolResult } from "../extensions/types.js";
import { globalMcpConfigPath, loadMcpConfig, projectMcpConfigPath, type McpServerEntry } from "./config.js";
import type { McpConnection } from "./connection.js";
import {
  hasCodemodeTools,
  hasDeferredTools,
  hasDirectTools,
  hasIndirectTools,
  mcpNamespace,
  mcpToolName,
  toolExposure,
} from "./names.js";
import { modelContent } from "./result.js";

/** The path `builtin:mcp` registers under and its errors name. */
export const MCP_EXTENSION_PATH = "builtin:mcp";

/** How long the first prompt waits for servers whose tools are declared to the model. */
const STARTUP_WAIT_MS = 10_000;
/** The tool that loads the tools not declared to the model (worker/tool-search). */
const TOOL_SEARCH = "tool_search";
/** The tool whose scripts call the tools not declared to the model (worker/codemode). */
const CODEMODE = "codemode";
/** Characters of one server's summary, and of the whole `mcp_servers` section (pi 1.6.0's limits). */
const MAX_SUMMARY_CHARS = 250;
const MAX_SECTION_CHARS = 4096;

/** Whether a `mcp.json` exists for this start: then `builtin:mcp` loads even without other extensions. */
export function mcpConfigured(home: string, cwd: string, trusted: boolean): boolean {
  return existsSync(globalMcpConfigPath(home)) || (trusted && existsSync(projectMcpConfigPath(cwd)));
}

interface Server {
  entry: McpServerEntry;
  connection?: McpConnection;
  /** Settles when the latest connection attempt did. */
  ready?: Promise<void>;
  /** The registration it came from (to tell a changed registration), for extension servers. */
  registered?: string;
}

/** The part of pi's `pi` object this extension uses. */
interface McpPi {
  on(event: string, handler: (event: Record<string, unknown>, ctx: ExtensionContext) => unknown): void;
  registerTool(tool: Record<string, unknown>): void;
  getActiveTools(): string[];
  setActiveTools(names: string[]): void;
  getMcpServers(): { name: string; config: McpServerConfig; extensionPath: string }[];
  getAllTools(): { name: string }[];
  registerCommand(
    name: string,
    command: { description?: string; handler(args: string, ctx: ExtensionContext): unknown },
  ): void;
}

function firstLine(text: string): string {
  return text.split("\n", 1)[0] ?? "";
}

/** A server's one line: the first of its `description`, else of the instructions it sent. */
function summaryOf(server: { entry: McpServerEntry; connection?: McpConnection }): string {
  const text = server.entry.config.description?.trim() || server.connection?.instructions?.trim() || "";
  return (text.split("\n", 1)[0] ?? "").trim();
}

/**
 * The system prompt's `mcp_servers` section, as pi 1.6.0 renders it for servers reached
 * through `tool_search`: every enabled server with tools not declared to the model, sorted,
 * with its summary; summaries shrink and the last servers go when it would pass 4 KB.
 */
export function serversSection(
  servers: { entry: McpServerEntry; connection?: McpConnection }[],
  codemode = false,
): string | undefined {
  const listed = servers
    .filter((s) => s.entry.config.enabled !== false && hasIndirectTools(s.entry.config))
    .sort((a, b) => a.entry.name.localeCompare(b.entry.name));
  if (listed.length === 0) return undefined;
  const reaches = listed.map((s) => (codemode && hasCodemodeTools(s.entry.config) ? CODEMODE : TOOL_SEARCH));
  let intro = "MCP servers whose tools are not declared to you.";
  if (reaches.includes(CODEMODE)) intro += " Call the tools of `codemode` servers from codemode scripts.";
  if (reaches.includes(TOOL_SEARCH)) intro += " Load the tools of `tool_search` servers with `tool_search`.";
  const heads = listed.map((s, i) => `- ${mcpNamespace(s.entry.name)} (${reaches[i]})`);
  const omitted = (n: number) =>
    n > 0 ? [`- … ${n} more server${n === 1 ? "" : "s"}; find their tools with tool_search`] : [];
  const size = (kept: number) => [intro, ...heads.slice(0, kept), ...omitted(listed.length - kept)].join("\n").length;
  let kept = listed.length;
  while (kept > 0 && size(kept) > MAX_SECTION_CHARS) kept--;
  const perServer =
    kept === 0 ? 0 : Math.min(MAX_SUMMARY_CHARS, Math.floor((MAX_SECTION_CHARS - size(kept)) / kept) - 2);
  const lines = listed.slice(0, kept).map((s, i) => {
    const full = perServer > 0 ? summaryOf(s) : "";
    const summary =
      full.length <= perServer ? full : perServer <= 1 ? "" : `${full.slice(0, perServer - 1).trimEnd()}…`;
    return summary ? `${heads[i]}: ${summary}` : heads[i];
  });
  return [intro, ...lines, ...omitted(listed.length - kept)].join("\n");
}

/** The JSON schema of a tool's arguments as a provider takes it: always an object schema. */
function inputSchema(schema: unknown): Record<string, unknown> {
  const s = typeof schema === "object" && schema !== null ? (schema as Record<string, unknown>) : {};
  return { ...s, type: "object", properties: s.properties ?? {} };
}

/** What a codemode script gets of an MCP tool's call: its `CallToolResult` less `_meta`. */
const CALL_TOOL_RESULT_SCHEMA = {
  type: "object",
  properties: { content: { type: "array" }, structuredContent: {}, isError: { type: "boolean" } },
  required: ["content"],
  additionalProperties: true,
};

/** How `/mcp` is used, in pi 1.6.0's words. */
const MCP_USAGE = "Usage: /mcp, /mcp login [server], /mcp logout [server], /mcp reconnect [server]";

/**
 * The factory of `builtin:mcp`; `home` is the agent directory (its `mcp.json`). With
 * `command`, it registers `/mcp` (status, reconnect): only when a mcp.json exists or
 * `-e builtin:mcp` asked for it, so a start with other extensions lists the commands it did.
 */
export function mcpExtension(home: string, options: { command: boolean }): (pi: Record<string, unknown>) => void {
  return (api) => {
    const pi = api as unknown as McpPi;
    let servers: Server[] = [];
    let session = new AbortController();
    let cwd = process.cwd();
    let configured: McpServerEntry[] = [];
    let waitedForStartup = false;
    let configErrors: string[] = [];
    /** mcp.json's `autoEnableCodemode` (default true): whether servers of `codemode` exposure switch codemode on. */
    let autoEnableCodemode = true;
    /** Whether this session was told that its MCP tools cannot be reached. */
    let warnedUnreachable = false;
    /** The connections the session started with, settled. */
    let pending: Promise<unknown> = Promise.resolve();
    /** pi tool name → `<server>\0<tool>`, so names stay unique and stable across reconnects. */
    const owners = new Map<string, string>();
    /** The pi tool names each server has registered. */
    const registeredTools = new Map<string, string[]>();
    let runtime: Promise<typeof import("./connection.js")> | undefined;

    const enabled = (s: Server) => s.entry.config.enabled !== false;

    const setActive = (names: string[], on: boolean) => {
      if (names.length === 0) return;
      const active = pi.getActiveTools().filter((n) => !names.includes(n));
      pi.setActiveTools(on ? [...active, ...names] : active);
    };

    const toolFor = (
      connection: McpConnection,
      name: string,
      tool: McpConnection["tools"][number],
      direct: boolean,
    ) => ({
      name,
      label: `${connection.name}/${tool.name}`,
      description: tool.description?.trim() || tool.title || `MCP tool ${tool.name} from server ${connection.name}`,
      parameters: inputSchema(tool.inputSchema),
      exposure: direct ? "direct" : "deferred",
      // A codemode script gets the server's whole CallToolResult (pi 1.6.0), errors included.
      outputSchema: CALL_TOOL_RESULT_SCHEMA,
      namespace: {
        name: mcpNamespace(connection.name),
        aliases: [connection.name],
        description: summaryOf({ entry: connection.entry, connection }),
        ...(connection.instructions ? { instructions: connection.instructions } : {}),
      },
      async execute(
        _id: string,
        params: Record<string, unknown> | undefined,
        signal: AbortSignal | undefined,
        onUpdate: ((partial: ExtensionToolResult) => void) | undefined,
      ): Promise<ExtensionToolResult> {
        const details = { server: connection.name, tool: tool.name };
        const result = await connection.callTool(tool.name, params ?? {}, {
          signal,
          onProgress: (text) => onUpdate?.({ content: [{ type: "text", text }], details }),
        });
        const { content, fullOutputPath } = modelContent(connection.name, tool.name, result);
        const { _meta: _dropped, ...structuredContent } = result as Record<string, unknown>;
        return {
          content,
          details: { ...details, ...(fullOutputPath ? { fullOutputPath } : {}) },
          structuredContent,
          ...(result.isError ? { isError: true } : {}),
        };
      },
    });

    /** Whether `tool_search` is there to load the tools that are not declared. */
    const hasToolSearch = () => pi.getAllTools().some((t) => t.name === TOOL_SEARCH);
    /** Whether the `codemode` tool is there to call them from scripts. */
    const hasCodemode = () => pi.getAllTools().some((t) => t.name === CODEMODE);

    /**
     * Register the server's tools: direct ones active, deferred and codemode ones inactive for
     * `tool_search` to load, hidden ones not at all. Tools it withdrew go inactive.
     */
    const registerTools = (connection: McpConnection) => {
      const server = servers.find((s) => s.connection === connection);
      if (!server || session.signal.aborted) return;
      const names: string[] = [];
      const direct: string[] = [];
      for (const tool of connection.tools) {
        const exposure = toolExposure(server.entry.config, tool.name);
        if (exposure === "hidden") continue;
        const owner = `${connection.name}\0${tool.name}`;
        const known = [...owners].find(([, o]) => o === owner)?.[0];
        const name = known ?? mcpToolName(connection.name, tool.name, (n) => owners.has(n));
        owners.set(name, owner);
        pi.registerTool(toolFor(connection, name, tool, exposure === "direct"));
        names.push(name);
        if (exposure === "direct") direct.push(name);
      }
      const before = registeredTools.get(connection.name) ?? [];
      registeredTools.set(connection.name, names);
      setActive(
        before.filter((n) => !names.includes(n)),
        false,
      );
      setActive(direct, true);
    };

    /**
     * Switch on what reaches the tools not declared, from the config as pi 1.6.0 does:
     * `codemode` for servers of `codemode` exposure, `tool_search` for `deferred` ones (and
     * for `codemode` ones when there is no codemode tool), unless `autoEnableCodemode` is
     * false. The first prompt does not wait for such servers; a search or a script does.
     * When neither ends up active, one warning per session says so, in pi 1.6.0's words.
     */
    const ensureSearch = (ctx: ExtensionContext) => {
      const indirect = servers.filter((s) => enabled(s) && hasIndirectTools(s.entry.config));
      if (indirect.length === 0) return;
      const needsCodemode = indirect.some((s) => hasCodemodeTools(s.entry.config));
      const codemode = needsCodemode && hasCodemode() && autoEnableCodemode;
      const search = indirect.some(
        (s) => hasDeferredTools(s.entry.config) || (!hasCodemode() && hasCodemodeTools(s.entry.config)),
      );
      const active = pi.getActiveTools();
      if (codemode && !active.includes(CODEMODE)) setActive([CODEMODE], true);
      if (search && hasToolSearch() && !active.includes(TOOL_SEARCH)) setActive([TOOL_SEARCH], true);
      const reachable = pi.getActiveTools();
      if (warnedUnreachable || reachable.includes(CODEMODE) || reachable.includes(TOOL_SEARCH)) return;
      warnedUnreachable = true;
      const reason = needsCodemode && hasCodemode() && !autoEnableCodemode ? " (autoEnableCodemode is false)" : "";
      ctx.ui.notify(
        `MCP tools are only reachable from the codemode or tool_search tool, but neither is active${reason}; they cannot be called.`,
        "warning",
      );
    };

    const hideTools = (name: string) => {
      setActive(registeredTools.get(name) ?? [], false);
      registeredTools.delete(name);
    };

    const connect = (server: Server): Promise<void> => {
      runtime ??= import("./connection.js");
      const ready = runtime.then(async ({ McpConnection }) => {
        if (session.signal.aborted) return;
        const connection = new McpConnection({
          entry: server.entry,
          cwd,
          onTools: registerTools,
          onChange: (c) => {
            if (c.state === "disconnected")
              process.stderr.write(
                `pi: MCP server "${c.name}" disconnected: ${firstLine(c.error ?? "")}; it reconnects on the next call\n`,
              );
          },
        });
        server.connection = connection;
        await connection.getClient().catch(() => undefined);
      });
      server.ready = ready;
      return ready;
    };

    const describeProblem = (s: Server): string | undefined =>
      s.connection?.state === "failed" ? `${s.entry.name}: failed: ${firstLine(s.connection.error ?? "")}` : undefined;

    /** One notice for everything that needs the user: config errors and servers that failed. */
    const report = (ctx: ExtensionContext, errors: string[], only: Server[]) => {
      const lines = [...errors.map((e) => `config: ${e}`), ...only.flatMap((s) => describeProblem(s) ?? [])];
      if (lines.length > 0)
        ctx.ui.notify(
          `MCP servers need attention:\n${lines.map((l) => `  ${l}`).join("\n")}\nRun pi mcp list for the full errors.`,
          "warning",
        );
    };

    /** Extension servers, less those a `mcp.json` server of the same namespace overrides. */
    const registeredServers = (): Server[] =>
      pi
        .getMcpServers()
        .filter((r) => !configured.some((c) => mcpNamespace(c.name) === mcpNamespace(r.name)))
        .map((r) => ({
          entry: { name: r.name, config: r.config, source: r.extensionPath, scope: "extension" as const },
          registered: JSON.stringify(r.config),
        }));

    pi.on("session_start", (_event, ctx) => {
      session = new AbortController();
      const { signal } = session;
      cwd = ctx.cwd;
      waitedForStartup = false;
      const trusted = typeof ctx.isProjectTrusted === "function" ? (ctx.isProjectTrusted as () => boolean)() : false;
      const loaded = loadMcpConfig({ home, cwd, trusted });
      configured = loaded.servers;
      configErrors = loaded.errors;
      autoEnableCodemode = loaded.autoEnableCodemode ?? true;
      warnedUnreachable = false;
      servers = [...loaded.servers.map((entry) => ({ entry })), ...registeredServers()];
      ensureSearch(ctx);
      const starting = servers.filter(enabled);
      if (starting.length === 0) {
        report(ctx, loaded.errors, []);
        return;
      }
      // One turn of the event loop first: the start-up answers before the client loads.
      pending = new Promise((r) => setImmediate(r))
        .then(() => Promise.all(starting.map(connect)))
        .then(() => {
          if (!signal.aborted) report(ctx, loaded.errors, starting);
        });
    });

    // The first prompt waits for servers with direct tools, so its request declares them; not
    // forever: a hanging server must not hold the prompt up.
    pi.on("before_agent_start", async (event, ctx) => {
      await waitForDirect(ctx);
      // Every prompt lists the servers as they are when it starts.
      const options = event.systemPromptOptions as { sections?: Record<string, string> } | undefined;
      if (options?.sections) {
        const section = serversSection(servers, hasCodemode());
        if (section) options.sections.mcp_servers = section;
        else delete options.sections.mcp_servers;
      }
    });

    // tool_search ranks every server's tools, and a script may call any: both wait for the
    // servers still connecting.
    pi.on("tool_call", async (event, ctx) => {
      if (event.toolName !== TOOL_SEARCH && event.toolName !== CODEMODE) return;
      const ready = servers.flatMap((s) => (enabled(s) && s.ready ? [s.ready] : []));
      const signal = ctx.signal as AbortSignal | undefined;
      let onAbort: (() => void) | undefined;
      try {
        await Promise.race([
          Promise.all(ready),
          new Promise<void>((r) => {
            onAbort = () => r();
            signal?.addEventListener("abort", onAbort, { once: true });
          }),
        ]);
      } finally {
        // One listener per call on the run's signal would pile up over a long run.
        if (onAbort) signal?.removeEventListener("abort", onAbort);
      }
    });

    const waitForDirect = async (ctx: ExtensionContext) => {
      if (waitedForStartup) return;
      waitedForStartup = true;
      const ready = servers.flatMap((s) => (enabled(s) && hasDirectTools(s.entry.config) && s.ready ? [s.ready] : []));
      if (ready.length === 0) return;
      let timer: NodeJS.Timeout | undefined;
      const finished = await Promise.race([
        Promise.all(ready).then(() => true),
        new Promise<boolean>((r) => {
          timer = setTimeout(() => r(false), STARTUP_WAIT_MS);
        }),
      ]);
      clearTimeout(timer);
      if (!finished)
        ctx.ui.notify("MCP servers are still connecting; their tools become available once connected.", "info");
    };

    // Servers registered or removed during the session connect or close at once, in the
    // background: extension events queue behind a handler, and a connection may take long.
    pi.on("mcp_servers_change", (_event, ctx) => {
      if (session.signal.aborted) return;
      const { signal } = session;
      const next = new Map(registeredServers().map((s) => [s.entry.name, s]));
      const removed = servers.filter(
        (s) => s.entry.scope === "extension" && next.get(s.entry.name)?.registered !== s.registered,
      );
      servers = servers.filter((s) => !removed.includes(s));
      for (const s of removed) hideTools(s.entry.name);
      const added = [...next.values()].filter((s) => !servers.some((o) => o.entry.name === s.entry.name));
      servers.push(...added);
      ensureSearch(ctx);
      const starting = added.filter(enabled);
      void Promise.all(removed.map((s) => s.connection?.close()))
        .then(() => Promise.all(starting.map(connect)))
        .then(() => {
          if (!signal.aborted) report(ctx, [], starting);
        });
    });

    /** `/mcp`'s status, as pi 1.6.0 prints it outside its terminal UI. */
    const formatStatus = () => {
      if (servers.length === 0 && configErrors.length === 0)
        return `No MCP servers configured. Add them to ${globalMcpConfigPath(home)} or .pi/mcp.json.`;
      const lines = servers.map((s) => {
        const c = s.connection;
        const exposure = s.entry.config.exposure ?? "codemode";
        const tools = c?.state === "connected" ? `, ${c.tools.length} tools` : "";
        const state = !enabled(s)
          ? "disabled"
          : c?.state === "disconnected"
            ? "disconnected, reconnects on next call"
            : (c?.state ?? "starting");
        const error = c?.error && c.state !== "connected" ? `\n    ${c.error.split("\n").join("\n    ")}` : "";
        return `${s.entry.name}: ${state}${tools} (${exposure})${error}`;
      });
      for (const e of configErrors) lines.push(`config error: ${e}`);
      return lines.join("\n");
    };

    /** `/mcp reconnect [server]`: the named one, else the only one, else the only failed one, else a choice. */
    const reconnectCommand = async (name: string | undefined, ctx: ExtensionContext) => {
      const candidates = servers.filter((s) => s.connection !== undefined);
      let server: Server | undefined;
      if (name) {
        server = servers.find((s) => s.entry.name === name);
        if (!server) return ctx.ui.notify(`No MCP server named "${name}".`, "error");
        if (!server.connection) return ctx.ui.notify("No enabled MCP server to reconnect.", "error");
      } else {
        if (candidates.length === 0) return ctx.ui.notify("No enabled MCP server to reconnect.", "info");
        const failed = candidates.filter((s) => ["failed", "disconnected"].includes(s.connection?.state ?? ""));
        if (candidates.length === 1) server = candidates[0];
        else if (failed.length === 1) server = failed[0];
        else {
          const choice = await ctx.ui.select(
            "MCP server",
            candidates.map((c) => c.entry.name),
          );
          server = candidates.find((s) => s.entry.name === choice);
        }
      }
      const connection = server?.connection;
      if (!server || !connection) return;
      const ready = connection.reconnect();
      server.ready = ready.catch(() => undefined);
      try {
        await ready;
      } catch (err) {
        return ctx.ui.notify((err as Error).message, "error");
      }
      ensureSearch(ctx);
      const tools = `${connection.tools.length} tool${connection.tools.length === 1 ? "" : "s"}`;
      ctx.ui.notify(`Reconnected to MCP server "${server.entry.name}" (connected · ${tools}).`, "info");
    };

    if (options.command)
      pi.registerCommand("mcp", {
        description: "Manage MCP servers: sign in, reconnect, enable or disable, and change exposure",
        handler: async (args, ctx) => {
          const [action, name, ...extra] = args.trim().split(/\s+/).filter(Boolean);
          if (action === undefined) {
            await pending;
            return ctx.ui.notify(formatStatus(), "info");
          }
          if (extra.length > 0) return ctx.ui.notify(MCP_USAGE, "warning");
          await pending;
          if (action === "reconnect") return reconnectCommand(name, ctx);
          if (action === "login" || action === "logout")
            return ctx.ui.notify(
              `OAuth sign-in is not supported by this worker. Give the server an "Authorization" header (pi mcp add NAME --url URL --bearer-token-env-var TOKEN_VAR), or sign in with pi 1.6.`,
              "error",
            );
          ctx.ui.notify(MCP_USAGE, "warning");
        },
      });

    pi.on("session_shutdown", async () => {
      session.abort();
      const closing = servers;
      servers = [];
      for (const s of closing) hideTools(s.entry.name);
      // A connection still loading the client sees the aborted session and never opens.
      await Promise.all(
        closing.map((s) => (s.connection ? s.connection.close() : s.ready?.then(() => s.connection?.close()))),
      );
    });
  };
}
