// The machine's floor for starting a fleet: COUNT node processes doing ARGS (`-e 0`, or
// `--snapshot-blob FILE` of an empty snapshot), INFLIGHT at a time, timed from the first
// spawn to the last exit, with the machine's busy CPU over the run (/proc/stat). A fleet of
// COUNT workers cannot come up faster than its nodes alone start and exit.
//
//   node bench/spawn-floor.mjs COUNT INFLIGHT ARGS...
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";

const [count, inflight, ...args] = process.argv.slice(2);
if (!(Number(count) > 0) || !(Number(inflight) > 0) || args.length === 0) {
  console.error("usage: node bench/spawn-floor.mjs COUNT INFLIGHT ARGS...   (e.g. 1000 4 -e 0)");
  process.exit(2);
}
// Every node start would parse this environment's CA bundle: not what is measured.
delete process.env.NODE_EXTRA_CA_CERTS;
/** The machine's busy and idle CPU so far, in 1/100 s (USER_HZ). */
function machine() {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0].split(/\s+/).slice(1).map(Number);
  return { busy: f[0] + f[1] + f[2] + f[5] + f[6], idle: f[3] + f[4] };
}
const before = machine();
const t0 = performance.now();
let started = 0;
let done = 0;
await new Promise((resolve, reject) => {
  const next = () => {
    if (started >= Number(count)) return;
    started++;
    const p = spawn(process.execPath, args, { stdio: "ignore" });
    p.on("error", reject);
    p.on("exit", () => (++done === Number(count) ? resolve() : next()));
  };
  for (let i = 0; i < Number(inflight); i++) next();
});
const seconds = (performance.now() - t0) / 1000;
const after = machine();
const busy = (after.busy - before.busy) / 100;
console.log(
  `${count} × node ${args.join(" ")} (${inflight} at a time): ${seconds.toFixed(1)} s, ` +
    `machine busy ${busy.toFixed(1)} core-s of ${(seconds * availableParallelism()).toFixed(1)} (${((busy / Number(count)) * 1000).toFixed(0)} ms per start)`,
);
