/**
 * Worker cold start (spawn until the response to the first `get_state`) and idle
 * RSS after it, side by side with `node -e 0` and, where installed, upstream pi.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fmtOther, startLoadMeter } from "./load.js";
import { cpuMs, fmt, median, rssMb, table } from "./stats.js";
import { PI, PI_CJS, ROOT } from "./support.js";

const RUNS = 15;
const UPSTREAM = join(ROOT, "test/upstream/node_modules/@mariozechner/pi-coding-agent/dist/cli.js");
const EXAMPLES = join(ROOT, "test/upstream/node_modules/@mariozechner/pi-coding-agent/examples/extensions");
/** Ten of pi's example extensions that make sense headless, loaded unchanged. */
const TEN_EXAMPLES = [
  "permission-gate.ts",
  "protected-paths.ts",
  "dynamic-tools.ts",
  "todo.ts",
  "session-name.ts",
  "bookmark.ts",
  "input-transform.ts",
  "event-bus.ts",
  "structured-output.ts",
  "plan-mode",
];

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
): Promise<{ ms: number; rss: number; cpu: number }> {
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
      const cpu = await cpuMs(p.pid!);
      p.stdin.end();
      p.on("exit", () => res({ ms, rss, cpu }));
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
  const base: Case[] = [
    { label: "`node -e 0` (spawn to exit)", exitOnly: true, args: ["-e", "0"] },
    { label: "`node -e` stdin echo loop (RSS floor)", args: ["-e", echo] },
    {
      label: "our `pi --mode rpc` (faux): `dist/cli/pi.cjs`, code cache",
      args: [PI_CJS, ...rpc],
      env: { PI_ORCH_HOME: home },
    },
    {
      label: "our `pi --mode rpc` (faux): `dist/cli/pi.js`, ESM, no cache (before)",
      args: [PI, ...rpc],
      env: { PI_ORCH_HOME: home },
    },
  ];
  // As a supervisor starts its workers: with a session, whose file the start writes.
  base.push({
    label: "our `pi --mode rpc` (faux) with a session file, `pi.cjs`",
    args: [PI_CJS, "--mode", "rpc", "--provider", "faux"],
    env: { PI_ORCH_HOME: home },
  });
  const extensionsLabel = "our `pi --mode rpc` (faux) + 10 of pi's example extensions, `pi.cjs`";
  if (existsSync(EXAMPLES)) {
    base.push({
      label: extensionsLabel,
      args: [PI_CJS, ...rpc, ...TEN_EXAMPLES.flatMap((e) => ["-e", join(EXAMPLES, e)])],
      env: { PI_ORCH_HOME: home },
    });
  }
  if (existsSync(UPSTREAM)) {
    base.push({
      label: "upstream `pi --mode rpc` 0.73.1",
      args: [UPSTREAM, "--mode", "rpc", "--no-session", "--provider", "mock", "--model", "mock-1"],
      env: { PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1" },
    });
  }
  const ca = process.env.BENCH_NODE_EXTRA_CA_CERTS;
  const cases = ca
    ? base.flatMap((c) => [
        c,
        { ...c, label: `${c.label}, NODE_EXTRA_CA_CERTS set`, env: { ...c.env, NODE_EXTRA_CA_CERTS: ca } },
      ])
    : base;
  const ms = cases.map(() => [] as number[]);
  const rss = cases.map(() => [] as number[]);
  const cpu = cases.map(() => [] as number[]);
  const parts = { floor: [] as RssParts[], ours: [] as RssParts[] };
  const endLoad = startLoadMeter();
  try {
    for (let i = 0; i < RUNS; i++) {
      for (const [k, c] of cases.entries()) {
        if (c.exitOnly) {
          ms[k]!.push(await timeExit(process.execPath, c.args, c.env ?? {}));
        } else {
          const r = await timeFirstState(process.execPath, c.args, c.env ?? {}, cwd);
          ms[k]!.push(r.ms);
          rss[k]!.push(r.rss);
          cpu[k]!.push(r.cpu);
        }
      }
    }
    // Where the memory goes: the echo loop (node's floor) against our worker, 5 of each.
    for (let i = 0; i < 5; i++) {
      parts.floor.push(await rssParts(process.execPath, base[1]!.args, {}, cwd, home));
      parts.ours.push(await rssParts(process.execPath, base[2]!.args, base[2]!.env ?? {}, cwd, home));
    }
  } finally {
    for (const d of [home, agentDir, cwd]) rmSync(d, { recursive: true, force: true });
  }
  const load = endLoad();
  const floor = median(ms[0]!);
  const floorCa = ca ? median(ms[1]!) : NaN;
  // The echo loop is node's own start plus reading stdin: the CPU floor of any worker.
  const echoCpu = median(cpu[ca ? 2 : 1]!);
  const rows = cases.map((c, k) => {
    const withCa = c.env?.NODE_EXTRA_CA_CERTS !== undefined;
    const m = median(ms[k]!);
    const cpuRatio = c.exitOnly ? "" : `${fmt(median(cpu[k]!), 1)} (${fmt(median(cpu[k]!) / echoCpu, 2)}×)`;
    return [
      c.label,
      fmt(m),
      `${fmt(m / (withCa ? floorCa : floor), 2)}×`,
      cpuRatio,
      c.exitOnly ? "" : fmt(median(rss[k]!)),
    ];
  });
  const ours = median(ms[ca ? 4 : 2]!);
  const oursRss = median(rss[ca ? 4 : 2]!);
  const before = median(ms[ca ? 6 : 3]!);
  const upstreamAt = cases.findIndex((c) => c.label.startsWith("upstream") && c.env?.NODE_EXTRA_CA_CERTS === undefined);
  const extensionsAt = cases.findIndex((c) => c.label === extensionsLabel);
  const verdict =
    `Targets: first \`get_state\` answer ≤ 2× \`node -e 0\` without NODE_EXTRA_CA_CERTS (measured ${fmt(ours / floor, 2)}×: ${ours / floor <= 2 ? "met" : "missed"}; ` +
    `the ESM bundle without a cache: ${fmt(before / floor, 2)}×); idle RSS ≤ 45 MB (measured ${fmt(oursRss)} MB: ${oursRss <= 45 ? "met" : "missed"}).` +
    (extensionsAt >= 0
      ? ` With 10 example extensions: ${fmt(median(ms[extensionsAt]!) / ours, 2)}× the start without (target at most 1.5×).`
      : "") +
    (upstreamAt >= 0
      ? ` Against upstream pi: ${fmt(median(ms[upstreamAt]!) / ours, 1)}× faster to the first answer.`
      : " Upstream pi is not installed (test/upstream), so it has no row.");
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
  ).map(([label, key]) => [
    label,
    fmt(part(parts.floor, key)),
    fmt(part(parts.ours, key)),
    `${part(parts.ours, key) - part(parts.floor, key) >= 0 ? "+" : ""}${fmt(part(parts.ours, key) - part(parts.floor, key))}`,
  ]);
  return [
    "## Worker start-up",
    "",
    `Cold start = spawn until the response to the first \`get_state\` (\`node -e 0\`: until it exits); RSS and CPU time (all threads, from the kernel's accounting: what the machine's load changes least) read 300 ms after the answer. ` +
      `Median of ${RUNS} interleaved runs; ratios against \`node -e 0\` started the same way (with or without NODE_EXTRA_CA_CERTS, which makes every node start parse a CA bundle). ` +
      `Other CPU during the runs: ${fmtOther(load)} cores.`,
    "",
    table(["process", "cold start (ms)", "vs node -e 0", "CPU to idle (ms, vs echo loop)", "idle RSS (MB)"], rows),
    "",
    verdict,
    "",
    "Where the idle RSS goes, 300 ms after the answer (MB, median of 5; bench/rss-probe.cjs preloaded to read V8's heap statistics, /proc/PID/smaps for the rest):",
    "",
    table(["part", "`node -e` echo loop", "our `pi --mode rpc` (pi.cjs)", "difference"], partRows),
    "",
    "An RPC worker runs one memory-reducing collection once it has been quiet for 100 ms (no command being handled, no line out; worker/modes/idle-compact.ts), so the RSS read 300 ms after the answer is after it, and so is its CPU (about 20 ms, in the CPU column). " +
      "It gave back 1.9 MB of young-generation and old-space pages when it landed, which V8's own memory reducer returns only ~8 s after start, and not to every worker when many start at once (24 started together: at 12 s, median 43.7 MB but up to 45.6 MB without it; 43.8 MB each with it). Its price: that CPU once, and the inspector module it loads stays, so a lone worker 10 s after start holds 0.4 MB more than one without it (43.8 against 43.3 MB).",
  ].join("\n");
}
