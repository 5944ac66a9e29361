/**
 * `@earendil-works/pi-coding-agent` (and `@mariozechner/pi-coding-agent`) for extensions: what pi's documented API and
 * its examples use at run time (tool helpers, built-in tool factories, truncation,
 * the file-mutation queue, conversation helpers), backed by the worker's own code,
 * and headless stand-ins for the terminal components.
 */
import type { AgentMessage } from "../../../shared/schema/messages.js";
import { toLlmMessages } from "../../agent/to-llm.js";
import { withFileLock } from "../../tools/file-queue.js";
import { createBashTool, createLocalBashOperations } from "../../tools/bash.js";
import { createEditTool } from "../../tools/edit.js";
import { createFindTool } from "../../tools/find.js";
import { createGrepTool } from "../../tools/grep.js";
import { createLsTool } from "../../tools/ls.js";
import { createReadTool } from "../../tools/read.js";
import { createWriteTool } from "../../tools/write.js";
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  formatSize,
  truncateHead,
  truncateLine,
  truncateTail,
} from "../../tools/truncate.js";
import type { AgentTool, ToolResult } from "../../types.js";
import { PLAIN_THEME } from "../context.js";

/** The pi version whose extension API this module follows. */
export const PI_API_VERSION = "1.6.0";

/** pi's config folder name: `.pi` in a project, `~/.pi/agent` for the user. */
export const CONFIG_DIR_NAME = ".pi";

/** A read call's line range as pi's tool renderers show it (`:10-19`); "" when the numbers make none. */
export function formatReadLineRange(offset: unknown, limit: unknown): string {
  const num = (v: unknown) => {
    const n = typeof v === "string" && v.trim() !== "" ? Number(v) : v;
    return typeof n === "number" && Number.isFinite(n) ? n : undefined;
  };
  if (offset == null && limit == null) return "";
  const start = offset == null ? 1 : num(offset);
  if (start === undefined) return "";
  if (limit == null) return `:${start}`;
  const count = num(limit);
  if (count === undefined) return "";
  const end = start + count - 1;
  return `:${start}${end ? `-${end}` : ""}`;
}

/** Tool factories taking pi's options (`operations` of all seven, bash's `spawnHook` and `commandPrefix`). */
const FACTORIES: Record<string, (options: never) => AgentTool> = {
  read: createReadTool as (options: never) => AgentTool,
  bash: createBashTool as (options: never) => AgentTool,
  edit: createEditTool as (options: never) => AgentTool,
  write: createWriteTool as (options: never) => AgentTool,
  ls: createLsTool as (options: never) => AgentTool,
  grep: createGrepTool as (options: never) => AgentTool,
  find: createFindTool as (options: never) => AgentTool,
};

/**
 * A built-in tool bound to `cwd`, as pi's `createXTool(cwd, options)` returns it: its
 * `execute(toolCallId, params, signal, onUpdate)` runs the worker's tool, through the
 * extension's `operations` (and bash's `spawnHook`) when given.
 */
function builtInFactory(name: string) {
  return (cwd: string = process.cwd(), options: Record<string, unknown> = {}) => {
    const tool = FACTORIES[name]!((options ?? {}) as never);
    return {
      name: tool.name,
      label: tool.label,
      description: tool.description,
      parameters: tool.parameters,
      ...(tool.prepareArguments ? { prepareArguments: tool.prepareArguments } : {}),
      ...(tool.executionMode ? { executionMode: tool.executionMode } : {}),
      execute: (toolCallId: string, params: never, signal?: AbortSignal, onUpdate?: (partial: ToolResult) => void) =>
        tool.execute(params, {
          cwd,
          toolCallId,
          signal: signal ?? new AbortController().signal,
          ...(onUpdate ? { onUpdate } : {}),
        }),
    };
  };
}

