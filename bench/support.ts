/** What several benchmark sections share: the built binaries, and a real `pi-orch serve` on a temp home. */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { supervisorNodeFlags } from "../cli/serve/node-flags.js";
import { IpcClient } from "../ipc/client.js";

/** The repository root. */
export const ROOT = resolve(import.meta.dirname, "..");
/** The built `pi` worker CLI, its ESM bundle (`npm run build` first). */
export const PI = join(ROOT, "dist/cli/pi.js");
/** The built `pi` bin: the worker as CommonJS with its V8 code cache (the supervisor's default worker). */
export const PI_CJS = join(ROOT, "dist/cli/pi.cjs");
/** The built `pi-orch` CLI. */
export const PI_ORCH = join(ROOT, "dist/cli/pi-orch.js");

/** A running `pi-orch serve` and a client connected to it. */
export interface Serve {
  proc: ChildProcess;
  home: string;
  client: IpcClient;
  /** Shut the supervisor down, wait for it to exit, remove its home. */
  close(): Promise<void>;
}

/**
 * Start `pi-orch serve` on a temp home and connect to it; nothing is left behind if it
 * fails to start. `nodeArgs` go to node before the script: by default the flags a
 * command's auto-start gives the supervisor (`PI_ORCH_SUPERVISOR_NODE_FLAGS`). `orch` is
 * the built `pi-orch` to start (another checkout's, for a before/after in one run).
 */
export async function startServe(
  env: NodeJS.ProcessEnv = {},
  nodeArgs: readonly string[] = supervisorNodeFlags(),
  orch: string = PI_ORCH,
): Promise<Serve> {
  const home = mkdtempSync(join(tmpdir(), "pi-bench-orch-"));
  const proc = spawn(process.execPath, [...nodeArgs, orch, "--home", home, "serve"], {
    env: { ...process.env, ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  let client: IpcClient;
  try {
    await new Promise<void>((ready, fail) => {
      let out = "";
      proc.stdout!.on("data", (c: Buffer) => {
        out += c.toString();
        if (out.includes("listening on")) ready();
      });
      proc.once("exit", (code) => fail(new Error(`serve exited (${code}) before listening`)));
    });
    client = await IpcClient.connect({ home });
  } catch (err) {
    proc.kill("SIGKILL");
    await exited;
    rmSync(home, { recursive: true, force: true });
    throw err;
  }
  return {
    proc,
    home,
    client,
    async close() {
      await client.shutdown().catch(() => {});
      await client.close();
      await exited;
      rmSync(home, { recursive: true, force: true });
    },
  };
}
