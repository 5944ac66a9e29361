// Installs the upstream pi 0.73.1 into test/upstream/ (its own lock file) for the
// interop test and the benchmarks. Kept out of the root so its `pi` bin never
// shadows ours in node_modules/.bin. Offline, the interop test skips and says why.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

const marker = "test/upstream/node_modules/@mariozechner/pi-coding-agent/package.json";
if (!existsSync(marker)) {
  try {
    console.log("installing upstream pi 0.73.1 into test/upstream (once)…");
    execFileSync("npm", ["ci", "--prefix", "test/upstream", "--no-audit", "--no-fund", "--loglevel=error"], {
      stdio: "inherit",
    });
  } catch {
    console.warn("warning: could not install upstream pi; the interop test will be skipped");
  }
}
