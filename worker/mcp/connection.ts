/**
 * One MCP server's connection, on the official SDK's `Client`: stdio servers through our
 * process-group transport, HTTP servers through the SDK's streamable HTTP transport with
 * the configured headers (`${VAR}` expanded). A server that fails to start is `failed`
 * with its error and the tail of its stderr; one that drops is `disconnected` and the next
 * call connects again, as pi 1.6.0 does. Nothing here throws past a call: the worker goes
 * on whatever a server does. Loaded only when a server is to connect (it pulls in the SDK).
 *
 * OAuth is not supported: a server with an `oauth` entry, or one that answers 401 without
 * an `Authorization` header configured, fails with a message saying so and what to do.
 */
import { homedir } from "node:os";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolResult,
  ErrorCode,
  ListRootsRequestSchema,
  McpError,
  type Tool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { toolEnv } from "../tools/tool-env.js";
import type { McpServerEntry } from "./config.js";
import { resolveRecord } from "./config-value.js";
import { GroupStdioTransport } from "./stdio-transport.js";

/** Where a connection stands. */
export type McpConnectionState = "connecting" | "connected" | "failed" | "disconnected" | "closed";

/** What a connection reports to its owner. */
export interface McpConnectionOptions {
  entry: McpServerEntry;
  /** The session's folder: a stdio server's relative `cwd` and the client's root. */
  cwd: string;
  /** The tool list arrived or changed. */
  onTools: (connection: McpConnection) => void;
  /** The state changed (connected, failed, dropped). */
  onChange?: (connection: McpConnection) => void;
}

const DEFAULT_TIMEOUT_SECONDS = 60;
/** Delays between attempts to reach an HTTP server that failed with a transient error. */
const CONNECT_RETRY_DELAYS_MS = [250, 1_000];

function errorMessage(error: unknown): string {
  // pi 1.6.0's words for a server that exited or hung up: the SDK says "MCP error -32000: Connection closed".
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) return "MCP connection closed";
  return error instanceof Error ? error.message : String(error);
}

/** Network failures and overloaded or restarting HTTP servers, worth another attempt. */
function isTransient(error: unknown): boolean {
  if (error instanceof StreamableHTTPError)
    return (
      error.code === 408 || error.code === 429 || (error.code !== undefined && error.code >= 500 && error.code !== 501)
    );
  return error instanceof TypeError;
}

/** `~` and `~/…` name the home folder, as in a shell. */
function expandHome(value: string): string {
  if (value === "~") return homedir();
  return value.startsWith("~/") ? join(homedir(), value.slice(2)) : value;
}

function hasAuthorizationHeader(entry: McpServerEntry): boolean {
  return (
    "url" in entry.config && Object.keys(entry.config.headers ?? {}).some((h) => h.toLowerCase() === "authorization")
  );
}

/** The message for a server that needs an OAuth sign-in, which this worker does not do. */
function oauthRefusal(entry: McpServerEntry, why: string): Error {
  return new Error(
    `MCP server "${entry.name}" ${why}, and OAuth sign-in is not supported by this worker. ` +
      `Give it an "Authorization" header in ${entry.source} (for example: pi mcp add ${entry.name} --url URL --bearer-token-env-var TOKEN_VAR), or sign in with pi 1.6 and pass the token that way.`,
  );
}

/** One configured server; reconnects on the next call after it dropped. */
export class McpConnection {
  state: McpConnectionState = "connecting";
  /** Why the server failed or dropped, with the tail of its stderr. */
  error: string | undefined;
  tools: Tool[] = [];
  /** Whether the server offers resources. */
  hasResources = false;
  /** The server's `instructions` from `initialize`. */
  instructions: string | undefined;
  private client: Client | undefined;
  private transport: Transport | undefined;
  private opening: Promise<Client> | undefined;
  private readonly shutdown = new AbortController();

  constructor(private readonly options: McpConnectionOptions) {}

  get name(): string {
    return this.options.entry.name;
  }

  get entry(): McpServerEntry {
    return this.options.entry;
  }

  /** The server process's pid while a stdio server runs. */
  get pid(): number | undefined {
    return this.transport instanceof GroupStdioTransport ? this.transport.pid : undefined;
  }

  private get timeoutMs(): number {
    return (this.options.entry.config.timeout ?? DEFAULT_TIMEOUT_SECONDS) * 1000;
  }

