/**
 * Tokens and cost, summed from the `usage` of a worker's assistant messages (pi's shape:
 * `input`, `output`, `cacheRead`, `cacheWrite`, `totalTokens`, `cost.total` in dollars as
 * the worker priced it), and how every client shows them. Pure, and free of typebox: the
 * CLI's tables use it without loading the schemas (its schema is in shared/schema/agent.ts).
 */
import type { Usage } from "./schema/agent.js";

/** No usage yet. */
export const NO_USAGE: Usage = Object.freeze({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0, cost: 0 });

/** `usage` plus what an assistant message used; `usage` itself for any other message. */
export function addMessageUsage(usage: Usage, message: unknown): Usage {
  const m = message as { role?: unknown; usage?: Record<string, unknown> } | null | undefined;
  if (m?.role !== "assistant" || typeof m.usage !== "object" || m.usage === null) return usage;
  const u = m.usage;
  const input = num(u.input);
  const output = num(u.output);
  const cacheRead = num(u.cacheRead);
  const cacheWrite = num(u.cacheWrite);
  const total = typeof u.totalTokens === "number" ? num(u.totalTokens) : input + output + cacheRead + cacheWrite;
  const cost = num((u.cost as { total?: unknown } | undefined)?.total);
  if (total === 0 && cost === 0) return usage;
  return {
    input: usage.input + input,
    output: usage.output + output,
    cacheRead: usage.cacheRead + cacheRead,
    cacheWrite: usage.cacheWrite + cacheWrite,
    total: usage.total + total,
    cost: usage.cost + cost,
  };
}

/** The sum of several (a fleet's, a run's). */
export function sumUsage(all: readonly (Usage | undefined)[]): Usage {
  return all.reduce<Usage>(
    (a, u) =>
      u
        ? {
            input: a.input + u.input,
            output: a.output + u.output,
            cacheRead: a.cacheRead + u.cacheRead,
            cacheWrite: a.cacheWrite + u.cacheWrite,
            total: a.total + u.total,
            cost: a.cost + u.cost,
          }
        : a,
    NO_USAGE,
  );
}

/** `812`, `1.6k`, `2.3M`. */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(1)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** `$0.00`, `$0.0042`, `$1.27`: cents, or four places under a cent so a cheap run is not $0.00. */
export function formatCost(dollars: number): string {
  if (dollars > 0 && dollars < 0.01) return `$${dollars.toFixed(4)}`;
  return `$${dollars.toFixed(2)}`;
}

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}
