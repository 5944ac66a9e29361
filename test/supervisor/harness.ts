/**
 * Test support for supervisor and IPC suites: temp homes, a supervisor on the
 * fixture worker with short timings, an event recorder to wait on, and cleanup of
 * every process, socket and folder a test made.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { isDeadState, readProcStat } from "../../shared/proc.js";
import { killProcessesWithEnv } from "../support/cli-process.js";
import { parseWorkerNice } from "../../supervisor/priority.js";
import { Supervisor, type SupervisorOptions } from "../../supervisor/supervisor.js";
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";
import type { AgentTimings } from "../../supervisor/types.js";

/** The protocol fixture worker. */
export const FIXTURE = resolve(import.meta.dirname, "../support/fixture-worker.mjs");

/** Short timings so presence and teardown tests take well under a second. */
export const FAST: Partial<AgentTimings> = {
  pingIntervalMs: 100,
  pingDeadlineMs: 500,
  startTimeoutMs: 10_000,
  stallTimeoutMs: 60_000,
  stopGraceMs: 1_000,
  killGraceMs: 500,
  rpcTimeoutMs: 5_000,
};

/** Whether a pid still runs; a zombie (killed, not yet reaped by its new parent) counts as dead. */
export function alive(pid: number): boolean {
  const stat = readProcStat(pid);
  if (stat) return !isDeadState(stat.state);
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Pids the fixture wrote to its pid file, by kind. */
export function readPids(file: string): { workers: number[]; children: number[] } {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return { workers: [], children: [] };
  }
  const workers: number[] = [];
  const children: number[] = [];
  for (const line of text.split("\n")) {
    const [kind, pid] = line.split(" ");
    if (kind === "worker") workers.push(Number(pid));
    if (kind === "child") children.push(Number(pid));
  }
  return { workers, children };
}

/** Records stream messages and resolves waits as soon as a matching one arrives. */
export class Recorder {
  readonly messages: IpcStreamMessage[] = [];
  private waiters: { test: (m: IpcStreamMessage) => boolean; resolve: (m: IpcStreamMessage) => void }[] = [];

  readonly sink = {
    write: (m: IpcStreamMessage) => {
      this.messages.push(m);
      this.waiters = this.waiters.filter((w) => {
        if (!w.test(m)) return true;
        w.resolve(m);
        return false;
      });
    },
  };

  /** The first message (already received or future) that satisfies `test`. */
  waitFor(
    test: (m: IpcStreamMessage) => boolean,
    timeoutMs = 10_000,
    what = "a matching event",
  ): Promise<IpcStreamMessage> {
    const seen = this.messages.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((res, rej) => {
      const timer = setTimeout(
        () => rej(new Error(`timed out waiting for ${what}; got: ${this.summary()}`)),
        timeoutMs,
      );
      this.waiters.push({ test, resolve: (m) => (clearTimeout(timer), res(m)) });
    });
  }

  /** Wait for an `agent_status` event of `agent` with `status` (and optional extra test). */
  status(
    agent: string,
    status: string,
    extra: (e: Record<string, unknown>) => boolean = () => true,
    timeoutMs = 10_000,
  ) {
    return this.waitFor(
      (m) =>
        m.type === "event" &&
        m.agent === agent &&
        m.event.type === "agent_status" &&
        m.event.status === status &&
        extra(m.event),
      timeoutMs,
      `${agent} → ${status}`,
    );
  }

  /** Status sequence of `agent`, for assertions and failure messages. */
  statuses(agent: string): string[] {
    return this.messages
      .filter((m) => m.type === "event" && m.agent === agent && m.event.type === "agent_status")
      .map((m) => String((m as { event: Record<string, unknown> }).event.status));
  }

  private summary(): string {
    return this.messages
      .slice(-30)
      .map((m) =>
        m.type === "event"
          ? `${m.agent}#${m.seq}:${String(m.event.type)}${m.event.status ? `=${String(m.event.status)}` : ""}`
          : `lagged ${m.from}-${m.to}`,
      )
      .join(" ");
  }
}

/** Everything a test created, removed by `cleanup()` in afterEach even when the test failed. */
export class TestEnv {
  private readonly homes: string[] = [];
  private readonly supervisors: Supervisor[] = [];
  private readonly pidFiles: string[] = [];

  /** A fresh 0700 home under the temp dir (short path: unix socket paths are limited to ~100 bytes). */
  home(): string {
    const home = mkdtempSync(join(tmpdir(), "po-"));
    chmodSync(home, 0o700);
    this.homes.push(home);
    return home;
  }

  /** A pid file path for FIXTURE_PID_FILE, checked at cleanup. */
  pidFile(home: string): string {
    const file = join(home, "pids.txt");
    this.pidFiles.push(file);
    return file;
  }

  /** A supervisor on the fixture worker, with a recorder subscribed to every agent. */
  supervisor(opts: Partial<SupervisorOptions> = {}): { sup: Supervisor; rec: Recorder; home: string } {
    const home = opts.home ?? this.home();
    const sup = Supervisor.open({
      home,
      defaultWorkerCommand: [process.execPath, FIXTURE],
      // As `serve` does: PI_ORCH_WORKER_NICE (0 under vitest, see vitest.config.ts), so
      // workers do not starve behind the suite's own forks; pass workerNice to override.
      workerNice: parseWorkerNice(process.env.PI_ORCH_WORKER_NICE) ?? undefined,
      ...opts,
      timings: { ...FAST, ...opts.timings },
    });
    this.supervisors.push(sup);
    const rec = new Recorder();
    sup.subscribe({ sink: rec.sink });
    return { sup, rec, home };
  }

  /** Track a supervisor made elsewhere. */
  track(sup: Supervisor): void {
    this.supervisors.push(sup);
  }

  async cleanup(): Promise<void> {
    await Promise.allSettled(this.supervisors.map((s) => s.killAll().then(() => s.shutdown())));
    for (const file of this.pidFiles) {
      const { workers, children } = readPids(file);
      for (const pid of [...workers, ...children]) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // already gone, as it should be
        }
      }
      // A worker forked just before its supervisor was SIGKILLed may still be booting, its pid
      // not yet in the file: find it by the environment it was started with.
      killProcessesWithEnv(`FIXTURE_PID_FILE=${file}`);
    }
    // A process killed just now may still be writing its session as it goes: retry the
    // removal instead of failing on ENOTEMPTY.
    for (const home of this.homes) rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    this.supervisors.length = 0;
    this.homes.length = 0;
    this.pidFiles.length = 0;
  }
}
