/**
 * `--shard I/N`: a deterministic slice of a task list, so a CI matrix of N jobs runs
 * every task exactly once. Task k (0-based, in file order) belongs to shard
 * `k mod N + 1`: shards differ in size by at most one and need no coordination.
 */

/** A shard: `index` is 1-based, `1 <= index <= total`. */
export interface Shard {
  index: number;
  total: number;
}

/** Parse `I/N`; throws an Error whose message says what is expected. */
export function parseShard(text: string): Shard {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  if (!m) throw new Error(`expected I/N such as 1/4, got "${text}"`);
  const index = Number(m[1]);
  const total = Number(m[2]);
  if (total < 1) throw new Error(`the shard count must be at least 1, got "${text}"`);
  if (index < 1 || index > total) throw new Error(`the shard index must be between 1 and ${total}, got "${text}"`);
  return { index, total };
}

/** The tasks of one shard, in their original order. */
export function selectShard<T>(tasks: readonly T[], shard: Shard | null): T[] {
  if (!shard) return [...tasks];
  return tasks.filter((_, k) => k % shard.total === shard.index - 1);
}
