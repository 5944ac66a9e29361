/**
 * A real streamable-HTTP MCP server for tests, on 127.0.0.1 with the official SDK's server
 * transport: every session gets its own probe server (test/support/mcp-probe-server.mjs).
 * With `token`, requests without `Authorization: Bearer <token>` are answered 401, as a
 * server that wants a sign-in answers.
 */
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createProbeServer } from "./mcp-probe-server.mjs";

/** The running server. */
export interface McpHttpServer {
  /** The MCP endpoint, `http://127.0.0.1:PORT/mcp`. */
  url: string;
  /** The Authorization header of every request received. */
  authorizations: (string | undefined)[];
  close(): Promise<void>;
}

/** Start a server whose probe tools are named for `name`; with `token`, only that bearer token gets in. */
export async function startMcpHttpServer(options: { name?: string; token?: string } = {}): Promise<McpHttpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const authorizations: (string | undefined)[] = [];
  const http = createServer(async (req: IncomingMessage, res) => {
    authorizations.push(req.headers.authorization);
    if (options.token !== undefined && req.headers.authorization !== `Bearer ${options.token}`) {
      res.writeHead(401, { "content-type": "application/json" }).end('{"error":"unauthorized"}');
      return;
    }
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? sessions.get(id) : undefined;
    if (!transport) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => {
          sessions.set(sid, created);
        },
      });
      created.onclose = () => {
        if (created.sessionId) sessions.delete(created.sessionId);
      };
      await createProbeServer(options.name ?? "web").connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res);
  });
  http.listen(0, "127.0.0.1");
  await once(http, "listening");
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    authorizations,
    async close() {
      await Promise.all([...sessions.values()].map((t) => t.close().catch(() => undefined)));
      http.closeAllConnections();
      http.close();
      await once(http, "close").catch(() => undefined);
    },
  };
}
