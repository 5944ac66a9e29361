/**
 * The contract between the worker runtime and loaded extensions. The runtime calls
 * these hooks at fixed points; an empty set (`NO_EXTENSIONS`) changes nothing.
 */
import type { AgentMessage, ToolCall } from "../../shared/schema/messages.js";
import type { AgentTool, ToolResult } from "../types.js";
import type { ToolCallDecision } from "../agent/types.js";

// Defined with the other author-facing types (types.ts stays free of worker imports); the modes implement it.
export type { ExtensionUi } from "./types.js";

/** A slash command an extension registered, as `get_commands` lists it. */
export interface ExtensionCommandInfo {
  name: string;
  description?: string;
  source: "extension";
  path: string;
}

/** The hooks the runtime calls. Every hook tolerates throwing handlers (they become `extension_error`). */
export interface ExtensionHooks {
  /** Tools registered by extensions (a name equal to a built-in replaces it). */
  tools(): AgentTool[];
  commands(): ExtensionCommandInfo[];
  /** Run `/name args` when `name` is a registered command; false when it is not one. */
  runCommand(name: string, args: string): Promise<boolean>;
  sessionStart(): Promise<void>;
  /** Before a run: may return a system prompt for this run only. */
  beforeAgentStart(prompt: string, systemPrompt: string): Promise<string | undefined>;
  /** Per model request: may return replacement messages for this request only. */
  context(messages: AgentMessage[]): Promise<AgentMessage[] | undefined>;
  toolCall(call: ToolCall, args: Record<string, unknown>): Promise<ToolCallDecision | undefined>;
  toolResult(call: ToolCall, result: ToolResult, isError: boolean): Promise<{ result: ToolResult; isError: boolean } | undefined>;
  agentEnd(messages: AgentMessage[]): Promise<void>;
  sessionShutdown(): Promise<void>;
  /** Extensions that were found but skipped (an untrusted project), for a notice. */
  skipped(): string[];
}

/** The hooks of a worker without extensions. */
export const NO_EXTENSIONS: ExtensionHooks = {
  tools: () => [],
  commands: () => [],
  runCommand: async () => false,
  sessionStart: async () => undefined,
  beforeAgentStart: async () => undefined,
  context: async () => undefined,
  toolCall: async () => undefined,
  toolResult: async () => undefined,
  agentEnd: async () => undefined,
  sessionShutdown: async () => undefined,
  skipped: () => [],
};
