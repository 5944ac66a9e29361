/**
 * A tool-heavy moment of a worker: one RPC `bash` command printing 20 MB, streamed to the
 * client as `bash_execution_update` events and kept in a temp file. The start-up bench runs
 * it in workers started each way it compares, to show what a start-up setting (the malloc
 * settings) costs once the worker works.
 */
import { spawn } from "node:child_process";
import { cpuMs, privateDirtyMb } from "./stats.js";

/** The command: 20 MB of 37-byte lines. */
export const BASH_20MB = "yes abcdefghijklmnopqrstuvwxyz0123456789 | head -c 20000000";

/** What one run measured. */
export interface BashOutputRun {
  /** The worker's CPU (all threads) from the command to its answer, ms. */
  cpu: number;
  /** Wall time from the command to its answer, ms. */
  ms: number;
  /** The worker's private dirty memory 1.5 s after the answer, MB. */
  priv: number;
}

/**
 * Start `node args` (an RPC worker), wait for its first answer and 500 ms of quiet, run
 * BASH_20MB, and read its CPU and memory; the worker is gone when this resolves.
 */
export function bashOutputRun(
  node: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<BashOutputRun> {
  return new Promise((res, rej) => {
    const p = spawn(node, args, { stdio: ["pipe", "pipe", "ignore"], env: { ...process.env, ...env }, cwd });
    // Only the tail is kept: the answer is the last line, and 20 MB of events went before it.
    let tail = "";
    let waiting: { id: string; then: () => void } | undefined;
    const fail = (err: Error): void => {
      p.kill("SIGKILL");
      rej(err);
    };
    p.on("error", fail);
    p.on("exit", (code) => {
      if (waiting) fail(new Error(`${args.join(" ")} exited (${code}) before answering ${waiting.id}`));
    });
    p.stdout.on("data", (c: Buffer) => {
      tail = (tail + c.toString()).slice(-100_000);
      const w = waiting;
      if (w && tail.includes(`{"id":"${w.id}","type":"response"`)) {
        waiting = undefined;
        tail = "";
        w.then();
      }
    });
    const ask = (id: string, command: Record<string, unknown>): Promise<void> =>
      new Promise((then) => {
        waiting = { id, then };
        p.stdin.write(`${JSON.stringify({ id, type: command.type, ...command })}\n`);
      });
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
    void (async () => {
      await ask("state", { type: "get_state" });
      await pause(500);
      const cpu0 = await cpuMs(p.pid!);
      const t0 = performance.now();
      await ask("bash", { type: "bash", command: BASH_20MB });
      const ms = performance.now() - t0;
      const cpu = (await cpuMs(p.pid!)) - cpu0;
      await pause(1500);
      const priv = await privateDirtyMb(p.pid!);
      p.stdin.end();
      const timer = setTimeout(() => p.kill("SIGKILL"), 5000);
      p.on("exit", () => {
        clearTimeout(timer);
        res({ cpu, ms, priv });
      });
    })().catch(fail);
  });
}
