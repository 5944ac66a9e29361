/**
 * How MCP tools are named and exposed, as pi 1.6.0 does it: `mcp__<server>__<tool>` with
 * every character but `[A-Za-z0-9_]` made `_` (so the name is also a script identifier),
 * shortened with a hash past the 64 characters providers allow, and each tool's exposure
 * from the server's `toolExposure` (exact names first, then the first matching pattern),
 * else its `exposure` (default `codemode`). Pure.
 */
import { createHash } from "node:crypto";
import type { McpExposure, McpServerConfig } from "../../shared/schema/mcp.js";
import { toolNameMatcher } from "../tools/index.js";

const MAX_TOOL_NAME_LENGTH = 64;

/**
 * `mcp__<server>__<tool>`, sanitized; with a hash suffix when too long or when `isTaken`
 * says another MCP tool already has the name (`a-b` and `a_b` sanitize alike).
 */
export function mcpToolName(server: string, tool: string, isTaken: (name: string) => boolean = () => false): string {
  const name = `mcp__${server}__${tool}`.replace(/[^A-Za-z0-9_]/g, "_");
  if (name.length <= MAX_TOOL_NAME_LENGTH && !isTaken(name)) return name;
  const hash = createHash("sha256").update(`${server}\0${tool}`).digest("hex").slice(0, 8);
  return `${name.slice(0, MAX_TOOL_NAME_LENGTH - hash.length - 1)}_${hash}`;
}

/** A server's namespace, `mcp__<server>` with `-` as `_`: names differing only there are one server. */
export function mcpNamespace(server: string): string {
  return `mcp__${server.replace(/-/g, "_")}`;
}

/** The exposure of one tool of a server. */
export function toolExposure(config: McpServerConfig, tool: string): McpExposure {
  const overrides = config.toolExposure ?? {};
  const exact = overrides[tool];
  if (exact !== undefined) return exact;
  for (const [pattern, exposure] of Object.entries(overrides))
    if (pattern.includes("*") && toolNameMatcher([pattern])(tool)) return exposure;
  return config.exposure ?? "codemode";
}

/** Whether any tool of the server may be declared to the model directly. */
export function hasDirectTools(config: McpServerConfig): boolean {
  return (config.exposure ?? "codemode") === "direct" || Object.values(config.toolExposure ?? {}).includes("direct");
}

/** The exposures a server's config names: its own and its tools' overrides. */
function exposures(config: McpServerConfig): Set<McpExposure> {
  return new Set([config.exposure ?? "codemode", ...Object.values(config.toolExposure ?? {})]);
}

/** Whether some tools of the server are for codemode scripts (pi's default exposure). */
export function hasCodemodeTools(config: McpServerConfig): boolean {
  return exposures(config).has("codemode");
}

/** Whether some tools of the server are loaded by `tool_search`. */
export function hasDeferredTools(config: McpServerConfig): boolean {
  return exposures(config).has("deferred");
}

/** Whether some tools of the server are reached through search (`deferred`, or `codemode`, pi's default). */
export function hasIndirectTools(config: McpServerConfig): boolean {
  const exposures = new Set([config.exposure ?? "codemode", ...Object.values(config.toolExposure ?? {})]);
  return exposures.has("codemode") || exposures.has("deferred");
}
