/**
 * A fleet of idle agents through a real `pi-orch serve` and its socket: N faux agents
 * requested at once, timed until all are idle; how fast `list` answers while they start
 * and once they are idle (on an open connection, and on a new one as `pi-orch list`
 * makes); the supervisor's memory and idle CPU, the fleet's summed PSS; and the
 * teardown of all of them, with every process of the tree checked gone afterwards.
 */
import { readdirSync, readFileSync } from "node:fs";
import { supervisorNodeFlags } from "../cli/serve/node-flags.js";
import { IpcClient } from "../ipc/client.js";
import { fmtOther, medianOther, processCpuMs, startLoadMeter, type LoadReading } from "./load.js";
import { fmt, median, rssMb, table } from "./stats.js";
import { startServe, type Serve } from "./support.js";

/** `BENCH_FLEET_PROFILE=DIR`: the supervisor writes a CPU profile there (node's --cpu-prof). */
const PROFILE_DIR = process.env.BENCH_FLEET_PROFILE;
/** Fleet sizes and runs of each (interleaved); `BENCH_FLEETS=100,200` overrides the sizes while profiling. */
const FLEETS: readonly { agents: number; runs: number }[] = process.env.BENCH_FLEETS
  ? process.env.BENCH_FLEETS.split(",").map((n) => ({ agents: Number(n), runs: 1 }))
  : [
      { agents: 50, runs: 3 },
      { agents: 100, runs: 3 },
      // Both cores for about a minute and ~9 GB: once per bench run on a shared machine.
      { agents: 1000, runs: 1 },
    ];
/**
 * `BENCH_FLEET_LISTERS=0`: no `list` clients while the fleet starts, so the supervisor's
 * CPU per agent is its spawn path alone (the listers' answers grow with the run's length).
 */
const LISTERS = process.env.BENCH_FLEET_LISTERS !== "0";
/** Pause of each `list` client after an answer. */
const LIST_EVERY_MS = 200;
/** How long the idle supervisor's CPU is read (its presence pings are all it does then). */
const IDLE_CPU_MS = 5_000;

/** What one fleet run measured. */
interface FleetResult {
  agents: number;
  /** Every spawn request sent at once until every agent is `idle`. */
  spawnMs: number;
  /** `list` round trips while the spawns were in flight: on an open connection, and each on a new connection. */
  listDuringSpawn: number[];
  listDuringSpawnFresh: number[];
  /** The same once every agent is idle. */
  listIdle: number[];
  listIdleFresh: number[];
  /** Bytes of one `list` answer with every agent idle. */
  listBytes: number;
  supervisorRssMb: number;
  workerRssMb: number[];
  /** Summed PSS of the supervisor and every process below it (workers, their sandboxes), MB. */
  totalPssMb: number;
  processes: number;
  /** CPU per agent from the first spawn request until all were idle: the supervisor's, and its workers' (with their sandboxes). */
  supervisorCpuPerAgentMs: number;
  workersCpuPerAgentMs: number;
  /** The idle supervisor's CPU, in % of one core. */
  idleCpuPct: number;
  /** `shutdown` request until the supervisor exited, every worker stopped. */
  teardownMs: number;
  /** Processes of the tree still running after the supervisor exited. */
  leftAfter: number;
  load: LoadReading | null;
}

/** One process's `/proc/PID/stat` fields after the command: state, ppid, ..., starttime (index 19). */
function statFields(pid: number): string[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** The process table: pid → parent and start time. */
function procTable(): Map<number, { ppid: number; start: string }> {
  const table = new Map<number, { ppid: number; start: string }>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const f = statFields(Number(name));
    if (f) table.set(Number(name), { ppid: Number(f[1]), start: f[19]! });
  }
  return table;
}

