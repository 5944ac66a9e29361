/**
 * The supervisor routing events, through a real `pi-orch serve` and its socket: 16
 * streaming agents to two subscribers (events per second and the latency the supervisor
 * adds between a worker's stdout and a subscriber), beside a bare relay. Fleets of idle
 * agents (spawn, `list`, memory, teardown) are bench/fleet.ts.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { IpcClient } from "../ipc/client.js";
import type { IpcStreamMessage } from "../shared/schema/ipc.js";
import { DEFAULT_SUPERVISOR_NODE_FLAGS } from "../cli/serve/node-flags.js";
import { DEFAULT_WORKER_NICE, lowerWorkerPriority } from "../supervisor/priority.js";
import { WORKER_SESSIONS_VAR } from "../supervisor/worker-launcher.js";
import { fmtOther, medianOther, processCpuSplitMs, startLoadMeter, type LoadReading } from "./load.js";
import { fmt, median, percentile, table } from "./stats.js";
import { startServe, type Serve } from "./support.js";

const STREAMERS = 16;
const ROUTE_SECONDS = 5;
/** Interleaved runs of each paced variant per rate: more at the target rate, where the ratio is judged. */
const PACED_RUNS: Record<number, number> = { 10000: 5, 20000: 3 };
const RATES = [10_000, 20_000];
/** The fleet row: this many agents (BENCH_ROUTE_FLEET, 0 for none), each streaming `FLEET_RATE` events/s. */
const FLEET_AGENTS = Number(process.env.BENCH_ROUTE_FLEET ?? 1000);
const FLEET_RATE = 10;
/** Rounds of the fleet row (BENCH_ROUTE_FLEET_ROUNDS, default 1); BENCH_ROUTE_FLEET_BEFORE=1 adds, in each, a run with a session per worker. */
const FLEET_ROUNDS = Number(process.env.BENCH_ROUTE_FLEET_ROUNDS ?? 1);
const FLEET_BEFORE = process.env.BENCH_ROUTE_FLEET_BEFORE === "1";
/**
 * Another checkout, built (BENCH_ROUTE_BEFORE=DIR): its `pi-orch serve` runs as one more
 * variant, interleaved with ours, so a change is measured before and after in one run.
 */
const BEFORE = process.env.BENCH_ROUTE_BEFORE ? resolve(process.env.BENCH_ROUTE_BEFORE) : null;

/** High-resolution wall clock in ms, comparable across processes on one machine. */
const now = () => performance.timeOrigin + performance.now();

/**
 * A minimal pi-protocol worker for the latency run: a prompt streams `message_update`
 * events at a fixed rate, each stamped with the wall clock just before it is written,
 * so the subscriber can measure worker stdout → subscriber exactly.
 */
const PACED_WORKER = `
const rate = Number(process.env.BENCH_EVENTS_PER_S);
const clock = () => performance.timeOrigin + performance.now();
const out = (o) => process.stdout.write(JSON.stringify(o) + "\\n");
let streaming = null;
let buf = "";
process.stdin.on("data", (c) => {
  buf += c;
  let i;
  while ((i = buf.indexOf("\\n")) >= 0) {
    const line = buf.slice(0, i); buf = buf.slice(i + 1);
    const cmd = JSON.parse(line);
    if (cmd.type === "get_state") out({ id: cmd.id, type: "response", command: "get_state", success: true, data: { isStreaming: !!streaming } });
    else if (cmd.type === "prompt") { out({ id: cmd.id, type: "response", command: "prompt", success: true }); start(); }
    else if (cmd.type === "abort") { stop(); out({ id: cmd.id, type: "response", command: "abort", success: true }); }
    else out({ id: cmd.id, type: "response", command: cmd.type, success: true });
  }
});
process.stdin.on("end", () => process.exit(0));
function start() {
  out({ type: "agent_start" });
  const t0 = clock(); let sent = 0;
  streaming = setInterval(() => {
    const due = Math.floor(((clock() - t0) / 1000) * rate);
    for (; sent < due; sent++) out({ type: "message_update", t: clock(), n: sent, assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta: "word " } });
  }, Number(process.env.BENCH_TICK_MS || 5));
}
function stop() { if (streaming) { clearInterval(streaming); streaming = null; out({ type: "agent_end", messages: [] }); } }
`;