/** The conversation as plain text, one `[Role]: text` block per message (for summaries). */
export function serializeConversation(messages: AgentMessage[]): string {
  const parts: string[] = [];
  for (const m of messages) {
    if (m.role === "user") {
      const text =
        typeof m.content === "string"
          ? m.content
          : m.content.map((c) => (c.type === "text" ? c.text : "[image]")).join("");
      parts.push(`[User]: ${text}`);
    } else if (m.role === "assistant") {
      for (const c of m.content) {
        if (c.type === "text") parts.push(`[Assistant]: ${c.text}`);
        else if (c.type === "thinking") parts.push(`[Assistant thinking]: ${c.thinking}`);
        else parts.push(`[Assistant tool calls]: ${c.name}(${JSON.stringify(c.arguments)})`);
      }
    } else if (m.role === "toolResult") {
      parts.push(`[Tool result]: ${m.content.map((c) => (c.type === "text" ? c.text : "[image]")).join("")}`);
    }
  }
  return parts.join("\n\n");
}

/** `---`-fenced `key: value` front matter and the body after it. */
export function parseFrontmatter(content: string): { frontmatter: Record<string, string>; body: string } {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(content);
  if (!match) return { frontmatter: {}, body: content };
  const frontmatter: Record<string, string> = {};
  for (const line of match[1].split(/\r?\n/)) {
    const kv = /^([\w-]+):\s*(.*)$/.exec(line);
    if (kv) frontmatter[kv[1]] = kv[2].replace(/^["']|["']$/g, "");
  }
  return { frontmatter, body: content.slice(match[0].length) };
}

/** A terminal component stand-in: built, never shown. */
class Headless {
  render(_width: number): string[] {
    return [];
  }
  invalidate(): void {}
  handleInput(_data: string): void {}
}

/** `isReadToolResult`, ...: whether a `tool_result` event is of that built-in tool. */
const toolResultGuards = Object.fromEntries(
  ["Read", "Bash", "Edit", "Write", "Grep", "Find", "Ls"].map((name) => [
    `is${name}ToolResult`,
    (event: { toolName?: string }) => event.toolName === name.toLowerCase(),
  ]),
);

/** The module object extensions import; `home` is the worker's agent directory (`getAgentDir()`, `--home` included). */
export function piCodingAgentModule(home: string): Record<string, unknown> {
  return {
    VERSION: PI_API_VERSION,
    CONFIG_DIR_NAME,
    defineTool: <T>(tool: T) => tool,
    isToolCallEventType: (name: string, event: { toolName?: string }) => event.toolName === name,
    ...toolResultGuards,
    formatReadLineRange,
    truncateLine,
    stripFrontmatter: (content: string) => parseFrontmatter(content).body,
    // Key hints name keys for a terminal user; headless, the key's own name is the hint.
    keyText: (key: string) => key,
    keyHint: (key: string, description: string) => `${key} ${description}`,
    rawKeyHint: (key: string, description: string) => `${key} ${description}`,
    createReadTool: builtInFactory("read"),
    createBashTool: builtInFactory("bash"),
    createEditTool: builtInFactory("edit"),
    createWriteTool: builtInFactory("write"),
    createGrepTool: builtInFactory("grep"),
    createFindTool: builtInFactory("find"),
    createLsTool: builtInFactory("ls"),
    createReadToolDefinition: builtInFactory("read"),
    createBashToolDefinition: builtInFactory("bash"),
    createEditToolDefinition: builtInFactory("edit"),
    createWriteToolDefinition: builtInFactory("write"),
    createGrepToolDefinition: builtInFactory("grep"),
    createFindToolDefinition: builtInFactory("find"),
    createLsToolDefinition: builtInFactory("ls"),
    createLocalBashOperations,
    truncateHead,
    truncateTail,
    formatSize,
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    withFileMutationQueue: withFileLock,
    getAgentDir: () => home,
    convertToLlm: toLlmMessages,
    serializeConversation,
    parseFrontmatter,
    getMarkdownTheme: () => PLAIN_THEME,
    getSettingsListTheme: () => PLAIN_THEME,
    getSelectListTheme: () => PLAIN_THEME,
    BorderedLoader: class BorderedLoader extends Headless {
      signal = new AbortController().signal;
      onAbort?: () => void;
    },
    CustomEditor: class CustomEditor extends Headless {},
    DynamicBorder: class DynamicBorder extends Headless {},
  };
}
