/**
 * A supervisor's workers share one session, so one scheduler autogroup, apart from the
 * supervisor's (supervisor/worker-launcher.ts): each still in a process group of its own,
 * with no controlling terminal, ended with the supervisor. Where the launcher is turned off
 * (`PI_ORCH_WORKER_SESSIONS=each`) every worker is a session of its own, as before.
 */
import { readFileSync } from "node:fs";
import { getPriority } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { readProcStat } from "../../shared/proc.js";
import { launcherSupport, WORKER_SESSIONS_VAR } from "../../supervisor/worker-launcher.js";
import { alive, TestEnv } from "../supervisor/harness.js";
import { type Json, World } from "../support/orch-cli.js";
import { until, waitAllGone } from "../faults/support.js";

const env = new TestEnv();
let world: World | null = null;
afterEach(async () => {
  await env.cleanup();
  await world?.cleanup();
  world = null;
});

const supported = launcherSupport().ok;

/** A process's session id and terminal (`/proc/PID/stat` fields 6 and 7). */
function sessionOf(pid: number | "self"): { session: number; tty: number } {
  const text = readFileSync(`/proc/${pid}/stat`, "utf8");
  const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { session: Number(rest[3]), tty: Number(rest[4]) };
}

/** `/proc/PID/autogroup`: "/autogroup-N nice M". */
function autogroupOf(pid: number | "self"): string {
  return readFileSync(`/proc/${pid}/autogroup`, "utf8").trim();
}

describe.skipIf(!supported)("the workers' session", () => {
  it("starts every worker in one session and autogroup apart from the supervisor's, a process group each, no terminal", async () => {
    const { sup } = env.supervisor({ workerNice: 5 });
    const pids = (await Promise.all(["a", "b", "c"].map((name) => sup.spawn({ name })))).map((a) => a.pid!);
    const launcher = readProcStat(pids[0]!)!.ppid;
    expect(readProcStat(launcher)!.ppid).toBe(process.pid);
    const own = sessionOf("self");
    for (const pid of pids) {
      const stat = readProcStat(pid)!;
      expect(stat.ppid).toBe(launcher);
      // Its own group: teardown signals it and what it starts, and nothing else.
      expect(stat.pgrp).toBe(pid);
      expect(sessionOf(pid)).toEqual({ session: launcher, tty: 0 });
      expect(autogroupOf(pid)).toBe(autogroupOf(launcher));
      // The process nice still applies inside the group (and is what its tool children inherit).
      expect(getPriority(pid)).toBe(5);
    }
    expect(sessionOf(launcher).session).not.toBe(own.session);
    expect(autogroupOf(launcher)).not.toBe(autogroupOf("self"));
    expect(autogroupOf(launcher)).toMatch(/ nice 5$/);

    await sup.shutdown();
    for (const pid of [...pids, launcher]) expect(alive(pid), `pid ${pid} outlived the supervisor`).toBe(false);
  });

  it("says how a worker ended: its exit code, the signal that killed it, a command that is not there", async () => {
    const { sup, rec } = env.supervisor();
    const info = await sup.spawn({ name: "killed", restart: "temporary" });
    process.kill(info.pid!, "SIGTERM");
    await rec.status("killed", "stopped");
    expect(sup.status("killed").lastExit).toMatchObject({ code: null, signal: "SIGTERM" });

    await sup.spawn({ name: "ghost", workerCommand: ["/nonexistent/pi"] });
    await rec.status("ghost", "failed");
    expect(sup.status("ghost").statusReason).toMatch(/spawn \/nonexistent\/pi ENOENT/);

    await sup.spawn({
      name: "three",
      restart: "temporary",
      workerCommand: [process.execPath, "-e", "process.stdin.once('data', () => process.exit(3))"],
    });
    await rec.status("three", "stopped", () => true, 15_000);
    expect(sup.status("three").lastExit).toMatchObject({ code: 3, signal: null });
  });

  it("a killed launcher takes its workers with it; the agent starts again under a new one", async () => {
    const { sup, rec } = env.supervisor();
    const first = (await sup.spawn({ name: "a" })).pid!;
    const launcher = readProcStat(first)!.ppid;
    process.kill(launcher, "SIGKILL");
    await rec.waitFor(
      (m) => m.type === "event" && m.agent === "a" && m.event.type === "worker_exited",
      10_000,
      "a's worker_exited",
    );
    expect(await waitAllGone([first], 5000)).toEqual([]);
    const again = await until(
      () => {
        const a = sup.status("a");
        return a.status === "idle" && a.pid !== null && a.pid !== first && a;
      },
      20_000,
      "a idle under a new worker",
    );
    const next = readProcStat(again.pid!)!.ppid;
    expect(next).not.toBe(launcher);
    expect(sessionOf(again.pid!).session).toBe(next);
  });

  it("no worker outlives a SIGKILLed `pi-orch serve`, nor does its launcher", async () => {
    world = new World();
    const serve = await world.serve();
    await world.ok(["spawn", "--name", "a", "--provider", "faux"]);
    await world.ok(["spawn", "--name", "b", "--provider", "faux"]);
    const pids = (await world.json<Json[]>(["list"])).map((a) => a.pid as number);
    const launcher = readProcStat(pids[0]!)!.ppid;
    expect(readProcStat(launcher)!.ppid).toBe(serve.pid);
    serve.kill("SIGKILL");
    expect(await waitAllGone([...pids, launcher], 10_000)).toEqual([]);
  });

  it(`${WORKER_SESSIONS_VAR}=each: a session of its own for every worker, as before`, async () => {
    const saved = process.env[WORKER_SESSIONS_VAR];
    process.env[WORKER_SESSIONS_VAR] = "each";
    try {
      const { sup } = env.supervisor();
      const pid = (await sup.spawn({ name: "a" })).pid!;
      expect(readProcStat(pid)!.ppid).toBe(process.pid);
      expect(sessionOf(pid)).toEqual({ session: pid, tty: 0 });
    } finally {
      if (saved === undefined) delete process.env[WORKER_SESSIONS_VAR];
      else process.env[WORKER_SESSIONS_VAR] = saved;
    }
  });
});
