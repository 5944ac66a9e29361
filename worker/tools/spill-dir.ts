/**
 * Where the full output of long commands goes: one private folder per worker process,
 * `<tmpdir>/pi-bash-<pid>-<random>/`, removed when the worker exits. A worker that was
 * SIGKILLed cannot clean up after itself, so the first spill of every worker also removes
 * the folders of workers whose pid is gone. (pi writes `pi-bash-*.log` straight into the
 * temp folder and never removes them: 321 files, 76 MB after one fleet run.)
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const PREFIX = "pi-bash-";
/** `pi-bash-<pid>-<hex>`: the shape of our folders; anything else in tmp is not ours. */
const OURS = /^pi-bash-(\d+)-[0-9a-f]{8,}$/;

let current: string | undefined;

/** A new spill file path for this worker, in its private folder (made on first use). */
export function spillFilePath(): string {
  return join(spillDir(), `${randomBytes(8).toString("hex")}.log`);
}

function spillDir(): string {
  if (current !== undefined) return current;
  const root = tmpdir();
  removeOrphanedSpillDirs(root);
  const dir = join(root, `${PREFIX}${process.pid}-${randomBytes(6).toString("hex")}`);
  mkdirSync(dir, { mode: 0o700 });
  current = dir;
  process.once("exit", removeSpillDir);
  return dir;
}

/** Remove this worker's spill folder (synchronous: called from `process.on("exit")`). */
export function removeSpillDir(): void {
  const dir = current;
  current = undefined;
  if (dir === undefined) return;
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    // Best effort on the way out; the next worker's sweep finds it.
  }
}

/** Remove the spill folders in `root` whose worker pid is no longer running. */
export function removeOrphanedSpillDirs(root: string): number {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const match = OURS.exec(name);
    if (!match) continue;
    const pid = Number(match[1]);
    if (pid === process.pid || processAlive(pid)) continue;
    try {
      rmSync(join(root, name), { recursive: true, force: true });
      removed++;
    } catch {
      // Another user's folder, or already gone.
    }
  }
  return removed;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, another user's.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
