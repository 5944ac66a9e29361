/**
 * `builtin:codemode`: pi 1.6.0's `codemode` tool. The model writes a short JavaScript
 * program that calls the session's tools (MCP tools too) in parallel, and gets one result.
 * Registered inactive: `--tools +codemode` turns it on, and `builtin:mcp` does when a
 * server's tools have `codemode` exposure (the default). The sandbox (a QuickJS VM in a
 * worker thread) loads on the first script, never at start-up.
 */
import * as Type from "typebox/type";
import type { ExtensionToolResult } from "../extensions/types.js";
import type { CodemodeContext } from "./run.js";

/** The tool's name, which `builtin:mcp` activates. */
export const CODEMODE_TOOL_NAME = "codemode";
/** The path `builtin:codemode` registers under. */
export const CODEMODE_EXTENSION_PATH = "builtin:codemode";

/** pi 1.6.0's description (its `models` API aside, which this worker does not have). */
const DESCRIPTION = [
  `Run JavaScript that calls other tools. The input is raw JavaScript (not JSON, no code fence), run as an async function body in a QuickJS sandbox: top-level \`await\` and \`return\` work. No Node, file system, network, or timers.
- \`await tools.<name>({ ...args })\` resolves to a string, or an object if the tool's declaration says so, and rejects with an Error on failure. A tool whose declaration returns an object resolves on failure too when it returned that object; check its fields. Calls still running when the script ends are cancelled.
- Optional first line: \`// @options: {"max_output_tokens": 10000, "timeout_ms": 60000}\``,
  [
    "Globals:",
    "- `text(value)`, `image(dataUrlOrImageBlock)`, `console.log(...)`, and top-level `return` add output; `exit()` ends the script. With several text items, each starts with a `==> text N/M <==` line, and `console` lines follow the other output in one `<console_output>` block. `image()` also saves the image to a temp file and the result names its path.",
    "- `store(key, value)` and `load(key)` keep JSON values across codemode calls.",
    "- `ALL_TOOLS`, `await searchTools(query, { limit?, namespace? })`, `await describeTool(name)`, `await describeNamespace(name)`: find unlisted tools, such as MCP tools.",
  ].join("\n"),
].join("\n\n");

const Parameters = Type.Object({ code: Type.String({ description: "Raw JavaScript source." }) });

/** The part of `pi` the tool uses. */
interface CodemodePi {
  registerTool(tool: Record<string, unknown>): void;
  appendEntry(customType: string, data?: unknown): void;
}

/** The factory of `builtin:codemode`. */
export function codemodeExtension(api: Record<string, unknown>): void {
  const pi = api as unknown as CodemodePi;
  pi.registerTool({
    name: CODEMODE_TOOL_NAME,
    label: CODEMODE_TOOL_NAME,
    description: DESCRIPTION,
    promptSnippet: "Run JavaScript that calls other tools",
    promptGuidelines: [
      "Use codemode to batch independent tool calls (Promise.allSettled), chain them, or filter large output, instead of many separate calls.",
    ],
    parameters: Parameters,
    // Scripts must not start other scripts.
    exposure: "model-only",
    defaultActive: false,
    async execute(
      toolCallId: string,
      params: { code: string },
      signal: AbortSignal | undefined,
      onUpdate: ((partial: ExtensionToolResult) => void) | undefined,
      ctx: unknown,
    ): Promise<ExtensionToolResult> {
      const { executeCodemode } = await import("./run.js");
      return executeCodemode(toolCallId, params, signal, onUpdate, ctx as CodemodeContext, (type, data) =>
        pi.appendEntry(type, data),
      );
    },
  });
}
