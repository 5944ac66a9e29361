/**
 * Load: 50 agents streaming at once for a minute (FAULTS_LOAD_MS
 * shortens it) with three socket subscribers, one of which never reads until the end.
 * The fast subscribers lose no event (every per-agent sequence is contiguous), the
 * slow one is told it lagged, and the supervisor's memory stays bounded.
 */
import { afterEach, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { IpcClient } from "../../ipc/client.js";
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";
import { FIXTURE, TestEnv, readPids } from "../supervisor/harness.js";
import { figures, killPids, rawConnect, until, waitAllGone, type RawConnection } from "./support.js";

const ROOT = resolve(import.meta.dirname, "../..");
const SERVE_CHILD = resolve(ROOT, "test/support/serve-child.ts");
const LOAD_MS = Number(process.env.FAULTS_LOAD_MS ?? 60_000);
const AGENTS = 50;

const env = new TestEnv();
const children: ChildProcess[] = [];
const clients: IpcClient[] = [];
const conns: RawConnection[] = [];
const pids = new Set<number>();
afterEach(async () => {
  for (const c of conns.splice(0)) c.socket.destroy();
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  killPids(pids);
  pids.clear();
  await env.cleanup();
});

/** VmRSS of a process in MB. */
function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Math.round(Number(m[1]) / 1024) : 0;
}

/** Per-agent sequence bookkeeping of one subscriber. */
class SeqCheck {
  readonly seen = new Map<string, { first: number; last: number; count: number; gaps: number }>();
  lagged = 0;
  total = 0;
  onMessage = (m: IpcStreamMessage) => {
    if (m.type === "lagged") {
      this.lagged++;
      return;
    }
    this.total++;
    const s = this.seen.get(m.agent);
    if (!s) this.seen.set(m.agent, { first: m.seq, last: m.seq, count: 1, gaps: 0 });
    else {
      if (m.seq !== s.last + 1) s.gaps++;
      s.last = m.seq;
      s.count++;
    }
  };
  /** Events missing between the first seen and `lastSeq` of every agent. */
  lost(lastSeq: Map<string, number>): number {
    let lost = 0;
    for (const [agent, last] of lastSeq) {
      const s = this.seen.get(agent);
      if (!s) lost += last;
      else lost += last - s.first + 1 - s.count;
    }
    return lost;
  }
}

