/**
 * Linux scheduler autogroups. Every session (`setsid`, which a `detached` spawn does)
 * gets its own autogroup, and the kernel shares CPU between autogroups first and between
 * the processes inside one second. A process's own nice therefore does nothing against
 * another session; the nice that counts is its autogroup's, in `/proc/<pid>/autogroup`.
 * Where that file is absent (not Linux, or a kernel without autogroups) these do nothing.
 */
import { readFileSync, writeFileSync } from "node:fs";

/** The nice of an autogroup from the text of `/proc/<pid>/autogroup` ("/autogroup-12 nice 10"), or null. */
export function parseAutogroupNice(text: string): number | null {
  const match = /\bnice\s+(-?\d+)/.exec(text);
  return match ? Number(match[1]) : null;
}

/** The nice of `pid`'s autogroup, or null where there are no autogroups (or the process is gone). */
export function readAutogroupNice(pid: number | "self"): number | null {
  try {
    return parseAutogroupNice(readFileSync(`/proc/${pid}/autogroup`, "utf8"));
  } catch {
    return null;
  }
}

/** Set the nice of `pid`'s autogroup (every process of its session); false where that is not possible. */
export function setAutogroupNice(pid: number, nice: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(nice));
    return true;
  } catch {
    return false;
  }
}

/**
 * Give a child that started its own session the autogroup nice of this process, so a
 * de-prioritised worker's tool commands (`npm test` in a new session) stay as low as the
 * worker. Nothing happens when this process's autogroup is at nice 0 or below.
 */
export function inheritAutogroupNice(childPid: number): void {
  const own = readAutogroupNice("self");
  if (own !== null && own > 0) setAutogroupNice(childPid, own);
}
