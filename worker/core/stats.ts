/**
 * The `get_session_stats` payload: token, cost and message counts of a conversation.
 * Pure: the session layer passes what it knows.
 */
import type { AgentMessage, AssistantMessage } from "../../shared/schema/messages.js";
import type { RpcSessionStats } from "../../shared/schema/rpc.js";
import { estimateContextTokens } from "../session/compaction.js";

/** What the stats are computed from. */
export interface StatsInput {
  messages: readonly AgentMessage[];
  contextWindow: number;
  sessionFile?: string;
  sessionId: string;
}

/** Count what pi's `get_session_stats` reports. */
export function sessionStats(input: StatsInput): RpcSessionStats {
  const { messages, contextWindow } = input;
  const assistants = messages.filter((m): m is AssistantMessage => m.role === "assistant");
  const tokens = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
  let cost = 0;
  for (const m of assistants) {
    tokens.input += m.usage.input;
    tokens.output += m.usage.output;
    tokens.cacheRead += m.usage.cacheRead;
    tokens.cacheWrite += m.usage.cacheWrite;
    tokens.total += m.usage.totalTokens;
    cost += m.usage.cost.total;
  }
  const contextTokens = messages.length > 0 ? estimateContextTokens(messages) : null;
  return {
    ...(input.sessionFile ? { sessionFile: input.sessionFile } : {}),
    sessionId: input.sessionId,
    userMessages: messages.filter((m) => m.role === "user").length,
    assistantMessages: assistants.length,
    toolCalls: assistants.reduce((n, m) => n + m.content.filter((c) => c.type === "toolCall").length, 0),
    toolResults: messages.filter((m) => m.role === "toolResult").length,
    totalMessages: messages.length,
    tokens,
    cost,
    contextUsage: {
      tokens: contextTokens,
      contextWindow,
      percent: contextTokens === null ? null : (contextTokens / contextWindow) * 100,
    },
  };
}

/** Text of the last assistant message, or null. */
export function lastAssistantText(messages: readonly AgentMessage[]): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role === "assistant") return m.content.map((c) => (c.type === "text" ? c.text : "")).join("");
  }
  return null;
}
