/**
 * Test driver for a real `pi --mode rpc` child process: send commands, await
 * responses by id, await events by predicate. Every worker started here is killed
 * by `killAllWorkers()` (call it in afterEach) so a failing test leaks nothing.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { LineSplitter } from "../../shared/jsonl.js";

/**
 * Path of the built worker bin: `pi.cjs`, what the package's `pi` bin and the supervisor's
 * default worker run (the bundle with its code cache; `pi.js` is the same code without it).
 */
export const PI_BIN = resolve(import.meta.dirname, "../../dist/cli/pi.cjs");

type Json = Record<string, any>;

const live = new Set<RpcWorker>();

/** One worker process and everything it said. */
export class RpcWorker {
  readonly proc: ChildProcess;
  readonly received: Json[] = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private waiters: { test: (l: Json) => boolean; resolve: (l: Json) => void; from: number }[] = [];
  private nextId = 1;

  constructor(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; bin?: string[] }) {
    const command = opts.bin ?? [process.execPath, PI_BIN];
    this.proc = spawn(command[0], [...command.slice(1), ...args], {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    live.add(this);
    const splitter = new LineSplitter({
      onLine: (line) => {
        let value: Json;
        try {
          value = JSON.parse(line);
        } catch {
          value = { type: "__not_json__", line };
        }
        this.received.push(value);
        this.waiters = this.waiters.filter((w) => {
          if (!w.test(value)) return true;
          w.resolve(value);
          return false;
        });
      },
    });
    this.proc.stdout!.on("data", (c: Buffer) => splitter.push(c));
    this.proc.stderr!.on("data", (c: Buffer) => this.stderr.push(c.toString("utf8")));
    this.exited = new Promise((res) => this.proc.on("exit", (code, signal) => res({ code, signal })));
    this.proc.stdin!.on("error", () => undefined);
    void this.exited.then(() => live.delete(this));
  }

  /** Write a raw line (no JSON encoding), for bad-input tests. */
  writeRaw(text: string): void {
    this.proc.stdin!.write(text);
  }

  /** Send a command and wait for its response. */
  async request(command: Json, timeoutMs = 20_000): Promise<Json> {
    const id = command.id ?? `t${this.nextId++}`;
    const waiting = this.waitFor((l) => l.type === "response" && l.id === id, timeoutMs, 0);
    this.proc.stdin!.write(`${JSON.stringify({ ...command, id })}\n`);
    return waiting;
  }

  /**
   * Resolve with the first line (received from index `from` on, default: everything
   * received so far) that matches. Rejects after the timeout with what was seen, for a readable failure.
   */
  waitFor(test: (l: Json) => boolean, timeoutMs = 20_000, from = 0): Promise<Json> {
    const seen = this.received.slice(from).find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolvePromise, reject) => {
      const timer = setTimeout(() => {
        reject(
          new Error(
            `timed out after ${timeoutMs} ms; last lines: ${JSON.stringify(this.received.slice(-5).map(brief))}\nstderr: ${this.stderr.join("").slice(-2000)}`,
          ),
        );
      }, timeoutMs);
      this.waiters.push({
        test,
        from,
        resolve: (l) => {
          clearTimeout(timer);
          resolvePromise(l);
        },
      });
    });
  }

  /** Wait for an event of this type. */
  event(type: string, timeoutMs?: number, from?: number): Promise<Json> {
    return this.waitFor((l) => l.type === type, timeoutMs, from);
  }

  /** Types of the events received (responses excluded). */
  eventTypes(from = 0): string[] {
    return this.received
      .slice(from)
      .filter((l) => l.type !== "response")
      .map((l) => l.type);
  }

  closeStdin(): void {
    this.proc.stdin!.end();
  }

  kill(signal: NodeJS.Signals = "SIGKILL"): void {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill(signal);
  }
}

function brief(l: Json): unknown {
  if (l.type === "message_update") return { type: l.type, sub: l.assistantMessageEvent?.type };
  const s = JSON.stringify(l);
  return s.length > 300 ? `${s.slice(0, 300)}…` : l;
}

/** Kill every worker still running; for afterEach. */
export async function killAllWorkers(): Promise<void> {
  const all = [...live];
  for (const w of all) w.kill("SIGKILL");
  await Promise.all(all.map((w) => w.exited));
}

/**
 * True while a process with this pid runs. A zombie counts as gone: in a container
 * whose PID 1 does not reap orphans, a killed grandchild stays a zombie forever.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return true;
  }
}

/** Wait until a pid is gone (polls /proc state through kill(0); a process has no exit event for non-children). */
export async function waitForExit(pid: number, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return !isAlive(pid);
}

/** A temp folder removed by the returned cleanup. */
export function tempDir(prefix = "pi-orch-test-"): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}
