/**
 * A worker's malloc settings (shared/malloc-env.ts) are its own: the supervisor starts our
 * worker with them (its environ, as the kernel shows it, has them), the worker takes them out
 * before its tools run (the bash tool's `env` has none of them), and a user's own value is
 * kept and reaches the tools as before. The same for `pi` started by hand, which starts itself
 * again inside its sandbox.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { IpcClient } from "../../ipc/client.js";
import { runSupervisorServer, type RunningServer } from "../../cli/serve/supervisor-server.js";
import { onGlibc, WORKER_MALLOC_VAR } from "../../shared/malloc-env.js";
import { readProcTable } from "../../shared/proc.js";
import { sandboxSupport } from "../../shared/sandbox.js";
import { killAllWorkers, RpcWorker } from "../support/rpc-worker.js";
import { TestEnv } from "../supervisor/harness.js";
import { killPids } from "../faults/support.js";

const PI_CJS = resolve(import.meta.dirname, "../../dist/cli/pi.cjs");
const TIMINGS = { pingIntervalMs: 200, pingDeadlineMs: 5_000, stopGraceMs: 1_000, killGraceMs: 500 };

const env = new TestEnv();
const servers: RunningServer[] = [];
const clients: IpcClient[] = [];
const pids = new Set<number>();
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  await Promise.allSettled(servers.splice(0).map((s) => s.close()));
  killPids(pids);
  pids.clear();
  await killAllWorkers();
  await env.cleanup();
});

/** The variables a process was started with, as /proc shows them (what it removed later stays there). */
function startEnv(pid: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")) {
    const eq = entry.indexOf("=");
    if (eq > 0) out[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return out;
}

/** The malloc variables (and the marker) of `env` output or of a start environment. */
function mallocVars(vars: Record<string, string> | string): Record<string, string> {
  const entries =
    typeof vars === "string"
      ? vars
          .split("\n")
          .filter((l) => l.includes("="))
          .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)] as const)
      : Object.entries(vars);
  return Object.fromEntries(
    entries.filter(([k]) => k.startsWith("MALLOC_") || k === "GLIBC_TUNABLES" || k === WORKER_MALLOC_VAR),
  );
}

/** Every process below `pid`, from /proc. */
function descendants(pid: number): number[] {
  const table = readProcTable() ?? [];
  const out: number[] = [];
  const walk = (p: number): void => {
    for (const child of table) {
      if (child.ppid !== p) continue;
      out.push(child.pid);
      walk(child.pid);
    }
  };
  walk(pid);
  return out;
}

describe.skipIf(!onGlibc())("a worker's malloc settings", () => {
  it("the supervisor starts its worker with them; its bash tool does not see them; a user's own value stays", async () => {
    const home = env.home();
    const server = await runSupervisorServer({ home, handleSignals: false, timings: TIMINGS });
    servers.push(server);
    const client = await IpcClient.connect({ socketPath: server.socketPath });
    clients.push(client);
    const plain = await client.spawn({ name: "plain", cwd: home, provider: "faux", extraArgs: ["--no-session"] });
    const own = await client.spawn({
      name: "own",
      cwd: home,
      provider: "faux",
      extraArgs: ["--no-session"],
      env: { MALLOC_ARENA_MAX: "8" },
    });
    pids.add(plain.pid!);
    pids.add(own.pid!);
    expect(mallocVars(startEnv(plain.pid!))).toEqual({
      MALLOC_TRIM_THRESHOLD_: "131072",
      MALLOC_ARENA_MAX: "2",
      GLIBC_TUNABLES: "glibc.malloc.hugetlb=1",
      [WORKER_MALLOC_VAR]: "MALLOC_TRIM_THRESHOLD_,MALLOC_ARENA_MAX,GLIBC_TUNABLES",
    });
    expect(mallocVars(startEnv(own.pid!))).toEqual({
      MALLOC_TRIM_THRESHOLD_: "131072",
      MALLOC_ARENA_MAX: "8",
      GLIBC_TUNABLES: "glibc.malloc.hugetlb=1",
      [WORKER_MALLOC_VAR]: "MALLOC_TRIM_THRESHOLD_,GLIBC_TUNABLES",
    });
    const plainTool = await client.rpc("plain", { type: "bash", command: "env" });
    const ownTool = await client.rpc("own", { type: "bash", command: "env" });
    expect(plainTool.success).toBe(true);
    expect(ownTool.success).toBe(true);
    const output = (r: typeof plainTool) => String((r as { data?: { output?: unknown } }).data?.output);
    expect(output(plainTool)).toContain("PATH=");
    expect(mallocVars(output(plainTool))).toEqual({});
    expect(mallocVars(output(ownTool))).toEqual({ MALLOC_ARENA_MAX: "8" });
  }, 60_000);

  it.skipIf(!sandboxSupport().ok)(
    "`pi` started by hand gives them to itself inside its sandbox, and its bash tool does not see them",
    async () => {
      const home = env.home();
      const worker = new RpcWorker(["--mode", "rpc", "--provider", "faux", "--no-session", "--sandbox", "on"], {
        cwd: home,
        env: { PI_ORCH_HOME: home },
        bin: [process.execPath, PI_CJS],
      });
      const state = await worker.request({ type: "get_state" });
      expect(state.success).toBe(true);
      // The launcher itself has none; the pi it started inside bwrap has them.
      expect(mallocVars(startEnv(worker.proc.pid!))).toEqual({});
      const inner = descendants(worker.proc.pid!).filter(
        (pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0] === process.execPath,
      );
      expect(inner).toHaveLength(1);
      expect(mallocVars(startEnv(inner[0]!))).toMatchObject({
        MALLOC_ARENA_MAX: "2",
        MALLOC_TRIM_THRESHOLD_: "131072",
        GLIBC_TUNABLES: "glibc.malloc.hugetlb=1",
      });
      const tool = await worker.request({ type: "bash", command: "env" });
      expect(tool.success).toBe(true);
      expect(String(tool.data.output)).toContain("PATH=");
      expect(mallocVars(String(tool.data.output))).toEqual({});
      worker.closeStdin();
      expect((await worker.exited).code).toBe(0);
    },
    60_000,
  );
});
