/**
 * The `get_session_stats` payload: token, cost and message counts of a conversation.
 * Pure: the session layer passes what it knows.
 */
import type { AgentMessage, Usage } from "../../shared/schema/messages.js";
import type { RpcSessionStats } from "../../shared/schema/rpc.js";
import { contextTokensOf, estimateProjectedContextTokens } from "../session/compaction.js";
import { buildSessionProjection } from "../session/context.js";
import type { SessionEntry } from "../../shared/schema/session.js";
import { isKnownEntry } from "../session/entries.js";

/** What the stats are computed from. */
export interface StatsInput {
  /** Every entry of the session, all branches (pi counts them, not the context). */
  entries: readonly SessionEntry[];
  /** The current branch, root to leaf, whose projection is what the model sees (for its size). */
  path: readonly SessionEntry[];
  contextWindow: number;
  sessionFile?: string;
  sessionId: string;
}

/**
 * Count what pi 1.6's `get_session_stats` reports: every message entry of the session,
 * on every branch, including those a compaction or a `context_edit` took out of the
 * context (a retried failure still cost its tokens), the usage of summaries that say what
 * they cost, and usage entries.
 */
export function sessionStats(input: StatsInput): RpcSessionStats {
  const { contextWindow } = input;
  const counts = { userMessages: 0, assistantMessages: 0, toolCalls: 0, toolResults: 0, totalMessages: 0 };
  const tokens = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
  let cost = 0;
  const add = (usage: Usage | undefined) => {
    if (!usage) return;
    tokens.input += usage.input;
    tokens.output += usage.output;
    tokens.cacheRead += usage.cacheRead;
    tokens.cacheWrite += usage.cacheWrite;
    cost += usage.cost.total;
  };
  for (const entry of input.entries) {
    if (!isKnownEntry(entry)) continue;
    // pi 1.6's usage entries: what the model was paid for outside a reply (a cache warm-up).
    if (entry.type === "usage") add(entry.usage);
    if (entry.type === "compaction" || entry.type === "branch_summary") {
      // pi 1.6 writes `usage` on a summary an extension says the cost of; a file may carry anything there.
      const usage = (entry as { usage?: unknown }).usage;
      if (isUsage(usage)) add(usage);
    }
    if (entry.type !== "message") continue;
    const m = entry.message;
    counts.totalMessages++;
    if (m.role === "user") counts.userMessages++;
    else if (m.role === "toolResult") counts.toolResults++;
    else if (m.role === "assistant") {
      counts.assistantMessages++;
      counts.toolCalls += m.content.filter((c) => c.type === "toolCall").length;
      add(m.usage);
    }
  }
  // pi's total is the sum of the four, not the providers' totalTokens.
  tokens.total = tokens.input + tokens.output + tokens.cacheRead + tokens.cacheWrite;
  // As pi 1.6: a session with nothing in it yet is 0 tokens, not unknown.
  const contextTokens = contextTokensOfPath(input.path);
  return {
    ...(input.sessionFile ? { sessionFile: input.sessionFile } : {}),
    sessionId: input.sessionId,
    ...counts,
    tokens,
    cost,
    contextUsage: {
      tokens: contextTokens,
      contextWindow,
      percent: contextTokens === null ? null : (contextTokens / contextWindow) * 100,
    },
  };
}

/**
 * pi 1.6's `getContextUsage`: the projection's estimate (`estimateProjectedContextTokens`),
 * or null after a compaction until a projected reply after it reports usage (the kept
 * replies counted the context before it).
 */
function contextTokensOfPath(path: readonly SessionEntry[]): number | null {
  const projection = buildSessionProjection(path);
  let compactionIndex = path.length - 1;
  while (compactionIndex >= 0 && path[compactionIndex].type !== "compaction") compactionIndex--;
  if (compactionIndex >= 0) {
    const withUsage = new Set(
      projection.entries
        .filter((e) =>
          e.messages.some(
            (m) =>
              m.role === "assistant" &&
              m.stopReason !== "error" &&
              m.stopReason !== "aborted" &&
              contextTokensOf(m.usage) > 0,
          ),
        )
        .map((e) => e.source),
    );
    if (!path.slice(compactionIndex + 1).some((e) => withUsage.has(e))) return null;
  }
  return estimateProjectedContextTokens(projection, path);
}

/** A summary entry's `usage` (written by an extension, so checked before it is added). */
function isUsage(value: unknown): value is Usage {
  const u = value as Usage | undefined;
  return (
    typeof u?.input === "number" &&
    typeof u.output === "number" &&
    typeof u.cacheRead === "number" &&
    typeof u.cacheWrite === "number" &&
    typeof u.cost?.total === "number"
  );
}

/** Text of the last assistant message, or null. */
export function lastAssistantText(messages: readonly AgentMessage[]): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role === "assistant") return m.content.map((c) => (c.type === "text" ? c.text : "")).join("");
  }
  return null;
}
