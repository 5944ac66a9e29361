/**
 * The unit project's setup: a unit test starts no process. Each of child_process's ways to
 * start one throws, naming where such a test belongs (vitest.config.ts, E2E_ELSEWHERE).
 */
import childProcess from "node:child_process";
import { syncBuiltinESMExports } from "node:module";

const starters = ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"] as const;
for (const name of starters) {
  Object.defineProperty(childProcess, name, {
    configurable: true,
    writable: true,
    value: () => {
      throw new Error(
        `a unit test started a process (child_process.${name}): move the file to the e2e project ` +
          "(an e2e folder, or E2E_ELSEWHERE in vitest.config.ts)",
      );
    },
  });
}
syncBuiltinESMExports();