/** Every live descendant of `root`, with its start time (so a reused pid is not mistaken for it). */
function descendants(root: number, table = procTable()): Map<number, string> {
  const children = new Map<number, number[]>();
  for (const [pid, p] of table) children.set(p.ppid, [...(children.get(p.ppid) ?? []), pid]);
  const found = new Map<number, string>();
  const todo = [root];
  while (todo.length > 0) {
    for (const pid of children.get(todo.pop()!) ?? []) {
      found.set(pid, table.get(pid)!.start);
      todo.push(pid);
    }
  }
  return found;
}

/** Of `pids` (pid → start time), those still running: same start time, not a zombie. */
function stillRunning(pids: Map<number, string>): number[] {
  return [...pids]
    .filter(([pid, start]) => {
      const f = statFields(pid);
      return f !== null && f[19] === start && f[0] !== "Z" && f[0] !== "X";
    })
    .map(([pid]) => pid);
}

/** Proportional set size of a process in MB, from /proc/PID/smaps_rollup (Linux); NaN when unreadable. */
function pssMb(pid: number): number {
  try {
    return Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1] ?? NaN) / 1024;
  } catch {
    return NaN;
  }
}

/** Round trips of `list` on `client` until `done()`; with `fresh`, each on a new connection as `pi-orch list` makes. */
async function listLoop(serve: Serve, done: () => boolean, fresh: boolean, atLeast = 1): Promise<number[]> {
  const times: number[] = [];
  const open = fresh ? null : await IpcClient.connect({ home: serve.home, answerDeadlineMs: 60_000 });
  try {
    while (!done() || times.length < atLeast) {
      const t0 = performance.now();
      const client = open ?? (await IpcClient.connect({ home: serve.home, answerDeadlineMs: 60_000 }));
      await client.list();
      times.push(performance.now() - t0);
      if (!open) await client.close();
      // A person or a script asks now and then, not in a tight loop.
      await new Promise((r) => setTimeout(r, LIST_EVERY_MS));
    }
  } finally {
    await open?.close();
  }
  return times;
}

/**
 * `BENCH_FLEET_IDLE=AGENTS,ROUNDS` (default 100,1; `0` leaves it out): an idle fleet's
 * steady cost, after its start's work has settled: the CPU of the supervisor and of its
 * workers over a window of an idle minute, with idle agents' pings drifting apart (the
 * default) and every 5 s as before (`idlePingMaxMs` 5000), interleaved.
 */
const IDLE_FLEET = (process.env.BENCH_FLEET_IDLE ?? "100,1").split(",").map(Number);
/** After all are idle: time for their idle collections and the pings' drift, then the window read. */
const IDLE_SETTLE_MS = 40_000;
const IDLE_WINDOW_MS = 60_000;

interface IdleFleetResult {
  variant: string;
  agents: number;
  /** Per agent per minute: the supervisor's CPU, the workers' (with their sandboxes). */
  supervisorMsPerAgentMin: number;
  workersMsPerAgentMin: number;
  load: LoadReading | null;
}

async function idleFleetRun(agents: number, variant: string, timings: string | null): Promise<IdleFleetResult> {
  const serve = await startServe(timings === null ? {} : { PI_ORCH_TIMINGS: timings });
  try {
    await Promise.all(
      Array.from({ length: agents }, (_, i) => serve.client.spawn({ name: `idle-${i}`, provider: "faux" })),
    );
    while (!(await serve.client.list()).every((a) => a.status === "idle")) await new Promise((r) => setTimeout(r, 200));
    await new Promise((r) => setTimeout(r, IDLE_SETTLE_MS));
    const sup = serve.proc.pid!;
    const workers = [...descendants(sup).keys()];
    const workersCpu = () => workers.map(processCpuMs).reduce((a, b) => a + b, 0);
    const endLoad = startLoadMeter();
    const s0 = processCpuMs(sup);
    const w0 = workersCpu();
    await new Promise((r) => setTimeout(r, IDLE_WINDOW_MS));
    const perAgentMin = (ms: number) => ms / agents / (IDLE_WINDOW_MS / 60_000);
    return {
      variant,
      agents,
      supervisorMsPerAgentMin: perAgentMin(processCpuMs(sup) - s0),
      workersMsPerAgentMin: perAgentMin(workersCpu() - w0),
      load: endLoad(),
    };
  } finally {
    await serve.close();
  }
}

