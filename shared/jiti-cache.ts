/**
 * Where jiti keeps the JavaScript it made of a TypeScript file (its "fs cache"). jiti's own
 * default is `$TMPDIR/jiti`, a folder in /tmp that any local user can create first, make
 * writable for all and fill; and jiti runs a cached file whose last line names the hash of
 * the source it was made from. A file planted there for an extension whose path and text
 * another user can guess (pi's examples, a package's) would run as whoever loads it, with
 * their keys. So ours is in the user's cache folder, private to them.
 */
import { chmodSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { userCacheDir } from "./code-cache.js";

/**
 * jiti's options for its cache: `fsCache` `<user cache folder>/jiti`, made 0700 (an older one
 * of the user's made private), or `false` (jiti transforms every time) when no such folder
 * can be had, e.g. a read-only home in a sandbox, or one that belongs to someone else. None
 * when the user set `JITI_FS_CACHE` or `JITI_CACHE`: jiti reads those itself, and an option
 * given, even `undefined`, would win over them.
 */
export function jitiCacheOptions(env: NodeJS.ProcessEnv = process.env): { fsCache?: string | false } {
  if (env.JITI_FS_CACHE !== undefined || env.JITI_CACHE !== undefined) return {};
  return { fsCache: privateFolder(join(userCacheDir(env), "jiti")) };
}

function privateFolder(dir: string): string | false {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = statSync(dir);
    if (!st.isDirectory() || (process.getuid !== undefined && st.uid !== process.getuid())) return false;
    if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
    return dir;
  } catch {
    return false;
  }
}
