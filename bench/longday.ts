/**
 * The long day (issue 16): 50 faux agents (real `pi --mode rpc` workers) stream for
 * 10 minutes through a real `pi-orch serve` at its default budgets, each run starting
 * the next on its `agent_end`, with one subscriber that reads everything. The
 * supervisor's RSS is sampled every 10 s; the curve and its maximum are the figures
 * (target: under 300 MB). Not in the default `npm run bench` (it takes the whole
 * duration): `npm run bench -- longday`; `LONGDAY_MINUTES` / `LONGDAY_AGENTS` shorten it.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { IpcClient } from "../ipc/client.js";
import { processCpuMs, startLoadMeter, fmtOther } from "./load.js";
import { fmt, rssMb, table } from "./stats.js";
import { startServe } from "./support.js";

const MINUTES = Number(process.env.LONGDAY_MINUTES ?? 10);
const AGENTS = Number(process.env.LONGDAY_AGENTS ?? 50);
const SAMPLE_MS = 10_000;
/** Words per reply and the pause between them: one `message_update` per word. */
const WORDS = 40;
const CHUNK_MS = 25;

/** A faux script with more replies than a worker can stream in the whole duration. */
function writeScript(dir: string): string {
  const text = Array.from({ length: WORDS }, (_, i) => `word${i}`).join(" ");
  const replies = Math.ceil((MINUTES * 60_000) / (WORDS * CHUNK_MS)) + 50;
  const path = join(dir, "script.jsonl");
  writeFileSync(
    path,
    `${Array.from({ length: replies }, () => JSON.stringify({ text, chunkDelayMs: CHUNK_MS })).join("\n")}\n`,
  );
  return path;
}

/** Run the long day and return its markdown section. */
export async function run(): Promise<string> {
  const work = mkdtempSync(join(tmpdir(), "pi-bench-longday-"));
  const serve = await startServe();
  const pid = serve.proc.pid!;
  try {
    const script = writeScript(work);
    const names = Array.from({ length: AGENTS }, (_, i) => `day${i}`);
    await Promise.all(
      names.map((name) =>
        serve.client.spawn({ name, cwd: work, provider: "faux", extraArgs: ["--faux-script", script] }),
      ),
    );

    let running = true;
    let runs = 0;
    let events = 0;
    const reader = await IpcClient.connect({ home: serve.home });
    let lagged = 0;
    await reader.subscribe({}, (m) => {
      if (m.type === "lagged") lagged++;
      else events++;
      if (running && m.type === "event" && m.event.type === "agent_end") {
        runs++;
        reader.rpc(m.agent, { type: "prompt", message: "more" }).catch(() => {});
      }
    });

    const samples: { at: number; rss: number; events: number; cpuMs: number; load: number }[] = [];
    const sample = async (at: number) =>
      samples.push({ at, rss: await rssMb(pid), events, cpuMs: processCpuMs(pid), load: loadavg()[0] });
    const meter = startLoadMeter();
    const started = Date.now();
    await sample(0);
    await Promise.all(names.map((name) => serve.client.rpc(name, { type: "prompt", message: "go" })));
    const durationMs = MINUTES * 60_000;
    for (let next = SAMPLE_MS; next <= durationMs; next += SAMPLE_MS) {
      // The load's duration itself, sampled every 10 s.
      await new Promise((r) => setTimeout(r, Math.max(0, started + next - Date.now())));
      await sample(next / 1000);
      process.stderr.write(
        `longday: ${next / 1000} s, supervisor RSS ${samples.at(-1)!.rss.toFixed(0)} MB, ${events} events\n`,
      );
    }
    running = false;
    const reading = meter();
    const list = await serve.client.list();
    const idleOrBusy = list.filter((a) => a.status === "idle" || a.status === "busy").length;
    const restarts = list.reduce((s, a) => s + a.restarts, 0);
    await reader.close();

    const rows = samples.map((s, i) => {
      const prev = samples[i - 1];
      const rate = prev ? (s.events - prev.events) / (s.at - prev.at || 1) : 0;
      const cpu = prev ? (s.cpuMs - prev.cpuMs) / (s.events - prev.events || 1) : NaN;
      return [`${s.at}`, s.rss.toFixed(0), prev ? Math.round(rate) : "", prev ? fmt(cpu, 3) : "", s.load.toFixed(1)];
    });
    const rss = samples.map((s) => s.rss);
    const max = Math.max(...rss);
    const totalCpu = samples.at(-1)!.cpuMs - samples[0]!.cpuMs;
    return [
      `## Long day: ${AGENTS} faux agents streaming for ${MINUTES} min`,
      "",
      `A real \`pi-orch serve\` at its default budgets (ring 1 MiB or 10,000 events per agent, subscriber queue 16 MiB or 10,000), ${AGENTS} real \`pi --mode rpc\` workers on the faux provider, each reply ${WORDS} words ${CHUNK_MS} ms apart (one \`message_update\` per word), the next run started on every \`agent_end\`; one subscriber reads everything. Supervisor RSS sampled every ${SAMPLE_MS / 1000} s.`,
      "",
      `Supervisor RSS: ${rss[0]!.toFixed(0)} MB at the start, **${max.toFixed(0)} MB max**, ${rss.at(-1)!.toFixed(0)} MB at the end (target: under 300 MB). ${runs} runs, ${events} events (${Math.round(events / (MINUTES * 60))}/s), lagged notices ${lagged}; supervisor CPU ${fmt(totalCpu / Math.max(1, events), 3)} ms per event; agents idle or busy at the end ${idleOrBusy}/${AGENTS}, restarts ${restarts}. Other CPU use during the run: ${fmtOther(reading)} cores.`,
      "",
      table(["s", "supervisor RSS MB", "events/s", "supervisor CPU ms/event", "load avg (1 min)"], rows),
    ].join("\n");
  } finally {
    await serve.close();
    rmSync(work, { recursive: true, force: true });
  }
}