describe("fault: load", () => {
  it(
    `50 agents streaming for ${LOAD_MS / 1000}s with three subscribers: no event lost, the slow one lags, memory bounded`,
    async () => {
      const home = env.home();
      const pidFile = env.pidFile(home);
      const opts = {
        home,
        defaultWorkerCommand: [process.execPath, FIXTURE],
        timings: {
          pingIntervalMs: 1_000,
          pingDeadlineMs: 15_000,
          stopGraceMs: 1_000,
          killGraceMs: 500,
          rpcTimeoutMs: 20_000,
        },
        ringSize: 1_000,
        subscriberBuffer: 5_000,
      };
      const child = spawn(process.execPath, ["--import", "jiti/register", SERVE_CHILD], {
        cwd: ROOT,
        env: { ...process.env, SERVE_CHILD_OPTS: JSON.stringify(opts) },
        stdio: ["ignore", "pipe", "inherit"],
      });
      children.push(child);
      pids.add(child.pid!);
      const exited = new Promise<void>((r) => child.once("exit", () => r()));
      await new Promise<void>((res, rej) => {
        child.stdout!.on("data", (c: Buffer) => c.toString().includes("ready") && res());
        void exited.then(() => rej(new Error("serve child exited before it was ready")));
      });
      const control = await IpcClient.connect({ home });
      clients.push(control);

      const names = Array.from({ length: AGENTS }, (_, i) => `load${i}`);
      await Promise.all(
        names.map((name) =>
          control.spawn({
            name,
            env: {
              FIXTURE_EVENTS: "40",
              FIXTURE_EVENT_DELAY_MS: "25",
              FIXTURE_PID_FILE: pidFile,
              FIXTURE_SESSION_DIR: home,
            },
          }),
        ),
      );
      const fast = [new SeqCheck(), new SeqCheck()];
      for (const check of fast) {
        const c = await IpcClient.connect({ home });
        clients.push(c);
        await c.subscribe({}, check.onMessage);
      }
      const slow = await rawConnect(resolve(home, "orch.sock"));
      conns.push(slow);
      await slow.write(`${JSON.stringify({ id: "slow", type: "subscribe" })}\n`);
      await slow.waitLines(1, 5_000);
      slow.socket.pause(); // the slow subscriber stops reading: its supervisor-side queue must not grow without bound

      // Keep every agent streaming: each run that ends starts the next.
      let loading = true;
      let runs = 0;
      const driver = await IpcClient.connect({ home });
      clients.push(driver);
      await driver.subscribe({}, (m) => {
        if (loading && m.type === "event" && m.event.type === "agent_end") {
          runs++;
          driver.rpc(m.agent, { type: "prompt", message: "more" }).catch(() => {});
        }
      });
      const rssStart = rssOf(child.pid!);
      const started = Date.now();
      await Promise.all(names.map((name) => control.rpc(name, { type: "prompt", message: "go" })));
      const samples: number[] = [];
      while (Date.now() - started < LOAD_MS) {
        await new Promise((r) => setTimeout(r, 1_000)); // the load's duration itself, sampled each second
        samples.push(rssOf(child.pid!));
      }
      loading = false;
      await until(async () => (await control.list()).every((a) => a.status === "idle"), 20_000, "all runs ended");
      const list = await control.list();
      const lastSeq = new Map(list.map((a) => [a.name, a.lastSeq]));
      const totalEvents = list.reduce((s, a) => s + a.lastSeq, 0);
      await until(
        () => fast.every((f) => [...lastSeq].every(([agent, last]) => (f.seen.get(agent)?.last ?? 0) >= last)),
        20_000,
        "fast subscribers caught up",
      );
      const lost = fast.map((f) => f.lost(lastSeq));
      const gaps = fast.map((f) => [...f.seen.values()].reduce((s, x) => s + x.gaps, 0));

      // The slow subscriber reads at last: it was told it lagged, and got no more than its buffer allowed.
      slow.socket.resume();
      await until(() => slow.lines.some((l) => l.type === "lagged"), 20_000, "a lagged notice");
      const slowLagged = slow.lines.filter((l) => l.type === "lagged").length;
      const rssMax = Math.max(...samples);
      const rssEnd = rssOf(child.pid!);
      await control.shutdown();
      await exited;
      const { workers } = readPids(pidFile);
      for (const pid of workers) pids.add(pid);
      const left = await waitAllGone([...workers, child.pid!], 5_000);
      figures("load-50-agents", {
        seconds: LOAD_MS / 1000,
        agents: AGENTS,
        runs,
        events: totalEvents,
        events_per_s: Math.round(totalEvents / (LOAD_MS / 1000)),
        fast_events_lost: lost.join("+"),
        fast_seq_gaps: gaps.join("+"),
        fast_lagged: fast.map((f) => f.lagged).join("+"),
        slow_lagged_notices: slowLagged,
        supervisor_rss_mb_start: rssStart,
        supervisor_rss_mb_max: rssMax,
        supervisor_rss_mb_end: rssEnd,
        processes_left: left.length,
      });
      expect(lost).toEqual([0, 0]);
      expect(gaps).toEqual([0, 0]);
      expect(fast.map((f) => f.lagged)).toEqual([0, 0]);
      expect(slowLagged).toBeGreaterThan(0);
      // Bounded: rings of 1,000 events per agent and one 5,000-message subscriber queue, whatever the duration.
      expect(rssMax).toBeLessThan(rssStart + 250);
      expect(left).toEqual([]);
    },
    LOAD_MS + 120_000,
  );
});
