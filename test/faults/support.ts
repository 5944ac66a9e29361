/**
 * Test support for the fault-injection suite: the figures every test prints (one
 * stable `FAULT <name> | key=value ...` line, collected into FAULTS.md), raw socket
 * connections that read whole lines, and pid bookkeeping to prove nothing is left.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createConnection, type Socket } from "node:net";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { IpcClient } from "../../ipc/client.js";
import { LineSplitter } from "../../shared/jsonl.js";
import { isAlive } from "../support/rpc-worker.js";

/** Print a test's measured figures in the stable format FAULTS.md is built from. */
export function figures(name: string, values: Record<string, string | number | boolean>): void {
  const body = Object.entries(values)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(" ");
  console.log(`FAULT ${name} | ${body}`);
}

/** Pids of `pids` that still run (zombies count as gone). */
export function leftAlive(pids: Iterable<number>): number[] {
  return [...new Set(pids)].filter((pid) => pid > 0 && isAlive(pid));
}

/** Wait until none of `pids` runs, or the deadline passes; returns the ones still alive. */
export async function waitAllGone(pids: Iterable<number>, timeoutMs = 10_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let left = leftAlive(pids);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    left = leftAlive(left);
  }
  return left;
}

/** SIGKILL every pid still alive (cleanup after a failed test). */
export function killPids(pids: Iterable<number>): void {
  for (const pid of new Set(pids)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/** A value that passed an `if`. */
export type Truthy<T> = Exclude<T, false | 0 | "" | null | undefined>;

/** Poll `test` until it returns a truthy value or the deadline passes (then throws with `what`). */
export async function until<T>(
  test: () => T | Promise<T>,
  timeoutMs: number,
  what: string,
  everyMs = 20,
): Promise<Truthy<Awaited<T>>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await test();
    if (value) return value as Truthy<Awaited<T>>;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A raw socket connection that collects every line it receives as parsed JSON. */
export interface RawConnection {
  socket: Socket;
  lines: any[];
  /** Raw bytes written as they are. */
  write(data: string | Buffer): Promise<void>;
  /** Resolves once `n` lines arrived in total, or the connection closed (resolves with the count). */
  waitLines(n: number, timeoutMs: number): Promise<number>;
  readonly closed: boolean;
}

/** Connect to a unix socket and collect its lines. */
export function rawConnect(path: string): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    const lines: any[] = [];
    let closed = false;
    let waiters: { n: number; resolve: (n: number) => void }[] = [];
    const settle = () => {
      waiters = waiters.filter((w) => {
        if (lines.length < w.n && !closed) return true;
        w.resolve(lines.length);
        return false;
      });
    };
    const splitter = new LineSplitter({
      maxLineBytes: 64 * 1024 * 1024,
      onLine: (line) => {
        try {
          lines.push(JSON.parse(line));
        } catch {
          lines.push({ __not_json__: line });
        }
        settle();
      },
    });
    socket.on("data", (c: Buffer) => splitter.push(c));
    socket.on("error", () => {});
    socket.on("close", () => {
      closed = true;
      settle();
    });
    socket.once("connect", () =>
      resolve({
        socket,
        lines,
        get closed() {
          return closed;
        },
        write: (data) =>
          new Promise<void>((res) => {
            if (socket.destroyed) return res();
            socket.write(data, () => res());
          }),
        waitLines: (n, timeoutMs) =>
          new Promise<number>((res) => {
            if (lines.length >= n || closed) return res(lines.length);
            // The deadline timer is cleared when the lines arrive first, so no timer outlives the wait.
            const timer = setTimeout(() => {
              waiters = waiters.filter((x) => x !== w);
              res(lines.length);
            }, timeoutMs);
            const w = {
              n,
              resolve: (count: number) => {
                clearTimeout(timer);
                res(count);
              },
            };
            waiters.push(w);
          }),
      }),
    );
    socket.once("error", reject);
  });
}

