/**
 * The e2e project's global setup: the tests spawn dist/ (the worker and the supervisor as
 * users run them) and upstream pi from test/upstream, so both are made ready once, before
 * any e2e file starts.
 */
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");

export default function setup(): void {
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
  execFileSync(process.execPath, ["scripts/ensure-upstream.mjs"], { cwd: ROOT, stdio: "inherit" });
}
