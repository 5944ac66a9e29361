/**
 * Spill files (the full output of long commands) live in one folder per worker and go
 * with it: removed when the worker exits, and swept by the next worker when one was
 * SIGKILLed. Real worker processes, a private TMPDIR per test.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeOrphanedSpillDirs } from "../../worker/tools/spill-dir.js";
import { killAllWorkers, RpcWorker } from "../support/rpc-worker.js";

let root: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "spill-test-"));
});

afterEach(async () => {
  await killAllWorkers();
  rmSync(root, { recursive: true, force: true });
});

/** The pid of a process that has exited (and so is no longer running). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
  const pid = child.pid!;
  await new Promise((resolve) => child.on("exit", resolve));
  return pid;
}

const spillDirs = (dir: string) => readdirSync(dir).filter((n) => /^pi-bash-\d+-/.test(n));

describe("removeOrphanedSpillDirs", () => {
  it("removes the folders of dead workers only, and nothing that is not ours", async () => {
    const dead = `pi-bash-${await deadPid()}-0123456789ab`;
    const alive = `pi-bash-${process.pid}-0123456789ab`;
    for (const name of [dead, alive, "pi-bash-notapid", "pi-bash-1.log"]) mkdirSync(join(root, name));
    writeFileSync(join(root, dead, "x.log"), "output");
    expect(removeOrphanedSpillDirs(root)).toBe(1);
    expect(readdirSync(root).sort()).toEqual([alive, "pi-bash-1.log", "pi-bash-notapid"].sort());
  });
});

describe("a worker's spill folder", () => {
  const start = () =>
    new RpcWorker(["--mode", "rpc", "--provider", "faux", "--no-session"], { cwd: root, env: { TMPDIR: root } });
  const bigOutput = async (w: RpcWorker) => {
    const r = await w.request({ type: "bash", command: "seq 1 100000" }, 30_000);
    expect(r.success).toBe(true);
    const path = r.data.fullOutputPath as string;
    expect(existsSync(path)).toBe(true);
    return path;
  };

  it("holds the full output while the worker runs and is gone when it exits", async () => {
    const w = start();
    const path = await bigOutput(w);
    const folder = dirname(path);
    expect(dirname(folder)).toBe(root);
    expect(basename(folder)).toMatch(new RegExp(`^pi-bash-${w.proc.pid}-`));
    w.proc.stdin!.end();
    expect((await w.exited).code).toBe(0);
    expect(existsSync(folder)).toBe(false);
    expect(spillDirs(root)).toEqual([]);
  });

  it("of a SIGKILLed worker is removed by the next worker's first spill", async () => {
    const killed = start();
    const orphan = dirname(await bigOutput(killed));
    killed.proc.kill("SIGKILL");
    await killed.exited;
    expect(existsSync(orphan)).toBe(true);

    const next = start();
    const path = await bigOutput(next);
    expect(existsSync(orphan)).toBe(false);
    expect(spillDirs(root)).toEqual([basename(dirname(path))]);
  });
});