/** Resident set size of this process in MB. */
export function rssMb(): number {
  return Math.round(process.memoryUsage().rss / 1024 / 1024);
}

const ROOT = resolve(import.meta.dirname, "../..");
const SERVE_CHILD = resolve(ROOT, "test/support/serve-child.ts");

/** Processes and clients a test file ends after each test. */
export interface Owned {
  children: ChildProcess[];
  clients: IpcClient[];
}

/**
 * A supervisor server in its own process (test/support/serve-child.ts, `opts` as its
 * options), so a test can SIGKILL it; resolves once its socket listens, with a client
 * connected. The child and the client join `owned`, for the test file's afterEach.
 */
export async function serveChild(
  opts: Record<string, unknown>,
  owned: Owned,
): Promise<{ child: ChildProcess; client: IpcClient; exited: Promise<void> }> {
  const child = spawn(process.execPath, ["--import", "jiti/register", SERVE_CHILD], {
    cwd: ROOT,
    env: { ...process.env, SERVE_CHILD_OPTS: JSON.stringify(opts) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  owned.children.push(child);
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  let stderr = "";
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  await new Promise<void>((res, rej) => {
    let out = "";
    child.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      if (out.includes("ready ")) res();
    });
    void exited.then(() => rej(new Error(`serve child exited before it was ready: ${stderr}`)));
  });
  const client = await IpcClient.connect({ home: opts.home as string });
  owned.clients.push(client);
  return { child, client, exited };
}

/** An agent's events files in `logs`, oldest first: `.N` ... `.1`, then the current one. */
export function eventFiles(logs: string, name: string): string[] {
  const base = `${name}.events.jsonl`;
  const rotated = readdirSync(logs)
    .map((f) => (f.startsWith(`${base}.`) ? Number(f.slice(base.length + 1)) : NaN))
    .filter((n) => Number.isInteger(n))
    .sort((a, b) => b - a)
    .map((n) => resolve(logs, `${base}.${n}`));
  return [...rotated, resolve(logs, base)];
}

/** What an agent's events files hold, against the events a subscriber saw. */
export interface LogAudit {
  files: number;
  onDisk: number;
  /** Seqs on disk twice. */
  duplicates: number;
  /** Seqs on disk not above the one before. */
  decreasing: number;
  /** Events seen that are not on disk. */
  missing: number;
  /** Events seen whose event differs on disk. */
  differ: number;
}

/** Read `agent`'s events files in `logs` and check them against `seen` ("agent#seq" -> event JSON). */
export function auditEventLog(logs: string, agent: string, seen: ReadonlyMap<string, string>): LogAudit {
  const audit: LogAudit = { files: 0, onDisk: 0, duplicates: 0, decreasing: 0, missing: 0, differ: 0 };
  const bySeq = new Map<number, string>();
  let last = 0;
  for (const file of eventFiles(logs, agent)) {
    if (!existsSync(file)) continue;
    audit.files++;
    for (const line of readFileSync(file, "utf8").split("\n")) {
      if (!line) continue;
      const { seq, event } = JSON.parse(line) as { seq: number; event: unknown };
      audit.onDisk++;
      if (bySeq.has(seq)) audit.duplicates++;
      if (seq <= last) audit.decreasing++;
      last = seq;
      bySeq.set(seq, JSON.stringify(event));
    }
  }
  for (const [key, json] of seen) {
    const [name, seq] = key.split("#");
    if (name !== agent) continue;
    const stored = bySeq.get(Number(seq));
    if (stored === undefined) audit.missing++;
    else if (stored !== json) audit.differ++;
  }
  return audit;
}

/** The audits of several agents, added up. */
export function sumAudits(audits: LogAudit[]): LogAudit {
  const total: LogAudit = { files: 0, onDisk: 0, duplicates: 0, decreasing: 0, missing: 0, differ: 0 };
  for (const a of audits) for (const k of Object.keys(total) as (keyof LogAudit)[]) total[k] += a[k];
  return total;
}