/**
 * The floor to compare routing with: a bare Node relay that spawns the same paced
 * workers the way the supervisor does (detached, one session each) and copies every
 * stdout line to every socket client, with no parsing, logging or sequence numbers.
 * Given a log folder it is the *durable* relay: the same, but each chunk of whole lines
 * is first appended to the worker's own log file with one synchronous write, the least
 * work that keeps the supervisor's write-ahead order (the OS has a line before any
 * subscriber sees it). A client line "prompt" starts every worker. It prints the
 * workers' pids once listening.
 */
const RELAY = `
const net = require("node:net");
const fs = require("node:fs");
const path = require("node:path");
const { spawn } = require("node:child_process");
const [socketPath, workerFile, count, logDir] = process.argv.slice(2);
const clients = new Set();
const workers = [];
for (let i = 0; i < Number(count); i++) {
  const w = spawn(process.execPath, [workerFile], { detached: true, stdio: ["pipe", "pipe", "inherit"] });
  const log = logDir ? fs.openSync(path.join(logDir, "w" + i + ".jsonl"), "a", 0o600) : null;
  let buf = "";
  w.stdout.setEncoding("utf8");
  w.stdout.on("data", (c) => {
    buf += c;
    const end = buf.lastIndexOf("\\n");
    if (end < 0) return;
    const lines = buf.slice(0, end + 1); buf = buf.slice(end + 1);
    if (log !== null) fs.writeSync(log, lines);
    for (const s of clients) s.write(lines);
  });
  workers.push(w);
}
const server = net.createServer((s) => {
  clients.add(s);
  s.on("error", () => {});
  s.on("close", () => clients.delete(s));
  s.on("data", (d) => {
    const type = String(d).trim();
    for (const w of workers) w.stdin.write(JSON.stringify({ id: "r", type }) + "\\n");
  });
});
server.listen(socketPath, () => process.stdout.write(JSON.stringify(workers.map((w) => w.pid)) + "\\n"));
process.stdin.resume();
process.stdin.on("end", () => { for (const w of workers) w.stdin.end(); server.close(); for (const s of clients) s.destroy(); });
`;

interface RouteResult {
  eventsPerS: number;
  latencies: number[];
  lagged: number;
  /** CPU use over the counted window. */
  load: LoadReading | null;
  /** CPU the router (the supervisor or the relay) used per 1,000 routed events, in ms. */
  routerMsPerK: number;
  /** Of it, in the kernel (system calls: pipe reads, log and socket writes, polls). */
  kernelMsPerK: number;
  /** How long the router's main thread waited for a CPU while it could run, per second of the window (ms; null without /proc). */
  routerWaitMsPerS: number | null;
  /** The counted window, in `performance.now()` ms of this process. */
  window: [number, number];
}

/**
 * Two subscribers follow every agent; each prompt keeps the agents streaming for
 * `ROUTE_SECONDS`. `latencyOf` returns a message's latency in ms, or null to skip it.
 */
