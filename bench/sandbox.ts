/**
 * What the sandbox costs (shared/sandbox.ts): a worker's cold start (spawn until the
 * answer to the first `get_state`) without it, under bwrap as a fleet starts it, and as
 * `pi --sandbox on` (which starts itself again inside); and one RPC `bash` command's
 * round trip (`true`) in an unboxed worker (under its reaper, and without perl under the
 * watchdog subshell), an `on` one and a `strict` one (whose commands get a network
 * namespace from a nested bwrap). Interleaved runs, medians.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bwrapArgs, SANDBOX_DEFAULT_VAR, SANDBOXED_VAR, sandboxSupport } from "../shared/sandbox.js";
import { fmtOther, startLoadMeter } from "./load.js";
import { fmt, median, table } from "./stats.js";
import { PI_CJS } from "./support.js";

const RUNS = 15;
const CALLS = 20;
const WORKER = ["--mode", "rpc", "--provider", "faux", "--no-session"];

type Way = { name: string; file: string; args: string[]; env: NodeJS.ProcessEnv };

function ways(project: string, bwrap: string): Way[] {
  const plan = (mode: "on" | "strict") => bwrapArgs({ mode, cwd: project, writable: [], hidden: [], reveal: [] });
  return [
    // Off said outright: pi's own default is the sandbox where bwrap works (as a fleet's worker is told).
    {
      name: "worker, no sandbox",
      file: process.execPath,
      args: [PI_CJS, ...WORKER],
      env: { [SANDBOX_DEFAULT_VAR]: "off" },
    },
    // Where there is no perl, commands run without their reaper (the watchdog subshell instead).
    {
      name: "worker, no sandbox, no perl",
      file: process.execPath,
      args: [PI_CJS, ...WORKER],
      env: { [SANDBOX_DEFAULT_VAR]: "off", PATH: "/nonexistent" },
    },
    {
      name: "worker under bwrap (`spawn --sandbox on`)",
      file: bwrap,
      args: [...plan("on"), process.execPath, PI_CJS, ...WORKER],
      env: { [SANDBOXED_VAR]: "on" },
    },
    {
      name: "worker under bwrap (`spawn --sandbox strict`)",
      file: bwrap,
      args: [...plan("strict"), process.execPath, PI_CJS, ...WORKER],
      env: { [SANDBOXED_VAR]: "strict" },
    },
    {
      name: "`pi --sandbox on` (starts again inside)",
      file: process.execPath,
      args: [PI_CJS, ...WORKER, "--sandbox", "on"],
      env: {},
    },
  ];
}

/** Start `way` in `cwd` and resolve with the child once it answered `get_state`, and how long that took. */
function start(way: Way, cwd: string): Promise<{ child: ChildProcessWithoutNullStreams; ms: number }> {
  return new Promise((res, rej) => {
    const t0 = performance.now();
    const child = spawn(way.file, way.args, { cwd, env: { ...process.env, ...way.env }, stdio: "pipe" });
    let buf = "";
    const onData = (c: Buffer) => {
      buf += c.toString();
      if (!buf.includes('"command":"get_state"')) return;
      child.stdout.off("data", onData);
      res({ child, ms: performance.now() - t0 });
    };
    child.stdout.on("data", onData);
    child.on("error", rej);
    child.on("exit", (code) => rej(new Error(`${way.name} exited (${code}) before answering`)));
    child.stdin.write(`${JSON.stringify({ id: "s", type: "get_state" })}\n`);
  });
}

/** One RPC `bash` round trip (`true`), in ms. */
function bashOnce(child: ChildProcessWithoutNullStreams, id: string): Promise<number> {
  return new Promise((res) => {
    const t0 = performance.now();
    let buf = "";
    const onData = (c: Buffer) => {
      buf += c.toString();
      if (!buf.includes(`"id":"${id}"`)) return;
      child.stdout.off("data", onData);
      res(performance.now() - t0);
    };
    child.stdout.on("data", onData);
    child.stdin.write(`${JSON.stringify({ id, type: "bash", command: "true" })}\n`);
  });
}

const signed = (ms: number): string => `${ms < 0 ? "−" : "+"}${fmt(Math.abs(ms))}`;

async function stop(child: ChildProcessWithoutNullStreams): Promise<void> {
  child.removeAllListeners("exit");
  const gone = new Promise((r) => child.once("exit", r));
  child.stdin.end();
  setTimeout(() => child.kill("SIGKILL"), 5000).unref();
  await gone;
}

export async function run(): Promise<string> {
  const support = sandboxSupport();
  if (!support.ok) return `## Sandbox\n\nNot measured: ${support.reason}.\n`;
  const project = mkdtempSync(join(tmpdir(), "pi-orch-bench-sandbox-"));
  try {
    const all = ways(project, support.bwrap);
    const starts = new Map<string, number[]>(all.map((w) => [w.name, []]));
    const calls = new Map<string, number[]>(all.slice(0, 4).map((w) => [w.name, []]));
    const meter = startLoadMeter();
    for (let i = 0; i < RUNS; i++) {
      for (const way of all) {
        const { child, ms } = await start(way, project);
        starts.get(way.name)!.push(ms);
        if (calls.has(way.name) && i < 3)
          for (let c = 0; c < CALLS; c++) calls.get(way.name)!.push(await bashOnce(child, `b${i}-${c}`));
        await stop(child);
      }
    }
    const other = meter();
    const base = median(starts.get(all[0]!.name)!);
    const baseCall = median(calls.get(all[0]!.name)!);
    const startRows = all.map((w) => {
      const ms = median(starts.get(w.name)!);
      return [w.name, fmt(ms), `${fmt(ms / base, 2)}×`, signed(ms - base)];
    });
    const callRows = [...calls.entries()].map(([name, values]) => {
      const ms = median(values);
      return [name.replace("worker", "bash `true`"), fmt(ms), `${fmt(ms / baseCall, 2)}×`, signed(ms - baseCall)];
    });
    return [
      "## Sandbox",
      "",
      `What bubblewrap costs (\`npm run bench -- sandbox\`). Cold start: spawn until the answer to the first \`get_state\`, median of ${RUNS} interleaved runs. Tool start: an RPC \`bash\` command running \`true\`, round trip, median of ${3 * CALLS} calls in 3 workers of each kind. Other CPU during the runs: ${fmtOther(other)}.`,
      "",
      table(["worker", "cold start (ms)", "vs no sandbox", "added (ms)"], startRows),
      "",
      "An unboxed worker runs each command under its reaper (a perl child subreaper that holds everything the command starts, `env -i setsid` included; without perl, a watchdog subshell); a sandboxed one needs neither (the PID namespace ends every command with the worker), so `on` is faster per command; `strict` starts a nested bwrap per command for its network namespace.",
      "",
      table(["command", "round trip (ms)", "vs no sandbox", "added (ms)"], callRows),
      "",
    ].join("\n");
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
}
