/**
 * Opening log files without following symlinks: in a home another process could
 * write to, a symlink planted where a log goes would otherwise turn our appends into
 * writes to any file we may write.
 */
import { constants, openSync } from "node:fs";

/** Open `path` for appending (created 0600), refusing a symlink there (`ELOOP`). */
export function openLogNoFollow(path: string): number {
  return openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
}
