// `node --import` this file to have every ES module the process loads appended, as a file
// URL, to the file named by PI_ORCH_MODULE_LOG (test/integration/cli-startup-modules.test.ts).
import { register } from "node:module";

register("./module-log-hooks.mjs", import.meta.url);
