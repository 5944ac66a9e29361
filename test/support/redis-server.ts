/**
 * A real `redis-server` for tests: started on a free 127.0.0.1 port with its own data
 * folder (AOF with fsync on every write, so a SIGKILL loses nothing), killable and
 * restartable on the same port and folder, stopped and removed by `stop()`. Readiness
 * is its own "Ready to accept connections" line, not a sleep.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Why redis tests cannot run here, or null when `redis-server` is installed. */
export function redisMissing(): string | null {
  const r = spawnSync("redis-server", ["--version"], { encoding: "utf8" });
  if (r.error || r.status !== 0)
    return "redis-server is not installed (apt-get install redis-server; .ci/run installs it)";
  return null;
}

/** A free TCP port on 127.0.0.1 (the OS picks it; closed again before it is used). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/** One redis-server the test owns. */
export class RedisServer {
  private proc: ChildProcess | null = null;
  private constructor(
    readonly port: number,
    readonly dir: string,
  ) {}

  /** Start a fresh server. */
  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort(), mkdtempSync(join(tmpdir(), "pi-orch-test-redis-")));
    await server.launch();
    return server;
  }

  /** `redis://127.0.0.1:PORT/QUEUE`. */
  url(queue: string): string {
    return `redis://127.0.0.1:${this.port}/${queue}`;
  }

  private launch(): Promise<void> {
    const args = [
      "--port",
      String(this.port),
      "--bind",
      "127.0.0.1",
      "--dir",
      this.dir,
      "--save",
      "",
      "--appendonly",
      "yes",
      "--appendfsync",
      "always",
      "--logfile",
      "",
    ];
    const proc = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
    this.proc = proc;
    return new Promise((resolve, reject) => {
      let out = "";
      const onData = (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("Ready to accept connections")) {
          proc.stdout!.off("data", onData);
          proc.stdout!.resume();
          resolve();
        }
      };
      proc.stdout!.on("data", onData);
      proc.stderr!.resume();
      proc.once("exit", (code) => reject(new Error(`redis-server exited (${code}) before it was ready:\n${out}`)));
    });
  }

  /** SIGKILL the server (a crash: only what AOF holds survives). */
  async kill(): Promise<void> {
    const proc = this.proc;
    this.proc = null;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise((r) => proc.once("exit", r));
    proc.kill("SIGKILL");
    await gone;
  }

  /** Start again on the same port and folder (after `kill()`). */
  restart(): Promise<void> {
    return this.launch();
  }

  /** Stop the server and remove its folder. */
  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
