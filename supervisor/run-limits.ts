/**
 * Run limits, as pure arithmetic: the tokens of a run so far and whether the run just
 * went over `maxTokens`. The actor counts, and aborts the run once when told to.
 */

/** Tokens counted for the current run, and why it was aborted (once it was). */
export interface RunTokens {
  tokens: number;
  abortReason: string | null;
}

/**
 * Count the usage of one `message_end`'s message: only assistant messages with a numeric
 * `usage.totalTokens` count. `over` is the reason to abort, given once, the first time the
 * total passes `maxTokens` (no limit when absent).
 */
export function countRunTokens(
  run: RunTokens,
  message: unknown,
  maxTokens: number | undefined,
): { tokens: number; over: string | null } {
  const m = message as { role?: unknown; usage?: { totalTokens?: unknown } } | undefined;
  if (maxTokens === undefined || m?.role !== "assistant" || typeof m.usage?.totalTokens !== "number")
    return { tokens: run.tokens, over: null };
  const tokens = run.tokens + m.usage.totalTokens;
  const over =
    tokens > maxTokens && run.abortReason === null ? `${tokens} tokens used, over the ${maxTokens}-token limit` : null;
  return { tokens, over };
}
