/**
 * The e2e project's global setup: the tests spawn dist/ (the worker and the supervisor as
 * users run them) and upstream pi from test/upstream, so both are made ready once, before
 * any e2e file starts. Code caches a worker writes for a node the build did not run on
 * (shared/code-cache.ts) go to a folder of the run's own, removed at the end, never to
 * the user's ~/.cache. At the end it removes the output folders of the workers the tests
 * killed.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { removeOrphanedSpillDirs } from "../../worker/tools/spill-dir.js";

const ROOT = resolve(import.meta.dirname, "../..");

export default function setup(): () => void {
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
  // npm reaches the registry here, through the CA bundle vitest.config.ts took from the tests.
  const ca = process.env.PI_ORCH_TEST_CA_CERTS;
  execFileSync(process.execPath, ["scripts/ensure-upstream.mjs"], {
    cwd: ROOT,
    stdio: "inherit",
    env: ca === undefined ? process.env : { ...process.env, NODE_EXTRA_CA_CERTS: ca },
  });
  const cacheDir = mkdtempSync(join(tmpdir(), "pi-orch-test-cache-"));
  process.env.PI_ORCH_CACHE_DIR = cacheDir;
  // Node 22's compile cache, for upstream pi: the oracle tests start it hundreds of times, and each
  // start compiles its bundle again (0.53 -> 0.40 s of CPU to a first RPC answer with the cache).
  // pi's bin turns the cache on itself; this keeps it in a folder of the run's own, not in /tmp.
  // It changes what V8 compiles from, not what runs; Node 20 (ours) does not read it.
  const compileCache = mkdtempSync(join(tmpdir(), "pi-orch-test-compile-cache-"));
  process.env.NODE_COMPILE_CACHE = compileCache;
  return () => {
    rmSync(cacheDir, { recursive: true, force: true });
    rmSync(compileCache, { recursive: true, force: true });
    // The spill folders of workers the tests SIGKILLed (worker/tools/spill-dir.ts): a worker
    // sweeps such folders at its first spill, but after the last test no worker comes.
    removeOrphanedSpillDirs(tmpdir());
  };
}
