/**
 * Preloaded into a worker (`NODE_OPTIONS=--require …/read-counter.cjs`): every
 * `fs.readFileSync` of a path under $READ_COUNTER_UNDER is appended, one path a line,
 * to $READ_COUNTER_OUT, so a test counts how often the worker read each file. ESM
 * imports of node:fs see the wrapper too (syncBuiltinESMExports).
 */
const fs = require("node:fs");
const { syncBuiltinESMExports } = require("node:module");

const under = process.env.READ_COUNTER_UNDER;
const out = process.env.READ_COUNTER_OUT;
if (under && out) {
  const readFileSync = fs.readFileSync;
  fs.readFileSync = function (path, ...rest) {
    if (typeof path === "string" && path.startsWith(under)) fs.appendFileSync(out, `${path}\n`);
    return readFileSync.call(this, path, ...rest);
  };
  syncBuiltinESMExports();
}
