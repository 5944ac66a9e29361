/**
 * Worker cold start (spawn until the response to the first `get_state`) and idle
 * RSS after it, side by side with `node -e 0` and, where installed, upstream pi.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fmt, median, rssMb, table } from "./stats.js";
import { PI, ROOT } from "./support.js";

const RUNS = 15;
const UPSTREAM = join(ROOT, "test/upstream/node_modules/@mariozechner/pi-coding-agent/dist/cli.js");
const EXAMPLES = join(ROOT, "test/upstream/node_modules/@mariozechner/pi-coding-agent/examples/extensions");
/** Ten of pi's example extensions that make sense headless, loaded unchanged. */
const TEN_EXAMPLES = [
  "permission-gate.ts", "protected-paths.ts", "dynamic-tools.ts", "todo.ts", "session-name.ts",
  "bookmark.ts", "input-transform.ts", "event-bus.ts", "structured-output.ts", "plan-mode",
];

/** Spawn and time until exit. */
function timeExit(cmd: string, args: string[]): Promise<number> {
  return new Promise((res, rej) => {
    const t0 = performance.now();
    const p = spawn(cmd, args, { stdio: "ignore" });
    p.on("error", rej);
    p.on("exit", () => res(performance.now() - t0));
  });
}

/** Spawn an RPC worker, time until the `get_state` response, read its RSS, close it. */
function timeFirstState(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ ms: number; rss: number }> {
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
      p.stdin.end();
      p.on("exit", () => res({ ms, rss }));
      setTimeout(() => p.kill("SIGKILL"), 5000).unref();
    });
    p.on("exit", (code) => {
      if (!done) rej(new Error(`${args.join(" ")} exited (${code}) before answering get_state`));
    });
    p.stdin.write(JSON.stringify({ id: "1", type: "get_state" }) + "\n");
  });
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
  const ours = [PI, "--mode", "rpc", "--provider", "faux", "--no-session"];
  const withExtensions = existsSync(EXAMPLES) ? [...ours, ...TEN_EXAMPLES.flatMap((e) => ["-e", join(EXAMPLES, e)])] : null;
  const upstream = existsSync(UPSTREAM) ? [UPSTREAM, "--mode", "rpc", "--no-session", "--provider", "mock", "--model", "mock-1"] : null;
  const nodeMs: number[] = [];
  const oursMs: number[] = [];
  const oursRss: number[] = [];
  const upMs: number[] = [];
  const upRss: number[] = [];
  const extMs: number[] = [];
  const extRss: number[] = [];
  const nodeRss: number[] = [];
  try {
    for (let i = 0; i < RUNS; i++) {
      nodeMs.push(await timeExit(process.execPath, ["-e", "0"]));
      const idle = await timeFirstState(process.execPath, ["-e", "process.stdin.on('data',()=>process.stdout.write(JSON.stringify({id:'1',type:'response',command:'get_state',success:true})+'\\n'))"], {}, cwd);
      nodeRss.push(idle.rss);
      const o = await timeFirstState(process.execPath, ours, { PI_ORCH_HOME: home }, cwd);
      oursMs.push(o.ms);
      oursRss.push(o.rss);
      if (withExtensions) {
        const e = await timeFirstState(process.execPath, withExtensions, { PI_ORCH_HOME: home }, cwd);
        extMs.push(e.ms);
        extRss.push(e.rss);
      }
      if (upstream) {
        const u = await timeFirstState(process.execPath, upstream, { PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1" }, cwd);
        upMs.push(u.ms);
        upRss.push(u.rss);
      }
    }
  } finally {
    for (const d of [home, agentDir, cwd]) rmSync(d, { recursive: true, force: true });
  }
  const base = median(nodeMs);
  const rows: (string | number)[][] = [
    ["`node -e 0` (spawn to exit)", fmt(base), "1.0×", `${fmt(median(nodeRss))} (a stdin echo loop)`],
    ["our `pi --mode rpc` (faux)", fmt(median(oursMs)), `${fmt(median(oursMs) / base)}×`, fmt(median(oursRss))],
  ];
  if (withExtensions) {
    rows.push(["our `pi --mode rpc` + 10 of pi's example extensions", fmt(median(extMs)), `${fmt(median(extMs) / base)}×`, fmt(median(extRss))]);
  }
  if (upstream) {
    rows.push(["upstream `pi --mode rpc` 0.73.1", fmt(median(upMs)), `${fmt(median(upMs) / base)}×`, fmt(median(upRss))]);
  }
  const verdict =
    `Targets: cold start within 3× \`node -e 0\` (measured ${fmt(median(oursMs) / base)}×), idle RSS under 80 MB (measured ${fmt(median(oursRss))} MB).` +
    (withExtensions ? ` With 10 example extensions: ${fmt(median(extMs) / median(oursMs))}× the start without (target at most 1.5×).` : "") +
    (upstream ? ` Against upstream pi: ${fmt(median(upMs) / median(oursMs))}× faster to first answer, ${fmt(median(upRss) - median(oursRss))} MB less memory.` : " Upstream pi is not installed (test/upstream), so it has no row.");
  return [
    "## Worker start-up",
    "",
    `Cold start = spawn until the response to the first \`get_state\`; RSS read 300 ms after it. Median of ${RUNS} interleaved runs.`,
    "",
    table(["process", "cold start (ms)", "vs node -e 0", "idle RSS (MB)"], rows),
    "",
    verdict,
  ].join("\n");
}