async function route(
  serve: Serve,
  names: string[],
  reprompt: boolean,
  latencyOf: (m: Extract<IpcStreamMessage, { type: "event" }>, receivedAt: number) => number | null,
): Promise<RouteResult> {
  const subscribers = [await IpcClient.connect({ home: serve.home }), await IpcClient.connect({ home: serve.home })];
  let counting = false;
  let events = 0;
  let lagged = 0;
  const latencies: number[] = [];
  const ended = new Set<string>();
  for (const sub of subscribers) {
    await sub.subscribe({}, (m) => {
      const receivedAt = now();
      if (m.type === "lagged") {
        lagged += m.to - m.from + 1;
        return;
      }
      if (m.event.type === "agent_end") ended.add(m.agent);
      if (!counting) return;
      events++;
      const l = latencyOf(m, receivedAt);
      if (l !== null) latencies.push(l);
    });
  }
  const promptAll = (list: string[]) =>
    Promise.all(list.map((n) => serve.client.rpc(n, { type: "prompt", message: "hello" })));
  await promptAll(names);
  // Warm up for a second, then count.
  await new Promise((r) => setTimeout(r, 1000));
  counting = true;
  const endLoad = startLoadMeter();
  const cpu0 = processCpuSplitMs(serve.proc.pid!);
  const wait0 = runQueueWaitMs(serve.proc.pid!);
  const t0 = performance.now();
  const until = t0 + ROUTE_SECONDS * 1000;
  while (performance.now() < until) {
    if (reprompt && ended.size > 0) {
      const again = [...ended];
      ended.clear();
      await promptAll(again).catch(() => {});
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  counting = false;
  const t1 = performance.now();
  const seconds = (t1 - t0) / 1000;
  const load = endLoad();
  const cpu1 = processCpuSplitMs(serve.proc.pid!);
  const wait1 = runQueueWaitMs(serve.proc.pid!);
  await Promise.all(names.map((n) => serve.client.rpc(n, { type: "abort" }).catch(() => {})));
  for (const sub of subscribers) await sub.close();
  // Events per second through the supervisor: what one subscriber received.
  const routed = events / subscribers.length;
  return {
    eventsPerS: routed / seconds,
    latencies,
    lagged,
    load,
    routerMsPerK: ((cpu1.user + cpu1.kernel - cpu0.user - cpu0.kernel) / routed) * 1000,
    kernelMsPerK: ((cpu1.kernel - cpu0.kernel) / routed) * 1000,
    routerWaitMsPerS: wait0 === null || wait1 === null ? null : (wait1 - wait0) / seconds,
    window: [t0, t1],
  };
}

/** The run-queue wait so far of `pid`'s main thread (ms, `/proc/PID/schedstat`), or null. */
function runQueueWaitMs(pid: number): number | null {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[1]) / 1e6;
  } catch {
    return null;
  }
}

/** 16 of our faux workers streaming words (PI_ORCH_FAUX_CHUNK_MS=1) to two subscribers. */
async function routeFaux(): Promise<RouteResult> {
  const serve = await startServe({ PI_ORCH_FAUX_CHUNK_MS: "1" });
  try {
    const names = Array.from({ length: STREAMERS }, (_, i) => `faux-${i}`);
    await Promise.all(names.map((name) => serve.client.spawn({ name, provider: "faux", extraArgs: ["--no-session"] })));
    // The supervisor stamps `at` (ms) when it handles the line: this is its own routing time, to the ms.
    return await route(serve, names, true, (m, receivedAt) =>
      m.event.type === "message_update" && typeof m.at === "number" ? receivedAt - m.at : null,
    );
  } finally {
    await serve.close();
  }
}

/**
 * `agents` paced workers (16 by default) stamping each event, at `total` events/s across
 * all of them, under a supervisor whose workers run at `nice`; `nodeArgs` go to the
 * supervisor's node (by default the auto-start's), `onServe` sees it started (an
 * experiment reading its output), `orch` is the built `pi-orch` to run (default ours), `env`
 * more of its environment.
 * Each worker wakes at most every 5 ms, and no more often than it has an event to write
 * (a fleet of slow streamers is not a fleet of busy timers).
 */
