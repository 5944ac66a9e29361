/**
 * A long-running `pi-orch` process for tests (a queue worker, a producer): its output
 * as it comes, a wait for a line that matches (rejecting when the process exits
 * first, with what it printed), and a way to find and kill every process that carries
 * an environment marker, so a test removes even what a SIGKILLed parent left behind.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";

/** The built `pi-orch` bin. */
export const PI_ORCH_BIN = resolve(import.meta.dirname, "../../dist/cli/pi-orch.js");

/** How a process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** One `pi-orch` child process. */
export class CliProcess {
  private out = "";
  private err = "";
  private readonly waiters = new Set<() => void>();
  readonly exited: Promise<Exit>;

  private constructor(readonly proc: ChildProcess) {
    proc.stdout!.on("data", (c: Buffer) => this.append("out", c.toString()));
    proc.stderr!.on("data", (c: Buffer) => this.append("err", c.toString()));
    this.exited = new Promise((r) =>
      proc.once("close", (code, signal) => {
        r({ code, signal });
        for (const w of [...this.waiters]) w();
      }),
    );
  }

  /** Start `node pi-orch.js ARGS` in `cwd`, with `env` added to this process's environment. */
  static start(args: string[], cwd: string, env: NodeJS.ProcessEnv): CliProcess {
    const proc = spawn(process.execPath, [PI_ORCH_BIN, ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    return new CliProcess(proc);
  }

  get pid(): number {
    return this.proc.pid!;
  }

  /** Everything written to stdout so far. */
  get stdout(): string {
    return this.out;
  }

  /** Everything written to stderr so far. */
  get stderr(): string {
    return this.err;
  }

  private append(which: "out" | "err", text: string): void {
    if (which === "out") this.out += text;
    else this.err += text;
    for (const w of [...this.waiters]) w();
  }

  /** Resolve with the first match of `re` in stderr (from `from` on); reject if the process exits without one. */
  waitFor(re: RegExp, from = 0): Promise<RegExpMatchArray> {
    return new Promise((resolvePromise, reject) => {
      const check = () => {
        const m = this.err.slice(from).match(re);
        if (m) {
          this.waiters.delete(check);
          resolvePromise(m);
        } else if (this.proc.exitCode !== null || this.proc.signalCode !== null) {
          this.waiters.delete(check);
          reject(
            new Error(
              `pi-orch exited (${this.proc.exitCode ?? this.proc.signalCode}) before printing ${re}:\n${this.err.slice(-3000)}`,
            ),
          );
        }
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Send a signal if it still runs. */
  signal(signal: NodeJS.Signals): void {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill(signal);
  }
}

/** Pids of live processes (not zombies) whose environment holds `KEY=VALUE`. */
export function processesWithEnv(entry: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      if (/^[ZX]$/.test(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0])) continue;
      if (readFileSync(`/proc/${name}/environ`, "utf8").split("\0").includes(entry)) found.push(Number(name));
    } catch {
      // exited meanwhile, or not ours to read
    }
  }
  return found;
}

/** SIGKILL every process whose environment holds `KEY=VALUE`. */
export function killProcessesWithEnv(entry: string): void {
  for (const pid of processesWithEnv(entry)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // exited since the scan
    }
  }
}
