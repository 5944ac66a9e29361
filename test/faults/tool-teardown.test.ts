/**
 * What tools leave behind: background jobs a `bash` call started are gone
 * after `stop`, `shutdown` and a SIGKILL of the worker, also long after the command
 * returned, `setsid` daemons too (found by the worker's tool tag); and the provider keys
 * never reach anything an `env` tool call produced. Real `pi --mode rpc` workers under
 * an in-process supervisor.
 */
import { afterEach, describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Supervisor } from "../../supervisor/supervisor.js";
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";
import { PI_BIN } from "../support/rpc-worker.js";
import { type Recorder, TestEnv } from "../supervisor/harness.js";
import { figures, killPids, leftAlive, until, waitAllGone } from "./support.js";

const env = new TestEnv();
const pids = new Set<number>();
afterEach(async () => {
  await env.cleanup();
  killPids(pids);
  pids.clear();
});

const PI = [process.execPath, PI_BIN, "--mode", "rpc"];
const PI_TIMINGS = { pingIntervalMs: 200, pingDeadlineMs: 3_000, stopGraceMs: 1_000, killGraceMs: 500 };

type Ev = Extract<IpcStreamMessage, { type: "event" }>;
const isEvent = (m: IpcStreamMessage, agent: string, type: string): m is Ev =>
  m.type === "event" && m.agent === agent && m.event.type === type;

function piSupervisor(): { sup: Supervisor; rec: Recorder; home: string } {
  return env.supervisor({ defaultWorkerCommand: PI, timings: PI_TIMINGS });
}

/** Spawn an agent whose one run calls `bash` with `command`, and wait for that run to end. */
async function runTool(
  sup: Supervisor,
  rec: Recorder,
  home: string,
  name: string,
  command: string,
  spawnEnv?: Record<string, string>,
) {
  const script = join(home, `${name}.faux.json`);
  writeFileSync(script, JSON.stringify([{ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: "done" }]));
  await sup.spawn({
    name,
    provider: "faux",
    extraArgs: ["--faux-script", script],
    ...(spawnEnv ? { env: spawnEnv } : {}),
  });
  await sup.rpc(name, { type: "prompt", message: "go" });
  await rec.waitFor((m) => isEvent(m, name, "agent_end"), 15_000, `${name} agent_end`);
  const started = rec.messages
    .filter((m) => isEvent(m, name, "worker_started"))
    .map((m) => Number((m as Ev).event.pid));
  for (const pid of started) pids.add(pid);
  return started.at(-1)!;
}

/** The pid a tool wrote into `file`. */
async function pidFrom(file: string): Promise<number> {
  const pid = await until(() => existsSync(file) && Number(readFileSync(file, "utf8").trim()), 10_000, file);
  pids.add(pid);
  return pid;
}

// The old watchdog left with its shell about 1 s after the command returned; teardown
// this long after the command returned is the case that used to leak.
const LATE_MS = 2_500;
const later = () => new Promise((resolve) => setTimeout(resolve, LATE_MS));

