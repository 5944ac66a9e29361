/**
 * An MCP server entry of `mcp.json` (`{"mcpServers": {NAME: entry}}`), the shape pi 1.6.0 and
 * other MCP clients share: stdio servers (`command`, `args`, `env`, `cwd`), streamable HTTP
 * servers (`url`, `headers`, `oauth`), and pi's `enabled`, `description`, `timeout`,
 * `exposure` and `toolExposure` for both. worker/mcp/config.ts checks a file's entries
 * field by field with pi's messages, then against this schema.
 */
import type { Static } from "typebox";
import * as Type from "typebox/type";

/** How a server's tools reach the model (pi 1.6.0's `exposure`; `codemode-deferred` is read as `codemode`). */
export const McpExposure = Type.Union([
  Type.Literal("codemode"),
  Type.Literal("deferred"),
  Type.Literal("direct"),
  Type.Literal("hidden"),
]);
export type McpExposure = Static<typeof McpExposure>;

const Common = {
  type: Type.Optional(Type.String()),
  enabled: Type.Optional(Type.Boolean()),
  description: Type.Optional(Type.String()),
  /** Per-request timeout in seconds (default 60). */
  timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
  exposure: Type.Optional(McpExposure),
  /** Exposure per tool: exact tool names or `*` patterns. */
  toolExposure: Type.Optional(Type.Record(Type.String(), McpExposure)),
};

/** A server started as a child process, spoken to over its stdin and stdout. */
export const McpStdioServer = Type.Object({
  ...Common,
  command: Type.String(),
  args: Type.Optional(Type.Array(Type.String())),
  env: Type.Optional(Type.Record(Type.String(), Type.String())),
  cwd: Type.Optional(Type.String()),
});
export type McpStdioServer = Static<typeof McpStdioServer>;

/** A streamable HTTP server. `oauth` is kept as written: this worker does not sign in (see worker/mcp/connection.ts). */
export const McpHttpServer = Type.Object({
  ...Common,
  url: Type.String(),
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  oauth: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  auth: Type.Optional(Type.Object({ provider: Type.String() })),
});
export type McpHttpServer = Static<typeof McpHttpServer>;

/** One server entry. */
export const McpServerConfig = Type.Union([McpStdioServer, McpHttpServer]);
export type McpServerConfig = Static<typeof McpServerConfig>;
