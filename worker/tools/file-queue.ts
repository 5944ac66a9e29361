/**
 * Serialises mutations of one file: calls for the same real path (symlinks resolved)
 * run one after another, different files run in parallel.
 */
import { realpathSync } from "node:fs";
import { dirname, basename, join } from "node:path";

const tails = new Map<string, Promise<unknown>>();

/**
 * The canonical key of a path that may not exist yet: its parent's real path plus its
 * name. Synchronous on purpose, so calls take their place in the queue in call order.
 */
function canonical(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    try {
      return join(realpathSync.native(dirname(path)), basename(path));
    } catch {
      return path;
    }
  }
}

/**
 * Run `fn` while holding the queue of `path`. The queue is released only after `fn`
 * settles, so a write still in flight is never overtaken by the next one.
 */
export async function withFileLock<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const key = canonical(path);
  const previous = tails.get(key) ?? Promise.resolve();
  const run = previous.then(fn, fn);
  const settled = run.then(
    () => undefined,
    () => undefined,
  );
  tails.set(key, settled);
  try {
    return await run;
  } finally {
    if (tails.get(key) === settled) tails.delete(key);
  }
}
