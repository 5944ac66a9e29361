/**
 * The worker's V8 startup snapshot: a heap in which the worker bundle has already been
 * evaluated (its modules, typebox's schemas, commander), made by `node --snapshot-blob
 * FILE --build-snapshot dist/cli/pi-snapshot.cjs` (cli/pi-snapshot.ts) and started with
 * `node --snapshot-blob FILE dist/cli/pi.cjs ...`. A blob serves only the node binary and
 * V8 flags it was made with (node refuses any other and exits), so each one lives in the
 * user's cache folder under a name made from the bundle, the node and its flags, with a
 * key file beside it that names them, the blob's size and a checksum: a blob is used only
 * when its key file says it is for this node and its bytes are the ones that were checked.
 *
 * There are two kinds of blob: `plain`, for every start, and `extensions`, for a worker
 * started with extensions, which holds the extension runner's and pi's modules' chunks
 * (dist/cli/pi-worker-worker-extensions-*.cjs) evaluated too: compiling and running them
 * was ~12 ms of CPU of such a start, which the plain blob would make every start deserialise.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { nodeFlagsCacheKey, userCacheDir, userCacheFile } from "./code-cache.js";
import { TOOL_TAG_VAR, WORKER_TAG_VAR } from "./proc.js";
import { SECRETS_FD_VAR } from "./secrets.js";
import { SNAPSHOT_KIND_VAR, type SnapshotKind } from "./snapshot-hook.js";

/** Where the blob for a worker bundle, started by this node with `env`'s NODE_OPTIONS, is. */
export interface SnapshotPlace {
  blob: string;
  /** The key file beside it (JSON: `key`, `size`, `sum`). */
  keyFile: string;
  /** The node, its flags and the bundle, as the key file must name them (and the kind, when not plain). */
  key: string;
  /** What the blob holds beyond the bundle (plain when not said). */
  kind?: SnapshotKind;
}

/**
 * The place of the blob of `kind` for `bundle` (dist/cli/pi-worker.cjs), for a worker started
 * by this node with no node flags of its own and `env` (whose NODE_OPTIONS V8 reads too).
 */
export function snapshotPlace(
  bundle: string,
  env: NodeJS.ProcessEnv,
  dir: string = userCacheDir(env),
  kind: SnapshotKind = "plain",
): SnapshotPlace {
  const st = statSync(bundle);
  const key = `${nodeFlagsCacheKey(env, [])} bundle=${bundle} ${st.size} ${st.mtimeMs}${kind === "plain" ? "" : ` kind=${kind}`}`;
  const blob = userCacheFile(dir, "pi-worker-snapshot", key).replace(/\.cache$/, ".blob");
  return { blob, keyFile: `${blob}.key`, key, kind };
}

/** What the key file beside a blob says. */
interface SnapshotKey {
  key: string;
  size: number;
  sum: string;
}

/** FNV-1a (32 bits) of `bytes`, as hex: a blob changed on disk (a bit flipped, cut short) is never started. */
export function blobChecksum(bytes: Uint8Array): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return (h >>> 0).toString(16).padStart(8, "0");
}

/**
 * Whether the blob at `place` is whole and made for it: "ok", or why not ("missing": no blob
 * or key file; "stale": made for another node, flags or bundle; "corrupt": its bytes are not
 * those its key file names).
 */
export function checkSnapshot(place: SnapshotPlace): "ok" | "missing" | "stale" | "corrupt" {
  let saved: SnapshotKey;
  try {
    saved = JSON.parse(readFileSync(place.keyFile, "utf8")) as SnapshotKey;
  } catch {
    return "missing";
  }
  if (saved.key !== place.key) return "stale";
  let bytes: Buffer;
  try {
    bytes = readFileSync(place.blob);
  } catch {
    return "missing";
  }
  return bytes.length === saved.size && blobChecksum(bytes) === saved.sum ? "ok" : "corrupt";
}

/** What `buildSnapshot` resolves with when another process is building the same blob. */
export const SNAPSHOT_BUILD_BUSY = "another process is building it";

/** A build lock older than this is from a process that died mid-build: it is taken over. */
const STALE_LOCK_MS = 120_000;

/**
 * Whether another process holds the build lock of `place` (a folder beside the blob, made
 * with `mkdir`, which only one process can win). While it does, the blob and its key file
 * are being replaced, so a "missing" or "corrupt" read is that build in flight, not damage.
 */
export function snapshotBuildRunning(place: SnapshotPlace, now: number = Date.now()): boolean {
  try {
    return now - statSync(`${place.blob}.lock`).mtimeMs < STALE_LOCK_MS;
  } catch {
    return false;
  }
}