  /** The connected client, connecting first when there is none; rejects with why it could not. */
  getClient(): Promise<Client> {
    if (this.shutdown.signal.aborted) return Promise.reject(new Error(`MCP server "${this.name}" is shut down`));
    if (this.client) return Promise.resolve(this.client);
    this.opening ??= this.open().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  /**
   * Call a tool of the server. A session the HTTP server no longer knows (404) is opened
   * again once: the server did not run the call. Other failures are not retried, since the
   * server may have run it.
   */
  async callTool(
    tool: string,
    args: Record<string, unknown>,
    options: { signal?: AbortSignal; onProgress?: (message: string) => void } = {},
  ): Promise<CallToolResult> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.getClient();
      try {
        return (await client.callTool({ name: tool, arguments: args }, undefined, {
          signal: options.signal,
          timeout: this.timeoutMs,
          resetTimeoutOnProgress: true,
          onprogress: (p) =>
            options.onProgress?.(p.message ?? `Progress ${p.progress}${p.total === undefined ? "" : `/${p.total}`}`),
        })) as CallToolResult;
      } catch (error) {
        if (attempt === 1 && error instanceof StreamableHTTPError && error.code === 404) {
          await this.drop(client);
          continue;
        }
        if (this.client !== client && this.state === "disconnected")
          throw new Error(
            `MCP server "${this.name}" disconnected during the call of "${tool}": ${this.error ?? errorMessage(error)}\nIt reconnects on the next call.`,
          );
        throw new Error(`MCP server "${this.name}" tool "${tool}" failed: ${errorMessage(error)}`);
      }
    }
  }

  /** Connect again (`/mcp reconnect`): the old client and its server go first. */
  async reconnect(): Promise<void> {
    await this.opening?.catch(() => undefined);
    if (this.client) await this.drop(this.client);
    await this.transport?.close().catch(() => undefined);
    await this.getClient();
  }

  /** Close the connection for good; resolves once the server's process group is gone. */
  async close(): Promise<void> {
    this.shutdown.abort();
    this.state = "closed";
    const client = this.client;
    this.client = undefined;
    await Promise.all([client?.close().catch(() => undefined), this.opening?.catch(() => undefined)]);
    await this.transport?.close().catch(() => undefined);
    this.changed();
  }

  private changed(): void {
    this.options.onChange?.(this);
  }

  private async drop(client: Client): Promise<void> {
    if (this.client === client) this.client = undefined;
    await client.close().catch(() => undefined);
  }

  private async open(): Promise<Client> {
    this.state = "connecting";
    this.changed();
    const retries = "url" in this.options.entry.config ? CONNECT_RETRY_DELAYS_MS : [];
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.connectOnce();
      } catch (error) {
        const delay = retries[attempt];
        if (this.shutdown.signal.aborted || delay === undefined || !isTransient(error)) throw this.failed(error);
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  private createTransport(): Transport {
    const { entry, cwd } = this.options;
    const { config, name } = entry;
    if ("url" in config) {
      if (config.oauth) throw oauthRefusal(entry, "is configured for OAuth");
      const headers = resolveRecord(config.headers, `MCP server "${name}" header`);
      return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers } });
    }
    const env = resolveRecord(config.env, `MCP server "${name}" env`);
    return new GroupStdioTransport({
      command: expandHome(config.command),
      args: (config.args ?? []).map(expandHome),
      cwd: resolve(cwd, expandHome(config.cwd ?? ".")),
      env: { ...toolEnv(), ...env },
    });
  }

  private async connectOnce(): Promise<Client> {
    const client = new Client({ name: "pi", version: "1.6.0" }, { capabilities: { roots: {} } });
    const root = { uri: pathToFileURL(this.options.cwd).href, name: basename(this.options.cwd) };
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [root] }));
    const transport = this.createTransport();
    this.transport = transport;
    // close() during the handshake ends it at once rather than after the request timeout.
    const onShutdown = () => void client.close().catch(() => undefined);
    this.shutdown.signal.addEventListener("abort", onShutdown, { once: true });
    try {
      await client.connect(transport, { timeout: this.timeoutMs });
      const tools = client.getServerCapabilities()?.tools ? await this.listTools(client) : [];
      if (this.shutdown.signal.aborted) throw new Error("shut down while connecting");
      client.onclose = () => this.dropped(client, transport);
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => void this.refreshTools(client));
      this.client = client;
      this.tools = tools;
      this.hasResources = client.getServerCapabilities()?.resources !== undefined;
      this.instructions = client.getInstructions()?.trim() || undefined;
      this.state = "connected";
      this.error = undefined;
      this.options.onTools(this);
      this.changed();
      return client;
    } catch (error) {
      await client.close().catch(() => undefined);
      await transport.close().catch(() => undefined);
      throw error;
    } finally {
      this.shutdown.signal.removeEventListener("abort", onShutdown);
    }
  }

  private async listTools(client: Client): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: this.timeoutMs });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  private async refreshTools(client: Client): Promise<void> {
    try {
      const tools = await this.listTools(client);
      if (this.client !== client) return;
      this.tools = tools;
      this.options.onTools(this);
    } catch (error) {
      this.error = `Failed to refresh tools: ${errorMessage(error)}`;
    }
    this.changed();
  }

  /** The connection dropped (the server exited or the HTTP session ended): the next call reconnects. */
  private dropped(client: Client, transport: Transport): void {
    if (this.client !== client || this.shutdown.signal.aborted) return;
    this.client = undefined;
    this.state = "disconnected";
    const stderr = transport instanceof GroupStdioTransport ? transport.stderrTail : "";
    this.error = stderr ? `Connection closed\n${stderr}` : "Connection closed";
    // What the server left running in its group goes with it.
    void transport.close().catch(() => undefined);
    this.changed();
  }

  private failed(error: unknown): Error {
    const { entry } = this.options;
    this.state = this.shutdown.signal.aborted ? "closed" : "failed";
    let message = errorMessage(error);
    if (error instanceof StreamableHTTPError && error.code === 401 && !hasAuthorizationHeader(entry))
      message = oauthRefusal(entry, "asks for a sign-in (HTTP 401)").message;
    const stderr = this.transport instanceof GroupStdioTransport ? this.transport.stderrTail : "";
    this.error = stderr ? `${message}\n${stderr}` : message;
    this.changed();
    return new Error(`MCP server "${entry.name}" failed to connect: ${this.error}`);
  }
}
