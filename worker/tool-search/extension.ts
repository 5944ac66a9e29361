/**
 * `builtin:tool-search`: pi 1.6.0's `tool_search` tool. Registered inactive; `--tools
 * +tool_search` turns it on, and `builtin:mcp` does when a server's tools are not declared
 * to the model. It ranks the registered tools of `deferred` exposure that are not active
 * yet (an MCP server's, most often) and activates the best ones, so the next model request
 * declares them.
 */
import * as Type from "typebox/type";
import type { ExtensionToolResult } from "../extensions/types.js";
import { rankTools, searchDocument } from "./ranker.js";

/** The tool's name, which `builtin:mcp` activates. */
export const TOOL_SEARCH_TOOL_NAME = "tool_search";
/** The path `builtin:tool-search` registers under. */
export const TOOL_SEARCH_EXTENSION_PATH = "builtin:tool-search";
const DEFAULT_LIMIT = 8;

/** pi 1.6.0's description: it lists no tools, so it stays the same while servers connect. */
const DESCRIPTION = `# Tool discovery\n\nSearches over deferred tool metadata with BM25 and exposes matching tools for the next model call.\n\nSome of the tools, such as tools of MCP servers, may not have been provided to you upfront, and you should use this tool (\`${TOOL_SEARCH_TOOL_NAME}\`) to search for the required tools. For MCP tool discovery, always use \`${TOOL_SEARCH_TOOL_NAME}\`.`;

const Parameters = Type.Object({
  query: Type.String({ description: "Search query for deferred tools." }),
  limit: Type.Optional(
    Type.Number({ description: `Maximum number of tools to return. Defaults to ${DEFAULT_LIMIT}.` }),
  ),
});

interface ToolInfo {
  name: string;
  description: string;
  parameters: unknown;
  exposure?: string;
  namespace?: { name: string; description?: string; instructions?: string };
}

/** The part of `pi` the tool uses. */
interface SearchPi {
  registerTool(tool: Record<string, unknown>): void;
  getActiveTools(): string[];
  getAllTools(): ToolInfo[];
  setActiveTools(names: string[]): void;
}

/** The factory of `builtin:tool-search`. */
export function toolSearchExtension(api: Record<string, unknown>): void {
  const pi = api as unknown as SearchPi;
  pi.registerTool({
    name: TOOL_SEARCH_TOOL_NAME,
    label: TOOL_SEARCH_TOOL_NAME,
    description: DESCRIPTION,
    promptSnippet: "Search for tools that are not loaded yet and load the matches",
    parameters: Parameters,
    exposure: "model-only",
    defaultActive: false,
    async execute(_id: string, params: { query: string; limit?: number }): Promise<ExtensionToolResult> {
      if (params.query.trim() === "") throw new Error("query must not be empty");
      const limit = params.limit ?? DEFAULT_LIMIT;
      if (!Number.isInteger(limit) || limit <= 0) throw new Error("limit must be a positive integer");
      const active = pi.getActiveTools();
      const candidates = pi.getAllTools().filter((t) => t.exposure === "deferred" && !active.includes(t.name));
      const matches = rankTools(
        params.query,
        candidates.map((t) => searchDocument(t, t.namespace)),
        limit,
      );
      if (matches.length > 0) pi.setActiveTools([...active, ...matches.map((m) => m.name)]);
      const loaded = matches.map((m) => ({
        name: m.name,
        description: candidates.find((t) => t.name === m.name)?.description ?? "",
      }));
      const text =
        loaded.length === 0
          ? "No matching tools found."
          : `Loaded ${loaded.length} tool${loaded.length === 1 ? "" : "s"}. They are available from your next call:\n${loaded
              .map((t) => `- ${t.name}: ${t.description.trim().split(/\r?\n/)[0]}`)
              .join("\n")}`;
      return { content: [{ type: "text", text }], details: { loaded: loaded.map((t) => t.name) } };
    },
  });
}