/** Take the build lock of `place`: true when this process holds it now. */
function takeBuildLock(place: SnapshotPlace): boolean {
  const lock = `${place.blob}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      mkdirSync(lock, { mode: 0o700 });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST" || snapshotBuildRunning(place)) return false;
      // Left by a builder that died: take it over.
      rmSync(lock, { recursive: true, force: true });
    }
  }
  return false;
}

/**
 * Make the blob at `place` with this node (or `node`) and `env`: warm up (cli/pi-snapshot.ts:
 * a run of the worker's start in a snapshot-building process, in a folder of its own, whose
 * code cache the build then compiles with), build it beside its final name, start the
 * worker from it once (`--version`, which runs the deserialised worker's own code), then
 * write it and its key file into place. One process builds a blob at a time (many
 * supervisors may start at once on one cache folder): the others resolve with
 * `SNAPSHOT_BUILD_BUSY` and look again later. Resolves with undefined when made, else with
 * what went wrong (node's own words), so the caller can say it.
 */
export async function buildSnapshot(
  place: SnapshotPlace,
  entry: string,
  launcher: string,
  env: NodeJS.ProcessEnv,
  node: string = process.execPath,
): Promise<string | undefined> {
  const tmp = `${place.blob}.${process.pid}.tmp`;
  const warm = `${tmp}.warm`;
  try {
    mkdirSync(join(place.blob, ".."), { recursive: true, mode: 0o700 });
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  if (!takeBuildLock(place)) return SNAPSHOT_BUILD_BUSY;
  // The supervisor builds with the environment of the worker whose start asked for the blob,
  // and that carries the worker's tag: a process with it is that worker to the tool cleanup
  // (worker/tools/process-tree.ts), and each of the build's processes SIGKILLs every tool
  // carrying the tag at its exit. The first agent's running commands died with the build.
  env = { ...env, [WORKER_TAG_VAR]: undefined, [TOOL_TAG_VAR]: undefined };
  try {
    mkdirSync(warm, { mode: 0o700 });
    const cache = join(warm, "code-cache");
    // As a supervisor starts a worker, with nothing of the user's: its own agent folder and cwd.
    const warmed = await run(
      node,
      ["--snapshot-blob", join(warm, "unused.blob"), "--build-snapshot", entry],
      { ...env, [SECRETS_FD_VAR]: undefined, PI_ORCH_SNAPSHOT_WARM: cache, PI_ORCH_HOME: warm, PI_ORCH_SANDBOX: "off" },
      { cwd: warm, input: `${JSON.stringify({ id: "warm-up", type: "get_state" })}\n` },
    );
    if (warmed.code !== 0 || !existsSync(cache))
      return `warming it up failed (exit ${warmed.code}): ${lastLine(warmed.stderr)}`;
    const built = await run(node, [`--snapshot-blob`, tmp, "--build-snapshot", entry], {
      ...env,
      PI_ORCH_SNAPSHOT_CACHE: cache,
      [SNAPSHOT_KIND_VAR]: place.kind ?? "plain",
    });
    if (built.code !== 0) return `building it failed (exit ${built.code}): ${lastLine(built.stderr)}`;
    const tried = await run(node, ["--snapshot-blob", tmp, launcher, "--version"], env);
    if (tried.code !== 0 || tried.stdout.trim() === "")
      return `a worker started from it failed (exit ${tried.code}): ${lastLine(tried.stderr)}`;
    const bytes = readFileSync(tmp);
    const key: SnapshotKey = { key: place.key, size: bytes.length, sum: blobChecksum(bytes) };
    // The blob first, its key last: a key file names only a blob that is whole.
    rmSync(place.keyFile, { force: true });
    renameSync(tmp, place.blob);
    writeFileSync(`${place.keyFile}.${process.pid}.tmp`, JSON.stringify(key), { mode: 0o600 });
    renameSync(`${place.keyFile}.${process.pid}.tmp`, place.keyFile);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    rmSync(tmp, { force: true });
    rmSync(warm, { recursive: true, force: true });
    rmSync(`${place.keyFile}.${process.pid}.tmp`, { force: true });
    rmSync(`${place.blob}.lock`, { recursive: true, force: true });
  }
}

function lastLine(text: string): string {
  return (
    text
      .trim()
      .split("\n")
      .filter(
        (l) => l.trim() !== "" && !/^\(node:\d+\) Warning|^\(Use `node|^It may still work|^To request support/.test(l),
      )
      .at(-1) ?? "no message"
  );
}

/** Run `node` with `args` and `env` (in `cwd`, `input` on its stdin); its exit code and output. */
function run(
  node: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  opts: { cwd?: string; input?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(node, args, { env, cwd: opts.cwd, stdio: ["pipe", "pipe", "pipe"] });
    child.stdin.on("error", () => undefined);
    child.stdin.end(opts.input ?? "");
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("error", (err) => resolve({ code: -1, stdout, stderr: err.message }));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
