// Preloaded (`node --require`) into a process the CLI start-up bench times: at exit, the CPU
// it used (user + system, all threads: getrusage) goes to stderr as the last line.
"use strict";
process.on("exit", () => {
  const { user, system } = process.cpuUsage();
  require("node:fs").writeSync(2, `\ncpu-at-exit ${(user + system) / 1000}\n`);
});
