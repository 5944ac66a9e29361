/**
 * Supervisor faults: a supervisor process SIGKILLed with five busy
 * agents leaves nothing running and nothing torn, and the next `serve --resume`
 * continues every conversation; a registry written during a storm of status changes
 * is never half-written, whenever the supervisor dies.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { IpcClient } from "../../ipc/client.js";
import type { AgentInfo } from "../../shared/schema/agent.js";
import { SessionStore } from "../../worker/session/session-file.js";
import { rpcData } from "../support/rpc-data.js";
import { PI_BIN } from "../support/rpc-worker.js";
import { FIXTURE, TestEnv, readPids } from "../supervisor/harness.js";
import { figures, killPids, leftAlive, serveChild, until, waitAllGone } from "./support.js";

const env = new TestEnv();
const children: ChildProcess[] = [];
const clients: IpcClient[] = [];
const pids = new Set<number>();
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  killPids(pids);
  pids.clear();
  await env.cleanup();
});

/** A supervisor server in its own process; resolves once its socket listens. */
async function serveProcess(
  opts: Record<string, unknown>,
): Promise<{ child: ChildProcess; client: IpcClient; exited: Promise<void> }> {
  const serve = await serveChild(opts, { children, clients });
  pids.add(serve.child.pid!);
  return serve;
}

const TIMINGS = {
  pingIntervalMs: 500,
  pingDeadlineMs: 5_000,
  stopGraceMs: 1_000,
  killGraceMs: 500,
  startTimeoutMs: 10_000,
};