export async function routePaced(
  total: number,
  nice: number,
  nodeArgs?: readonly string[],
  onServe?: (serve: Serve) => void,
  agents = STREAMERS,
  orch?: string,
  env: NodeJS.ProcessEnv = {},
): Promise<RouteResult> {
  const dir = mkdtempSync(join(tmpdir(), "pi-bench-paced-"));
  const worker = join(dir, "paced-worker.cjs");
  try {
    writeFileSync(worker, PACED_WORKER);
    const perAgent = total / agents;
    const serve = await startServe(
      {
        BENCH_EVENTS_PER_S: String(perAgent),
        BENCH_TICK_MS: String(Math.max(5, Math.floor(1000 / perAgent))),
        PI_ORCH_WORKER_NICE: String(nice),
        ...env,
      },
      nodeArgs,
      orch,
    );
    onServe?.(serve);
    try {
      const names = Array.from({ length: agents }, (_, i) => `paced-${i}`);
      await Promise.all(names.map((name) => serve.client.spawn({ name, workerCommand: [process.execPath, worker] })));
      // A spawn answers before its worker is up: a fleet is prompted once every agent is idle.
      while ((await serve.client.list()).some((a) => a.status !== "idle")) await new Promise((r) => setTimeout(r, 200));
      return await route(serve, names, false, (m, receivedAt) =>
        typeof m.event.t === "number" ? receivedAt - m.event.t : null,
      );
    } finally {
      await serve.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The same 16 paced workers and two subscribers through the bare relay, its workers
 * lowered like ours; `durable`: the relay appends each chunk to a log file per worker first.
 */
export async function routeRelay(total: number, nice: number, durable = false): Promise<RouteResult> {
  const dir = mkdtempSync(join(tmpdir(), "pi-bench-relay-"));
  const worker = join(dir, "paced-worker.cjs");
  const relayFile = join(dir, "relay.cjs");
  const socketPath = join(dir, "relay.sock");
  writeFileSync(worker, PACED_WORKER);
  writeFileSync(relayFile, RELAY);
  const relay = spawn(process.execPath, [relayFile, socketPath, worker, String(STREAMERS), ...(durable ? [dir] : [])], {
    env: { ...process.env, BENCH_EVENTS_PER_S: String(total / STREAMERS) },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise<void>((r) => relay.once("exit", () => r()));
  const subscribers: Socket[] = [];
  try {
    const pids = await new Promise<number[]>((ready, fail) => {
      let out = "";
      relay.stdout!.on("data", (c: Buffer) => {
        out += c.toString();
        if (out.includes("\n")) ready(JSON.parse(out) as number[]);
      });
      relay.once("exit", (code) => fail(new Error(`relay exited (${code}) before listening`)));
    });
    for (const pid of pids) lowerWorkerPriority(pid, nice);
    let counting = false;
    let events = 0;
    const latencies: number[] = [];
    for (let i = 0; i < 2; i++) {
      const sub = createConnection(socketPath);
      await new Promise<void>((r, j) => sub.once("connect", () => r()).once("error", j));
      let buf = "";
      sub.setEncoding("utf8");
      sub.on("data", (c: string) => {
        const receivedAt = now();
        buf += c;
        let nl: number;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          const event = JSON.parse(line) as { type?: string; t?: number };
          if (!counting || event.type !== "message_update") continue;
          events++;
          if (typeof event.t === "number") latencies.push(receivedAt - event.t);
        }
      });
      subscribers.push(sub);
    }
    subscribers[0]!.write("prompt\n");
    await new Promise((r) => setTimeout(r, 1000));
    counting = true;
    const endLoad = startLoadMeter();
    const cpu0 = processCpuSplitMs(relay.pid!);
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, ROUTE_SECONDS * 1000));
    counting = false;
    const t1 = performance.now();
    const seconds = (t1 - t0) / 1000;
    const load = endLoad();
    const cpu1 = processCpuSplitMs(relay.pid!);
    subscribers[0]!.write("abort\n");
    const routed = events / subscribers.length;
    return {
      eventsPerS: routed / seconds,
      latencies,
      lagged: 0,
      routerWaitMsPerS: null,
      load,
      routerMsPerK: ((cpu1.user + cpu1.kernel - cpu0.user - cpu0.kernel) / routed) * 1000,
      kernelMsPerK: ((cpu1.kernel - cpu0.kernel) / routed) * 1000,
      window: [t0, t1],
    };
  } finally {
    for (const sub of subscribers) sub.destroy();
    relay.stdin!.end();
    const timer = setTimeout(() => relay.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What a kind of work took of the supervisor's busy main thread. */
interface ProfileShare {
  kind: string;
  share: number;
}

/** A CPU profile as node's `--cpu-prof` writes it (the parts read here). */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** The kind of work a profile node's own time is, by its function and script. */
function workKind(functionName: string, url: string): string | null {
  if (functionName === "(idle)") return null;
  if (functionName === "writeString") return "log writes (`writeSync` to the event logs)";
  if (/^write(Utf8String|Latin1String|AsciiString|Ucs2String|Buffer|v)$/.test(functionName))
    return "socket writes to the subscribers";
  if (functionName === "(garbage collector)") return "garbage collection";
  if (functionName === "parseJsonValue" || functionName === "parseJsonLine") return "`JSON.parse` of worker lines";
  if (url.includes("/dist/")) return "pi-orch's own routing code (actor, table, log, batch, fan-out)";
  if (url.startsWith("node:"))
    return "node's streams, timers and buffers (reading pipes, decoding lines, socket bookkeeping)";
  return "V8 and native other (compiled code, builtins)";
}

/**
 * Where the supervisor's main thread spends its CPU while routing `total` events/s: one
 * paced run under `--cpu-prof`, the self time of the samples in the counted window by
 * kind of work. The profiler adds its own cost, so the shares matter, not the total.
 */
export async function profileRouting(total: number): Promise<{ shares: ProfileShare[]; busyMsPerK: number }> {
  const dir = mkdtempSync(join(tmpdir(), "pi-bench-prof-"));
  try {
    // performance.now() of this process, as the monotonic clock (µs) the profile's timestamps use.
    const toMonoUs = (ms: number) => (ms + Number(process.hrtime.bigint()) / 1e6 - performance.now()) * 1000;
    const r = await routePaced(total, DEFAULT_WORKER_NICE, [
      ...DEFAULT_SUPERVISOR_NODE_FLAGS,
      "--cpu-prof",
      `--cpu-prof-dir=${dir}`,
      "--cpu-prof-interval=250",
    ]);
    const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
    if (!file) throw new Error("the profiled supervisor wrote no profile");
    const prof = JSON.parse(readFileSync(join(dir, file), "utf8")) as CpuProfile;
    const kindOf = new Map(prof.nodes.map((n) => [n.id, workKind(n.callFrame.functionName, n.callFrame.url)]));
    const [from, to] = [toMonoUs(r.window[0]), toMonoUs(r.window[1])];
    const byKind = new Map<string, number>();
    let t = prof.startTime;
    let busy = 0;
    for (let i = 0; i < prof.samples.length; i++) {
      t += prof.timeDeltas[i]!;
      const dt = prof.timeDeltas[i + 1] ?? 0;
      const kind = kindOf.get(prof.samples[i]!);
      if (t < from || t > to || !kind) continue;
      byKind.set(kind, (byKind.get(kind) ?? 0) + dt);
      busy += dt;
    }
    const routed = r.eventsPerS * ((r.window[1] - r.window[0]) / 1000);
    const shares = [...byKind].map(([kind, us]) => ({ kind, share: us / busy })).sort((a, b) => b.share - a.share);
    return { shares, busyMsPerK: (busy / 1000 / routed) * 1000 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The run of several whose p99 is the median: the tail on a 2-core box swings with the scheduler. */
function medianRun(runs: RouteResult[]): RouteResult {
  return [...runs].sort((a, b) => percentile(a.latencies, 99) - percentile(b.latencies, 99))[
    Math.floor(runs.length / 2)
  ]!;
}

/** Run the section. */
export async function run(): Promise<string> {
  const faux = await routeFaux();
  // Interleaved, so a swing of the machine's other load hits every variant alike; the
  // "before" row (workers at the supervisor's weight) needs no more than three runs.
  const variants = [
    {
      label: `bare Node relay, workers at nice ${DEFAULT_WORKER_NICE}`,
      go: (rate: number) => routeRelay(rate, DEFAULT_WORKER_NICE),
      maxRuns: Infinity,
    },
    {
      label: `durable relay (bare relay + one log write per chunk), workers at nice ${DEFAULT_WORKER_NICE}`,
      go: (rate: number) => routeRelay(rate, DEFAULT_WORKER_NICE, true),
      maxRuns: Infinity,
    },
    {
      label: `\`pi-orch serve\`, workers at nice ${DEFAULT_WORKER_NICE} (default)`,
      go: (rate: number) => routePaced(rate, DEFAULT_WORKER_NICE),
      maxRuns: Infinity,
    },
    ...(BEFORE
      ? [
          {
            label: `\`pi-orch serve\` of ${beforeName(BEFORE)} (BENCH_ROUTE_BEFORE, before), workers at nice ${DEFAULT_WORKER_NICE}`,
            go: async (rate: number) =>
              routePaced(
                rate,
                DEFAULT_WORKER_NICE,
                await beforeNodeFlags(BEFORE),
                undefined,
                STREAMERS,
                beforeOrch(BEFORE),
              ),
            maxRuns: Infinity,
          },
        ]
      : []),
    {
      label: '`pi-orch serve`, node\'s default young generation (PI_ORCH_SUPERVISOR_NODE_FLAGS="", before)',
      go: (rate: number) => routePaced(rate, DEFAULT_WORKER_NICE, []),
      maxRuns: 3,
    },
    {
      label: "`pi-orch serve`, PI_ORCH_WORKER_NICE=0 (before)",
      go: (rate: number) => routePaced(rate, 0),
      maxRuns: 3,
      rates: [10_000],
    },
  ];
  const [relayV, durableV, oursV] = variants as [(typeof variants)[0], (typeof variants)[0], (typeof variants)[0]];
  const results = new Map<string, RouteResult[]>();
  for (const rate of RATES) {
    for (let i = 0; i < PACED_RUNS[rate]!; i++) {
      for (const v of variants) {
        if (i >= v.maxRuns || (v.rates && !v.rates.includes(rate))) continue;
        const key = `${rate} ${v.label}`;
        results.set(key, [...(results.get(key) ?? []), await v.go(rate)]);
      }
    }
  }
  const p99 = (r: RouteResult) => percentile(r.latencies, 99);
  const runsOf = (rate: number, v: { label: string }) => results.get(`${rate} ${v.label}`)!;
  /** Median over the rounds of a variant's p99 over the relay's p99 of the same round (a swing of the machine hits both). */
  const pairedRatio = (rate: number, v: { label: string }) => {
    const relayRuns = runsOf(rate, relayV);
    return median(runsOf(rate, v).map((r, i) => p99(r) / p99(relayRuns[i]!)));
  };
  const pacedRows: string[][] = [];
  const ratios: string[] = [];
  for (const rate of RATES) {
    for (const v of variants) {
      const runs = results.get(`${rate} ${v.label}`);
      if (!runs) continue;
      const r = medianRun(runs);
      pacedRows.push([
        `${rate.toLocaleString("en")}/s: ${v.label}`,
        fmt(r.eventsPerS, 0),
        fmt(percentile(r.latencies, 50), 2),
        fmt(p99(r), 2),
        `${fmt(pairedRatio(rate, v), 2)}×`,
        runs.map((x) => fmt(p99(x), 1)).join(", "),
        String(r.lagged),
        fmt(median(runs.map((x) => x.routerMsPerK)), 1),
        fmt(median(runs.map((x) => x.kernelMsPerK)), 1),
        fmtOther(medianOther(runs.map((x) => x.load))),
      ]);
    }
    ratios.push(
      `${fmt(pairedRatio(rate, oursV), 2)}× the relay at ${rate.toLocaleString("en")}/s (median-run p99 ${fmt(p99(medianRun(runsOf(rate, oursV))), 2)} vs ${fmt(p99(medianRun(runsOf(rate, relayV))), 2)} ms), ` +
        `${fmt(pairedRatio(rate, durableV), 2)}× for the durable relay`,
    );
  }
  const ratio10k = pairedRatio(RATES[0]!, oursV);
  const profile = await profileRouting(RATES[0]!);
  // Issue 30's fleet check: many agents each streaming slowly, once (it spawns a fleet).
  const fleetRuns: { before: boolean; r: RouteResult }[] = [];
  for (let i = 0; FLEET_AGENTS > 0 && i < FLEET_ROUNDS; i++) {
    for (const before of FLEET_BEFORE ? [false, true] : [false]) {
      const env = before ? { [WORKER_SESSIONS_VAR]: "each" } : {};
      const r = await routePaced(
        FLEET_AGENTS * FLEET_RATE,
        DEFAULT_WORKER_NICE,
        undefined,
        undefined,
        FLEET_AGENTS,
        undefined,
        env,
      );
      fleetRuns.push({ before, r });
    }
  }
  const fleet = fleetRuns.find((x) => !x.before)?.r ?? null;
  const relayCpu = median(runsOf(RATES[0]!, relayV).map((x) => x.routerMsPerK));
  const durableCpu = median(runsOf(RATES[0]!, durableV).map((x) => x.routerMsPerK));
  const oursCpu = median(runsOf(RATES[0]!, oursV).map((x) => x.routerMsPerK));

  return [
    "## Supervisor",
    "",
    "Through a real `pi-orch serve` and its socket (fleets of idle agents: the next section).",
    "",
    `Routing: ${STREAMERS} agents streaming to two subscribers that follow every agent, ${ROUTE_SECONDS} s after a 1 s warm-up. ` +
      "Events/s is what one subscriber received. The paced rows use minimal workers that stamp each event " +
      "with a high-resolution wall clock just before writing it, so the latency covers worker stdout → pipe → supervisor → socket → subscriber. " +
      "The bare relay spawns the same workers (detached, a session each, lowered to the same nice; ours share one session) and copies their lines to two socket clients: " +
      "the floor of this machine for that path. The durable relay also appends each chunk of lines to a log file per worker before forwarding it " +
      "(one synchronous write per chunk), the least work that keeps the supervisor's write-ahead order: the floor for a router that logs. " +
      `Each row is the median of ${Object.entries(PACED_RUNS)
        .map(([r, n]) => `${n} runs at ${Number(r).toLocaleString("en")}/s`)
        .join(
          " and ",
        )} by p99 (every run's p99 listed; the "before" rows 3 runs, the one at nice 0 only at 10,000/s), the variants interleaved; ` +
      `\`pi-orch serve\` runs with the node flags a command's auto-start gives it (${DEFAULT_SUPERVISOR_NODE_FLAGS.join(" ")}; the "default young generation" row without them); ` +
      "\"p99 vs relay\" is the median over the rounds of the row's p99 over the bare relay's p99 in the same round, so a swing of the machine's load hits both sides of each ratio; " +
      "Router CPU is the supervisor's (or the relay's) own CPU time per 1,000 routed events, which the machine's load does not change much, and the part of it the kernel spent in its system calls (pipe reads, log and socket writes, polls: /proc's stime); " +
      (BEFORE
        ? `the "before" row with BENCH_ROUTE_BEFORE runs the \`pi-orch serve\` built in ${beforeName(BEFORE)}, interleaved with ours; `
        : "") +
      "other CPU = busy cores of everything but this benchmark's own processes during the counted window (the machine is shared).",
    "",
    table(
      [
        "paced workload",
        "events/s",
        "p50 (ms)",
        "p99 (ms)",
        "p99 vs relay",
        "p99 of each run (ms)",
        "lagged events",
        "router CPU per 1,000 events (ms)",
        "of it in the kernel (ms)",
        "other CPU (cores)",
      ],
      pacedRows,
    ),
    "",
    `Where the supervisor's CPU goes at ${RATES[0]!.toLocaleString("en")} events/s (one more paced run under \`--cpu-prof\`, main thread, self time in the counted window; ` +
      `${fmt(profile.busyMsPerK, 1)} ms per 1,000 events with the profiler's own cost): ` +
      profile.shares.map((s) => `${s.kind} ${fmt(s.share * 100, 0)} %`).join(", ") +
      `. Per 1,000 events the bare relay's CPU is ${fmt(relayCpu, 1)} ms, the durable relay's ${fmt(durableCpu, 1)} ms (its log writes alone add ${fmt(durableCpu - relayCpu, 1)} ms), ours ${fmt(oursCpu, 1)} ms: ` +
      "the relays do no parsing, numbering, ring for replays, lag accounting or per-agent state, which is what the rest pays for.",
    "",
    ...(fleet
      ? [
          `A fleet of slow streamers (issue 30: no lag at 1,000 agents × 10 events/s): ${FLEET_AGENTS.toLocaleString("en")} paced agents, ${FLEET_RATE} events/s each, the same two subscribers, ${FLEET_ROUNDS} run(s) ` +
            "(`BENCH_ROUTE_FLEET=N` sets the number of agents, 0 leaves the row out; `BENCH_ROUTE_FLEET_ROUNDS=N` the runs; `BENCH_ROUTE_FLEET_BEFORE=1` interleaves runs with a session per worker, `PI_ORCH_WORKER_SESSIONS=each`). " +
            "Each worker wakes only when it has an event to write; all run in the workers' one session (supervisor/worker-launcher.ts), one autogroup at the workers' nice. " +
            "The supervisor's wait is how long its main thread waited for a CPU while it could run, per second (`/proc/PID/schedstat`).",
          "",
          table(
            [
              "fleet workload",
              "events/s",
              "p50 (ms)",
              "p99 (ms)",
              "lagged events",
              "router CPU per 1,000 events (ms)",
              "of it in the kernel (ms)",
              "supervisor's wait for a CPU (ms/s)",
              "other CPU (cores)",
            ],
            fleetRuns.map(({ before, r }) => [
              `${FLEET_AGENTS.toLocaleString("en")} agents × ${FLEET_RATE}/s, workers at nice ${DEFAULT_WORKER_NICE}, ${before ? "a session each (before)" : "one session"}`,
              fmt(r.eventsPerS, 0),
              fmt(percentile(r.latencies, 50), 2),
              fmt(percentile(r.latencies, 99), 2),
              String(r.lagged),
              fmt(r.routerMsPerK, 1),
              fmt(r.kernelMsPerK, 1),
              r.routerWaitMsPerS === null ? "n/a" : fmt(r.routerWaitMsPerS, 0),
              fmtOther(r.load),
            ]),
          ),
          "",
          `Target: no lag (${fleet.lagged === 0 ? "met" : `missed: ${fleet.lagged.toLocaleString("en")} events lagged`}).`,
          "",
        ]
      : []),
    "The faux row stamps with the supervisor's own `at` (whole ms, taken when it handles the line): the supervisor's queueing and socket time at ms resolution.",
    "",
    table(
      ["workload", "events/s", "latency p50 (ms)", "latency p99 (ms)", "lagged events", "other CPU (cores)"],
      [
        [
          "16 faux `pi` workers, PI_ORCH_FAUX_CHUNK_MS=1",
          fmt(faux.eventsPerS, 0),
          fmt(percentile(faux.latencies, 50), 2),
          fmt(percentile(faux.latencies, 99), 2),
          String(faux.lagged),
          fmtOther(faux.load),
        ],
      ],
    ),
    "",
    `Target: routing p99 at 10,000 events/s at most 1.5× the bare relay (measured ${fmt(ratio10k, 2)}×: ${ratio10k <= 1.5 ? "met" : "missed"}). ` +
      `Routing p99: ${ratios.join("; ")}.`,
  ].join("\n");
}

/** The built `pi-orch` of the checkout in `dir`; refused, saying what to do, when it is not built. */
function beforeOrch(dir: string): string {
  const orch = join(dir, "dist/cli/pi-orch.js");
  if (!existsSync(orch))
    throw new Error(`BENCH_ROUTE_BEFORE=${dir} has no dist/cli/pi-orch.js: build that checkout first (npm ci there)`);
  return orch;
}

/**
 * The node flags the checkout in `dir` starts its supervisor with (its own
 * cli/serve/node-flags.ts, honouring PI_ORCH_SUPERVISOR_NODE_FLAGS as it does), so the
 * "before" row runs as that version ran, not with today's flags.
 */
async function beforeNodeFlags(dir: string): Promise<readonly string[]> {
  const file = join(dir, "cli/serve/node-flags.ts");
  if (!existsSync(file)) return DEFAULT_SUPERVISOR_NODE_FLAGS;
  const { createJiti } = await import("jiti");
  const mod = (await createJiti(import.meta.url).import(file)) as { supervisorNodeFlags(): readonly string[] };
  return mod.supervisorNodeFlags();
}

/** How a row names the checkout of BENCH_ROUTE_BEFORE: its commit when it is a git checkout, else its folder. */
function beforeName(dir: string): string {
  try {
    return execFileSync("git", ["-C", dir, "rev-parse", "--short", "HEAD"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return dir;
  }
}