async function idleFleet(): Promise<string> {
  const [agents = 100, rounds = 1] = IDLE_FLEET;
  const variants: [string, string | null][] = [
    ["idle agents' pings drift to every 30 s (default)", null],
    ["a ping every 5 s (`idlePingMaxMs` 5000, before)", JSON.stringify({ idlePingMaxMs: 5_000 })],
  ];
  const results: IdleFleetResult[] = [];
  for (let i = 0; i < rounds; i++)
    for (const [variant, timings] of i % 2 === 0 ? variants : [...variants].reverse()) {
      process.stderr.write(`bench: idle fleet of ${agents}, ${variant}, round ${i + 1}\n`);
      results.push(await idleFleetRun(agents, variant, timings));
    }
  const rows = variants.map(([variant]) => {
    const runs = results.filter((r) => r.variant === variant);
    const sup = median(runs.map((r) => r.supervisorMsPerAgentMin));
    const wrk = median(runs.map((r) => r.workersMsPerAgentMin));
    return [
      variant,
      fmt(sup, 2),
      fmt(wrk, 2),
      // A thousand such agents, in cores: (ms per agent per minute × 1,000) / 60,000 ms.
      fmt(((sup + wrk) * 1_000) / 60_000, 2),
      fmtOther(medianOther(runs.map((r) => r.load))),
    ];
  });
  return [
    `An idle fleet's steady cost (issue 30, target 2: what grows with the agent count): ${agents} agents spawned, all idle, ` +
      `then ${IDLE_SETTLE_MS / 1000} s for their start-up's idle collections and the pings' drift, then the CPU of the supervisor and of every process below it ` +
      `(workers and their sandboxes) over ${IDLE_WINDOW_MS / 1000} s of nothing but presence; ${rounds} round(s), the variants interleaved; \`BENCH_FLEET_IDLE=AGENTS,ROUNDS\`.`,
    "",
    table(
      [
        "presence pings",
        "supervisor CPU per agent per minute (ms)",
        "worker CPU per agent per minute (ms)",
        "1,000 such agents (cores)",
        "other CPU (cores)",
      ],
      rows,
    ),
  ].join("\n");
}

