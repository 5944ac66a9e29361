/**
 * `pi --list-models [search]`: pi 0.73's table of the models that can be used now,
 * sorted by provider then id, the search matched as pi's fuzzy filter matches it.
 * Pure functions; cli/pi.ts prints the lines.
 */
import type { Model } from "../shared/schema/messages.js";

/** `200K`, `1.0M`, `8.2K`, `512`: pi's token counts (one decimal unless whole). */
export function formatTokenCount(count: number): string {
  const scaled = (n: number, unit: string) => (n % 1 === 0 ? `${n}${unit}` : `${n.toFixed(1)}${unit}`);
  if (count >= 1_000_000) return scaled(count / 1_000_000, "M");
  if (count >= 1_000) return scaled(count / 1_000, "K");
  return String(count);
}

function inOrder(query: string, text: string): boolean {
  let i = 0;
  for (const ch of text) if (ch === query[i]) i++;
  return i >= query.length;
}

/**
 * Whether `token` matches `text` as pi's fuzzy filter decides: its characters appear in
 * order (case-insensitive), or, for `gpt5`-like tokens, with the letters and digits swapped.
 */
export function fuzzyTokenMatches(token: string, text: string): boolean {
  const q = token.toLowerCase();
  const t = text.toLowerCase();
  if (inOrder(q, t)) return true;
  const swap = /^([a-z]+)([0-9]+)$/.exec(q) ?? /^([0-9]+)([a-z]+)$/.exec(q);
  return swap !== null && inOrder(swap[2]! + swap[1]!, t);
}

/** The models a search matches (every word's letters in order), sorted by provider and id. */
function matchingModels(models: readonly Model[], search: string | undefined): Model[] {
  const tokens = search?.trim().split(/\s+/).filter(Boolean) ?? [];
  const matching = models.filter((m) => tokens.every((token) => fuzzyTokenMatches(token, `${m.provider} ${m.id}`)));
  return matching.sort((a, b) => a.provider.localeCompare(b.provider) || a.id.localeCompare(b.id));
}

/**
 * `--list-models --mode json`: one JSON object per matching model, in the table's order
 * (nothing when none match; pi 1.6 prints its table in every mode).
 */
export function listModelsJson(models: readonly Model[], search: string | undefined): string[] {
  return matchingModels(models, search).map((m) =>
    JSON.stringify({
      provider: m.provider,
      id: m.id,
      name: m.name,
      contextWindow: m.contextWindow,
      maxTokens: m.maxTokens,
      reasoning: m.reasoning,
      input: m.input,
    }),
  );
}

/** The lines `--list-models` prints for `models` (the usable ones) and an optional search. */
export function listModelsLines(models: readonly Model[], search: string | undefined): string[] {
  if (models.length === 0)
    return [
      "No models available: set a provider's API key (ANTHROPIC_API_KEY, OPENAI_API_KEY) or add one in models.json",
    ];
  const sorted = matchingModels(models, search);
  if (sorted.length === 0) return [`No models matching "${search}"`];
  const rows = [
    ["provider", "model", "context", "max-out", "thinking", "images"],
    ...sorted.map((m) => [
      m.provider,
      m.id,
      formatTokenCount(m.contextWindow),
      formatTokenCount(m.maxTokens),
      m.reasoning ? "yes" : "no",
      m.input.includes("image") ? "yes" : "no",
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((row) => row.map((cell, c) => cell.padEnd(widths[c]!)).join("  "));
}
