/**
 * Driving the built `pi-orch` CLI from tests: a temp home and cwd, a `serve` process,
 * commands run as child processes, and cleanup that kills every process the test
 * started. Each process carries a tag in its environment (workers and their tools
 * inherit it), so cleanup finds them all without knowing their pids.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { isAlive, tempDir, waitForExit } from "./rpc-worker.js";

export const BIN = resolve(import.meta.dirname, "../../dist/cli/pi-orch.js");
/** The worker bin users run (`pi`), as in rpc-worker.ts. */
export const PI = resolve(import.meta.dirname, "../../dist/cli/pi.cjs");

export const TIMINGS = {
  pingIntervalMs: 200,
  pingDeadlineMs: 1000,
  startTimeoutMs: 15_000,
  stopGraceMs: 1000,
  killGraceMs: 500,
  rpcTimeoutMs: 10_000,
};
export const POLICY = { backoffInitialMs: 100, backoffMaxMs: 1000, intensity: 3, periodMs: 60_000 };

export type Json = Record<string, any>;
export interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A long-running command (attach, logs --follow) and what it printed so far. */
export interface Running {
  proc: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** One test's world: a temp home and cwd, a tag in every process's environment, the serve processes. */
export class World {
  constructor(private readonly extraEnv: NodeJS.ProcessEnv = {}) {}

  readonly tag = `pi-orch-test-${randomUUID()}`;
  readonly home = tempDir("pi-orch-home-");
  readonly cwd = tempDir("pi-orch-cwd-");
  readonly serves: ChildProcess[] = [];
  /** Everything each `serve` printed so far, stdout and stderr interleaved. */
  readonly serveOutput = new Map<ChildProcess, string>();

  get env(): NodeJS.ProcessEnv {
    return {
      ...process.env,
      PI_ORCH_TEST_TAG: this.tag,
      PI_ORCH_TIMINGS: JSON.stringify(TIMINGS),
      PI_ORCH_RESTART_POLICY: JSON.stringify(POLICY),
      NO_COLOR: "1",
      ANTHROPIC_API_KEY: "",
      OPENAI_API_KEY: "",
      ...this.extraEnv,
    };
  }

  /** Run one CLI command to completion (never starting a supervisor by itself). */
  cli(args: string[], timeoutMs = 30_000): Promise<Result> {
    return new Promise((resolvePromise, reject) => {
      const child = spawn(process.execPath, [BIN, "--home", this.home.path, "--no-autostart", ...args], {
        cwd: this.cwd.path,
        env: this.env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        reject(
          new Error(
            `pi-orch ${args.join(" ")} did not finish within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`,
          ),
        );
      }, timeoutMs);
      child.on("exit", (code) => {
        clearTimeout(timer);
        resolvePromise({ code, stdout, stderr });
      });
    });
  }

  /** Start a command that keeps running (attach, logs --follow); cleanup kills it. */
  start(args: string[]): Running {
    const proc = spawn(process.execPath, [BIN, "--home", this.home.path, "--no-autostart", ...args], {
      cwd: this.cwd.path,
      env: this.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    proc.stdout!.on("data", (c: Buffer) => (stdout += c.toString()));
    proc.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)));
    return { proc, stdout: () => stdout, stderr: () => stderr, exited };
  }

  /** Run a command that must succeed; returns stdout. */
  async ok(args: string[]): Promise<string> {
    const r = await this.cli(args);
    if (r.code !== 0)
      throw new Error(`pi-orch ${args.join(" ")} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    return r.stdout;
  }

  async json<T = Json>(args: string[]): Promise<T> {
    return JSON.parse(await this.ok([...args, "--json"])) as T;
  }

  /** Start `pi-orch serve` (node run with `nodeFlags`) and wait until it prints its socket path. */
  async serve(extra: string[] = [], nodeFlags: string[] = []): Promise<ChildProcess> {
    const proc = spawn(process.execPath, [...nodeFlags, BIN, "--home", this.home.path, "serve", ...extra], {
      cwd: this.cwd.path,
      env: this.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.serves.push(proc);
    let out = "";
    proc.stderr!.on("data", (c: Buffer) => {
      out += c.toString();
      this.serveOutput.set(proc, out);
    });
    await new Promise<void>((ready, fail) => {
      proc.stdout!.on("data", (c: Buffer) => {
        out += c.toString();
        this.serveOutput.set(proc, out);
        if (out.includes("listening on")) ready();
      });
      proc.once("exit", (code) => fail(new Error(`serve exited (${code}) before listening: ${out}`)));
    });
    return proc;
  }

  /** Poll `status --json` until `test` holds, or fail with the last status seen. */
  async waitForStatus(agent: string, test: (a: Json) => boolean, timeoutMs = 20_000): Promise<Json> {
    const deadline = Date.now() + timeoutMs;
    let last: Json | null = null;
    while (Date.now() < deadline) {
      const current: Json = await this.json(["status", agent]);
      last = current;
      if (test(current)) return current;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`agent ${agent} never reached the expected state; last: ${JSON.stringify(last, null, 2)}`);
  }

  /** Poll `read` until `test` holds (for output of long-running commands). */
  async until(what: string, read: () => string, test: (text: string) => boolean, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const text = read();
      if (test(text)) return text;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`timed out waiting for ${what}; got: ${read().slice(-2000)}`);
  }

  /** Events of an agent's log, in order. */
  events(agent: string): Json[] {
    const path = join(this.home.path, "logs", `${agent}.events.jsonl`);
    if (!existsSync(path)) return [];
    return readFileSync(path, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as Json);
  }

  /** A faux worker command replaying `replies`. */
  fauxWorker(replies: Json[]): string {
    const script = join(this.cwd.path, `script-${randomUUID()}.json`);
    writeFileSync(script, JSON.stringify(replies));
    return `${process.execPath} ${PI} --mode rpc --provider faux --faux-script ${script}`;
  }

  /** Pids of running processes carrying this world's tag (workers, their tools, serve). */
  taggedPids(): number[] {
    const pids: number[] = [];
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (readFileSync(`/proc/${entry}/environ`, "utf8").includes(this.tag) && isAlive(Number(entry)))
          pids.push(Number(entry));
      } catch {
        // gone, or not ours
      }
    }
    return pids;
  }

  async cleanup(): Promise<void> {
    for (const s of this.serves) if (s.exitCode === null && s.signalCode === null) s.kill("SIGKILL");
    for (const pid of this.taggedPids()) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    await Promise.all(this.taggedPids().map((pid) => waitForExit(pid, 5000)));
    this.home.cleanup();
    this.cwd.cleanup();
  }
}