describe("fault: background jobs of a tool outlive the command", () => {
  it("are gone after stop, shutdown and a SIGKILL of the worker, also long after the command returned", async () => {
    const { sup, rec, home } = piSupervisor();
    const jobs: Record<string, number> = {};
    for (const name of ["stop", "shut", "kill", "daemon"]) {
      const pidFile = join(home, `${name}.job`);
      const command =
        name === "daemon"
          ? `setsid sleep 313 >/dev/null 2>&1 & echo $! > ${pidFile}`
          : `sleep 311 >/dev/null 2>&1 & echo $! > ${pidFile}`;
      await runTool(sup, rec, home, name, command);
      jobs[name] = await pidFrom(pidFile);
    }
    await later();
    expect(leftAlive(Object.values(jobs))).toHaveLength(4);

    let at = Date.now();
    await sup.stop("stop");
    const stopLeft = await waitAllGone([jobs.stop], 5_000);
    const stopMs = Date.now() - at;

    const workerPid = rec.messages
      .filter((m) => isEvent(m, "kill", "worker_started"))
      .map((m) => Number((m as Ev).event.pid))
      .at(-1)!;
    at = Date.now();
    process.kill(workerPid, "SIGKILL");
    const killLeft = await waitAllGone([jobs.kill], 5_000);
    const killMs = Date.now() - at;

    at = Date.now();
    await sup.shutdown();
    const shutLeft = await waitAllGone([jobs.shut], 5_000);
    const shutMs = Date.now() - at;
    const daemonEscaped = leftAlive([jobs.daemon]).length;

    figures("tool-background-job", {
      teardown_after_return_ms: LATE_MS,
      job_gone_after_stop_ms: stopMs,
      job_gone_after_worker_sigkill_ms: killMs,
      job_gone_after_shutdown_ms: shutMs,
      left_stop: stopLeft.length,
      left_kill: killLeft.length,
      left_shutdown: shutLeft.length,
      setsid_daemon_escaped: daemonEscaped,
    });
    expect(stopLeft).toEqual([]);
    expect(killLeft).toEqual([]);
    expect(shutLeft).toEqual([]);
    // A setsid daemon whose shell returned left the group and its parent: the worker's tool
    // tag in its environment finds it at shutdown all the same (FAULTS.md).
    expect(daemonEscaped).toBe(0);
  });
});

describe("fault: a model runs `env`", () => {
  it("sees no provider key, and no key reaches the events, the session file or the logs", async () => {
    const { sup, rec, home } = piSupervisor();
    const secrets = {
      OPENAI_API_KEY: "sk-openai-h16-secret-0001",
      ANTHROPIC_API_KEY: "sk-ant-h16-secret-0002",
      GROQ_TOKEN_FOR_MODELS: "gsk-h16-secret-0003",
      COPY_OF_LITERAL: "lit-h16-secret-0004",
    };
    writeFileSync(
      join(home, "models.json"),
      JSON.stringify({
        providers: {
          groq: {
            baseUrl: "http://127.0.0.1:9/v1",
            api: "openai-completions",
            apiKey: "GROQ_TOKEN_FOR_MODELS",
            models: [{ id: "g1" }],
          },
          lit: {
            baseUrl: "http://127.0.0.1:9/v1",
            api: "openai-completions",
            apiKey: secrets.COPY_OF_LITERAL,
            models: [{ id: "l1" }],
          },
        },
      }),
    );
    await runTool(sup, rec, home, "envy", "env; echo marker-visible=$HOME", secrets);
    const messages = (await sup.rpc("envy", { type: "get_messages" })) as { data: { messages: unknown[] } };
    const toolResult = JSON.stringify(
      messages.data.messages.filter((m) => (m as { role: string }).role === "toolResult"),
    );
    const sessionFile = sup.status("envy").sessionFile!;
    const logsDir = join(home, "logs");
    const logs = readdirSync(logsDir).map((f) => readFileSync(join(logsDir, f), "utf8"));
    const outputs = {
      events: JSON.stringify(rec.messages),
      get_messages: JSON.stringify(messages),
      session_file: readFileSync(sessionFile, "utf8"),
      ...Object.fromEntries(logs.map((text, i) => [`log_${i}`, text])),
    };
    const leaks = Object.entries(outputs).flatMap(([where, text]) =>
      Object.values(secrets)
        .filter((secret) => text.includes(secret))
        .map((secret) => `${where}: ${secret}`),
    );
    figures("tool-env-keys", {
      outputs_checked: Object.keys(outputs).length,
      events: rec.messages.length,
      keys: Object.keys(secrets).length,
      leaks: leaks.length,
    });
    // The tool did run `env`: its output is there, with PATH and the marker.
    expect(toolResult).toContain("PATH=");
    expect(toolResult).toContain("marker-visible=");
    expect(leaks).toEqual([]);
  });
});