/** Spawn `count` faux agents at once, measure the fleet, tear it down. */
async function fleetRun(count: number): Promise<FleetResult> {
  const serve = await startServe(
    {},
    PROFILE_DIR ? [...supervisorNodeFlags(), "--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] : undefined,
  );
  let closed = false;
  try {
    const endLoad = startLoadMeter();
    const supCpu0 = processCpuMs(serve.proc.pid!);
    let spawning = true;
    const t0 = performance.now();
    const listers = LISTERS
      ? [listLoop(serve, () => !spawning, false), listLoop(serve, () => !spawning, true)]
      : [Promise.resolve([]), Promise.resolve([])];
    // Should the spawns fail, their error is the one to tell, not the listers' closed connections after.
    for (const l of listers) l.catch(() => undefined);
    const spawned = Promise.all(
      Array.from({ length: count }, (_, i) => serve.client.spawn({ name: `fleet-${i}`, provider: "faux" })),
    );
    let agents = await spawned;
    while (!agents.every((a) => a.status === "idle")) {
      await new Promise((r) => setTimeout(r, 50));
      agents = await serve.client.list();
    }
    const spawnMs = performance.now() - t0;
    spawning = false;
    const [listDuringSpawn, listDuringSpawnFresh] = await Promise.all(listers);
    const load = endLoad();
    const supervisorCpuPerAgentMs = (processCpuMs(serve.proc.pid!) - supCpu0) / count;
    const workersCpuPerAgentMs =
      [...descendants(serve.proc.pid!).keys()].map(processCpuMs).reduce((a, b) => a + b, 0) / count;
    // Start-up work that finishes after the first answer (the worker's idle collection) settles first.
    await new Promise((r) => setTimeout(r, 1_000));
    const tree = descendants(serve.proc.pid!);
    const supervisorRssMb = await rssMb(serve.proc.pid!);
    // An agent's pid is its sandbox's (bwrap) when it has one: its worker is the biggest process below.
    const table = procTable();
    const workerRssMb = await Promise.all(
      agents.map(async (a) =>
        Math.max(...(await Promise.all([a.pid!, ...descendants(a.pid!, table).keys()].map(rssMb)))),
      ),
    );
    const totalPssMb = [serve.proc.pid!, ...tree.keys()].map(pssMb).reduce((a, b) => a + b, 0);
    const cpu0 = processCpuMs(serve.proc.pid!);
    const c0 = performance.now();
    await new Promise((r) => setTimeout(r, IDLE_CPU_MS));
    const idleCpuPct = ((processCpuMs(serve.proc.pid!) - cpu0) / (performance.now() - c0)) * 100;
    const listBytes = JSON.stringify(await serve.client.list()).length;
    const idleEnd = performance.now() + 1_000;
    const [listIdle, listIdleFresh] = await Promise.all([
      listLoop(serve, () => performance.now() > idleEnd, false, 10),
      listLoop(serve, () => performance.now() > idleEnd, true, 10),
    ]);
    const exited = new Promise<void>((r) => serve.proc.once("exit", () => r()));
    const d0 = performance.now();
    closed = true;
    await serve.close();
    await exited;
    const teardownMs = performance.now() - d0;
    const left = stillRunning(tree);
    for (const pid of left) process.kill(pid, "SIGKILL");
    return {
      agents: count,
      spawnMs,
      listDuringSpawn,
      listDuringSpawnFresh,
      listIdle,
      listIdleFresh,
      listBytes,
      supervisorRssMb,
      workerRssMb,
      totalPssMb,
      processes: tree.size + 1,
      supervisorCpuPerAgentMs,
      workersCpuPerAgentMs,
      idleCpuPct,
      teardownMs,
      leftAfter: left.length,
      load,
    };
  } catch (err) {
    process.stderr.write(`bench: the fleet of ${count} failed: ${(err as Error).stack ?? err}\n`);
    throw err;
  } finally {
    if (!closed) {
      const tree = descendants(serve.proc.pid!);
      await serve.close();
      for (const pid of stillRunning(tree)) process.kill(pid, "SIGKILL");
    }
  }
}

/** "p50 / max" of a list of round trips, in ms. */
const spread = (ms: number[]) => (ms.length === 0 ? "not asked" : `${fmt(median(ms), 0)} / ${fmt(Math.max(...ms), 0)}`);

/** Run the section. */
export async function run(): Promise<string> {
  const results = new Map<number, FleetResult[]>();
  const rounds = Math.max(...FLEETS.map((f) => f.runs));
  for (let i = 0; i < rounds; i++)
    for (const f of FLEETS) {
      if (i >= f.runs) continue;
      process.stderr.write(`bench: fleet of ${f.agents}, run ${i + 1}\n`);
      results.set(f.agents, [...(results.get(f.agents) ?? []), await fleetRun(f.agents)]);
    }
  /** The run with the median spawn time stands for its size; the lists pool every run. */
  const medianOf = (runs: FleetResult[]) =>
    [...runs].sort((a, b) => a.spawnMs - b.spawnMs)[Math.floor(runs.length / 2)]!;
  const rows = FLEETS.map(({ agents }) => {
    const runs = results.get(agents)!;
    const r = medianOf(runs);
    const pss = median(runs.map((x) => x.totalPssMb));
    return [
      runs.length === 1 ? String(agents) : `${agents} (${runs.length} runs)`,
      fmt(r.spawnMs, 0),
      spread(runs.flatMap((x) => x.listDuringSpawn)),
      spread(runs.flatMap((x) => x.listDuringSpawnFresh)),
      spread(runs.flatMap((x) => x.listIdle)),
      spread(runs.flatMap((x) => x.listIdleFresh)),
      `${fmt(median(runs.map((x) => x.supervisorCpuPerAgentMs)), 1)} + ${fmt(median(runs.map((x) => x.workersCpuPerAgentMs)), 0)}`,
      fmt(median(runs.map((x) => x.supervisorRssMb))),
      fmt(median(runs.flatMap((x) => x.workerRssMb))),
      fmt(pss, 0),
      fmt(pss / r.processes, 1),
      fmt(median(runs.map((x) => x.idleCpuPct)), 1),
      fmt(median(runs.map((x) => x.teardownMs)), 0),
      String(Math.max(...runs.map((x) => x.leftAfter))),
      fmtOther(medianOther(runs.map((x) => x.load))),
    ];
  });
  const big = results.get(Math.max(...FLEETS.map((f) => f.agents)))!.at(-1)!;
  const verdict = (ok: boolean) => (ok ? "met" : "missed");
  const listWorst = Math.max(...big.listIdle, ...big.listIdleFresh);
  return [
    "## A fleet of idle agents",
    "",
    "Through a real `pi-orch serve` and its socket, with the defaults a user gets (each agent in its sandbox where bwrap works, as here). " +
      "Every spawn request is sent at once and timed until all agents are `idle`; meanwhile one client asks `list` on its open connection and another on a new connection each time " +
      `(what \`pi-orch list\` does: the socket checks who connected before it answers), each ${LIST_EVERY_MS} ms after its answer; ` +
      "round trips as median / worst. Memory read 1 s after the last agent was idle; PSS splits pages shared between processes (node's code, the code cache) among them, " +
      `so the summed PSS over the supervisor and every process below it (workers and their sandboxes) is what the fleet really holds. Idle CPU: the supervisor's own over ${IDLE_CPU_MS / 1000} s with every agent idle. ` +
      "Teardown: a `shutdown` request until the supervisor exited, having stopped every worker; then every process the tree had is checked gone (same pid and start time, not a zombie). " +
      "Other CPU: busy cores of everything but this benchmark's processes while spawning.",
    "",
    table(
      [
        "agents",
        "spawn → all idle (ms)",
        "list while spawning, open conn. (ms)",
        "list while spawning, new conn. (ms)",
        "list idle, open conn. (ms)",
        "list idle, new conn. (ms)",
        "CPU per agent to idle, supervisor + worker (ms)",
        "supervisor RSS (MB)",
        "RSS per worker (MB, median)",
        "summed PSS (MB)",
        "PSS per process (MB)",
        "supervisor CPU idle (% of a core)",
        "teardown (ms)",
        "left after",
        "other CPU (cores)",
      ],
      rows,
    ),
    "",
    `Targets at ${big.agents} agents: all idle in < 30 s (${fmt(big.spawnMs / 1000, 1)} s: ${verdict(big.spawnMs < 30_000)}), ` +
      `supervisor RSS < 300 MB (${fmt(big.supervisorRssMb, 0)} MB: ${verdict(big.supervisorRssMb < 300)}), ` +
      `summed PSS < 8 GB (${fmt(big.totalPssMb / 1024, 2)} GB: ${verdict(big.totalPssMb < 8 * 1024)}), ` +
      `\`list\` in < 200 ms (worst idle round trip ${fmt(listWorst, 0)} ms: ${verdict(listWorst < 200)}; while spawning, worst ${LISTERS ? `${fmt(Math.max(...big.listDuringSpawn, ...big.listDuringSpawnFresh), 0)} ms` : "not asked"}), ` +
      `teardown < 5 s with none left (${fmt(big.teardownMs / 1000, 1)} s, ${big.leftAfter} left: ${verdict(big.teardownMs < 5_000 && big.leftAfter === 0)}). ` +
      `One \`list\` answer at ${big.agents} agents is ${fmt(big.listBytes / 1024, 0)} KB of JSON.`,
    ...(IDLE_FLEET[0] === 0 ? [] : ["", await idleFleet()]),
  ].join("\n");
}