describe("fault: the supervisor dies", () => {
  it("SIGKILL of the supervisor with five busy agents: workers exit, files intact, serve --resume continues all five", async () => {
    const home = env.home();
    const project = env.home();
    const opts = { home, timings: TIMINGS, defaultWorkerCommand: [process.execPath, PI_BIN, "--mode", "rpc"] };
    const first = await serveProcess(opts);
    const names = ["a1", "a2", "a3", "a4", "a5"];
    const scripts = names.map((n) => join(home, `${n}.faux.json`));
    const toolPidFiles = names.map((n) => join(home, `${n}.tool.pid`));
    names.forEach((n, i) => {
      // Three agents stream a long reply; two sit in a bash tool call.
      const busy =
        i < 3
          ? { text: Array.from({ length: 400 }, (_, k) => `w${k}`).join(" "), chunkDelayMs: 25 }
          : { toolCalls: [{ name: "bash", arguments: { command: `echo $$ > ${toolPidFiles[i]}; sleep 60` } }] };
      writeFileSync(scripts[i], JSON.stringify([{ text: `first reply of ${n}` }, busy]));
    });
    for (const [i, name] of names.entries()) {
      await first.client.spawn({ name, cwd: project, provider: "faux", extraArgs: ["--faux-script", scripts[i]] });
      await first.client.rpc(name, { type: "prompt", message: `hello ${name}` });
    }
    await until(
      async () => (await first.client.list()).every((a) => a.status === "idle" && a.lastSeq > 5),
      15_000,
      "first replies",
    );
    for (const name of names) await first.client.rpc(name, { type: "prompt", message: `keep busy ${name}` });
    const toolPids = await until(
      () =>
        toolPidFiles.slice(3).every((f) => existsSync(f) && readFileSync(f, "utf8").trim() !== "") &&
        toolPidFiles.slice(3).map((f) => Number(readFileSync(f, "utf8"))),
      15_000,
      "tool pids",
    );
    // Busy in memory and in agents.json: the registry is written after the status
    // changes, and this test is about what a SIGKILL leaves on disk.
    const busyList = await until(
      async () => {
        const list = await first.client.list();
        const onDisk = JSON.parse(readFileSync(join(home, "agents.json"), "utf8")) as { agents: AgentInfo[] };
        return list.every((a) => a.status === "busy") && onDisk.agents.every((a) => a.status === "busy") && list;
      },
      15_000,
      "five busy agents",
    );
    const workerPids = busyList.map((a) => a.pid!);
    for (const pid of [...workerPids, ...toolPids]) pids.add(pid);

    const killedAt = Date.now();
    first.child.kill("SIGKILL");
    await first.exited;
    const left = await waitAllGone([...workerPids, ...toolPids], 5_000);
    const exitMs = Date.now() - killedAt;

    // The registry and every session file are intact.
    const registry = JSON.parse(readFileSync(join(home, "agents.json"), "utf8")) as { agents: AgentInfo[] };
    const sessionsBefore = new Map<string, number>();
    for (const a of registry.agents) {
      const store = SessionStore.open(a.sessionFile!, { warn: () => {} });
      sessionsBefore.set(a.name, store.entries.filter((e) => e.type === "message").length);
    }

    // The next supervisor resumes all five; their scripts now answer at once.
    names.forEach((n, i) => writeFileSync(scripts[i], JSON.stringify([{ text: `resumed reply of ${n}` }])));
    const resumedAt = Date.now();
    const second = await serveProcess({ ...opts, resume: true });
    const resumed = await until(
      async () => {
        const list = await second.client.list();
        return list.every((a) => a.status === "idle") && list;
      },
      15_000,
      "five resumed agents",
    );
    const resumeMs = Date.now() - resumedAt;
    let continued = 0;
    for (const name of names) {
      const messages = rpcData<{ messages: { role: string; content: unknown }[] }>(
        await second.client.rpc(name, { type: "get_messages" }),
      ).messages;
      if (messages.some((m) => JSON.stringify(m.content).includes(`first reply of ${name}`))) continued++;
      await second.client.rpc(name, { type: "prompt", message: `continue ${name}` });
    }
    // Wait for the answers themselves: right after the prompt an agent may still show the
    // idle status of its resume, before its run's first event reaches the supervisor.
    const countAnswered = async () => {
      let n = 0;
      for (const name of names) {
        const messages = rpcData<{ messages: { role: string; content: unknown }[] }>(
          await second.client.rpc(name, { type: "get_messages" }),
        ).messages;
        const text = JSON.stringify(messages);
        if (text.includes(`first reply of ${name}`) && text.includes(`resumed reply of ${name}`)) n++;
      }
      return n;
    };
    let answered = 0;
    await until(async () => (answered = await countAnswered()) === names.length, 15_000, "continued runs").catch(
      () => {},
    );
    await until(async () => (await second.client.list()).every((a) => a.status === "idle"), 15_000, "idle again");
    const secondPids = (await second.client.list()).map((a) => a.pid!);
    for (const pid of secondPids) pids.add(pid);
    await second.client.shutdown();
    await second.exited;
    const leftAfter = await waitAllGone([...secondPids, second.child.pid!], 5_000);
    figures("supervisor-sigkill-5-busy", {
      workers_exit_ms: exitMs,
      orphans_left: left.length,
      registry_agents: registry.agents.length,
      sessions_loaded: sessionsBefore.size,
      resume_ms: resumeMs,
      conversations_continued: answered,
      processes_left: leftAfter.length,
    });
    expect(left).toEqual([]);
    expect(exitMs).toBeLessThan(TIMINGS.stopGraceMs + 5_000);
    expect(registry.agents.map((a) => [a.name, a.status])).toEqual(names.map((n) => [n, "busy"]));
    expect([...sessionsBefore.values()].every((n) => n >= 3)).toBe(true);
    expect(resumed.map((a) => a.sessionFile)).toEqual(registry.agents.map((a) => a.sessionFile));
    expect(continued).toBe(5);
    expect(answered).toBe(5);
    expect(leftAfter).toEqual([]);
  }, 90_000);

  it("SIGKILL during a storm of status changes never leaves a torn registry", async () => {
    const home = env.home();
    const pidFile = env.pidFile(home);
    const opts = { home, timings: TIMINGS, defaultWorkerCommand: [process.execPath, FIXTURE] };
    const ROUNDS = 5;
    const AGENTS = 6;
    let parsed = 0;
    let tmpLeft = 0;
    const stormWrites: number[] = [];
    let staleTmpAfterStart = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const serve = await serveProcess(opts);
      staleTmpAfterStart += readdirSync(home).filter((f) => f.endsWith(".tmp")).length;
      if (round === 0) {
        for (let i = 0; i < AGENTS; i++) {
          await serve.client.spawn({
            name: `storm${i}`,
            restart: "permanent",
            policy: { backoffInitialMs: 1, backoffMaxMs: 5, intensity: 100_000, periodMs: 1_000 },
            env: {
              FIXTURE_EXIT_AFTER_MS: "15",
              FIXTURE_EXIT_CODE: "0",
              FIXTURE_PID_FILE: pidFile,
              FIXTURE_SESSION_DIR: home,
            },
            wait: false,
          });
        }
      } else {
        for (let i = 0; i < AGENTS; i++) await serve.client.restart(`storm${i}`, { wait: false });
      }
      // Let the storm run until the registry was rewritten many times, then kill at an uneven moment.
      // The deadline is for a machine busy with other tests: each change is a worker's restart,
      // a node start, which took the whole 20 s of an earlier deadline once at load average 7.
      const seqs = async () => (await serve.client.list()).reduce((s, a) => s + a.lastSeq, 0);
      const base = await seqs();
      await until(async () => (await seqs()) > base + 100 + round * 37, 40_000, "status storm");
      stormWrites.push((await seqs()) - base);
      serve.child.kill("SIGKILL");
      await serve.exited;
      const text = readFileSync(join(home, "agents.json"), "utf8");
      const registry = JSON.parse(text) as { agents: AgentInfo[] };
      if (registry.agents.length === AGENTS) parsed++;
      tmpLeft += readdirSync(home).filter((f) => f.endsWith(".tmp")).length;
      const { workers } = readPids(pidFile);
      for (const pid of workers) pids.add(pid);
      await waitAllGone(workers, 5_000);
    }
    // A worker forked just before the last kill writes its pid while it boots, after the
    // read above; it exits as soon as it sees its stdin closed, so wait for it too.
    const { workers } = readPids(pidFile);
    await waitAllGone(workers, 5_000);
    const left = leftAlive(workers);
    figures("supervisor-sigkill-registry-storm", {
      rounds: ROUNDS,
      agents: AGENTS,
      events_per_round_min: Math.min(...stormWrites),
      registry_parsed: `${parsed}/${ROUNDS}`,
      torn_registry: ROUNDS - parsed,
      tmp_files_at_kill: tmpLeft,
      stale_tmp_after_next_start: staleTmpAfterStart,
      worker_starts: workers.length,
      processes_left: left.length,
    });
    expect(parsed).toBe(ROUNDS);
    expect(staleTmpAfterStart).toBe(0);
    expect(left).toEqual([]);
  }, 240_000);
});
