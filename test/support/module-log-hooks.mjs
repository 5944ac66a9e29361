// Node's module loader hook of module-log-register.mjs: runs on the loader's own thread,
// which has its own copy of the environment, PI_ORCH_MODULE_LOG included.
import { appendFileSync } from "node:fs";

/** Note each file loaded, then load it as node would. */
export async function load(url, context, next) {
  if (url.startsWith("file:")) appendFileSync(process.env.PI_ORCH_MODULE_LOG, `${url}\n`);
  return next(url, context);
}
