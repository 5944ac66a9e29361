/**
 * Worker faults: real `pi --mode rpc` workers (and the protocol
 * fixture for malformed output) under an in-process supervisor. For each fault the
 * agent ends in the right state, its session file loads with every message completed
 * before the fault, and no process is left.
 */
import { afterEach, describe, expect, it } from "vitest";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Supervisor } from "../../supervisor/supervisor.js";
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";
import { SessionStore } from "../../worker/session/session-file.js";
import { startMockModelServer, type MockModelServer } from "../support/mock-model-server.js";
import { PI_BIN } from "../support/rpc-worker.js";
import { FIXTURE, type Recorder, TestEnv, readPids } from "../supervisor/harness.js";
import { figures, killPids, leftAlive, until, waitAllGone } from "./support.js";

const env = new TestEnv();
const pids = new Set<number>();
const mockServers: MockModelServer[] = [];
afterEach(async () => {
  await env.cleanup();
  killPids(pids);
  pids.clear();
  await Promise.allSettled(mockServers.splice(0).map((s) => s.close()));
});

const PI = [process.execPath, PI_BIN, "--mode", "rpc"];
/** Real workers take a few hundred ms to answer their first ping on a loaded 2-core runner. */
const PI_TIMINGS = { pingIntervalMs: 200, pingDeadlineMs: 3_000, stopGraceMs: 1_000, killGraceMs: 500 };
const QUICK_RESTART = { backoffInitialMs: 50, backoffMaxMs: 200 };

type Ev = Extract<IpcStreamMessage, { type: "event" }>;
const isEvent = (m: IpcStreamMessage, agent: string, type: string): m is Ev =>
  m.type === "event" && m.agent === agent && m.event.type === type;

/** A supervisor running real pi workers. */
function piSupervisor(timings: Record<string, number> = {}): { sup: Supervisor; rec: Recorder; home: string } {
  return env.supervisor({ defaultWorkerCommand: PI, timings: { ...PI_TIMINGS, ...timings }, policy: QUICK_RESTART });
}

/** Write a faux script into `home` and return its path. */
function script(home: string, name: string, replies: unknown[]): string {
  const path = join(home, `${name}.faux.json`);
  writeFileSync(path, JSON.stringify(replies));
  return path;
}

/** Worker pids the supervisor started for `agent`, from its `worker_started` events (tracked for cleanup). */
function workerPids(rec: Recorder, agent: string): number[] {
  const found = rec.messages.filter((m) => isEvent(m, agent, "worker_started")).map((m) => Number((m as Ev).event.pid));
  for (const pid of found) pids.add(pid);
  return found;
}

/** The conversation of a session file, loaded the way a resuming worker loads it (the system messages that record the prompt and tools aside). */
function sessionMessages(file: string, warnings: string[] = []): Record<string, unknown>[] {
  const store = SessionStore.open(file, { warn: (m) => warnings.push(m) });
  return store.entries
    .filter((e) => e.type === "message")
    .map((e) => (e as unknown as { message: Record<string, unknown> }).message)
    .filter((m) => m.role !== "system");
}

/** `message_end` messages of the conversation the agent reported up to `beforeSeq`; each must be in the session file. */
function completedMessages(rec: Recorder, agent: string, beforeSeq = Infinity): Record<string, unknown>[] {
  return rec.messages
    .filter((m): m is Ev => isEvent(m, agent, "message_end") && m.seq < beforeSeq)
    .map((m) => m.event.message as Record<string, unknown>)
    .filter((m) => m.role !== "system");
}

/** How many of `completed` are missing from `inSession` (same role, timestamp and content). */
function missing(completed: Record<string, unknown>[], inSession: Record<string, unknown>[]): number {
  const key = (m: Record<string, unknown>) => JSON.stringify([m.role, m.timestamp, m.content]);
  const have = new Set(inSession.map(key));
  return completed.filter((m) => !have.has(key(m))).length;
}

/** Stop the agent and count the processes of this test (workers, tool children) still alive. */
async function stopAndCount(sup: Supervisor, agent: string, extra: number[] = []): Promise<number> {
  await sup.stop(agent);
  return (await waitAllGone([...extra, ...pids], 5_000)).length;
}

describe("fault: worker killed or hung", () => {
  it("SIGKILL during a streaming reply: restarts, resumes the session, keeps every completed message", async () => {
    const { sup, rec, home } = piSupervisor();
    const file = script(home, "stream", [
      { text: "first answer complete" },
      { text: Array.from({ length: 200 }, (_, i) => `w${i}`).join(" "), chunkDelayMs: 10 },
      { text: "after resume" },
    ]);
    await sup.spawn({ name: "s", provider: "faux", extraArgs: ["--faux-script", file] });
    await sup.rpc("s", { type: "prompt", message: "one" });
    await rec.waitFor((m) => isEvent(m, "s", "agent_end"), 10_000, "first agent_end");
    await sup.rpc("s", { type: "prompt", message: "two" });
    const update = (await rec.waitFor(
      (m) => isEvent(m, "s", "message_update") && m.seq > 0 && JSON.stringify(m.event).includes("w5"),
      10_000,
      "streaming",
    )) as Ev;
    const [pid] = workerPids(rec, "s");
    const killedAt = Date.now();
    process.kill(pid, "SIGKILL");
    await rec.waitFor((m) => isEvent(m, "s", "run_interrupted"), 10_000, "run_interrupted");
    await rec
      .status("s", "idle", () => true, 10_000)
      .then(() =>
        until(() => sup.status("s").status === "idle" && sup.status("s").restarts === 1, 10_000, "idle after restart"),
      );
    const recovery = Date.now() - killedAt;
    const info = sup.status("s");
    expect(info.lastExit).toMatchObject({ signal: "SIGKILL", reason: "exit" });
    const completed = completedMessages(rec, "s", update.seq);
    const inSession = sessionMessages(info.sessionFile!);
    const lost = missing(completed, inSession);
    // The resumed worker continues the same conversation.
    const resumedPid = workerPids(rec, "s").at(-1)!;
    expect(resumedPid).not.toBe(pid);
    expect((rec.messages.filter((m) => isEvent(m, "s", "worker_started")).at(-1) as Ev).event.resumed).toBe(
      info.sessionFile,
    );
    const endsBefore = rec.messages.filter((m) => isEvent(m, "s", "agent_end")).length;
    await sup.rpc("s", { type: "prompt", message: "three" });
    // The third run is over when a new agent_end arrives (the status alone is idle before it starts).
    await until(
      () => rec.messages.filter((m) => isEvent(m, "s", "agent_end")).length > endsBefore,
      10_000,
      "third run",
    );
    const after = sessionMessages(info.sessionFile!);
    const left = await stopAndCount(sup, "s");
    figures("worker-sigkill-streaming", {
      recovery_ms: recovery,
      completed_before: completed.length,
      messages_lost: lost,
      session_messages_after: after.length,
      processes_left: left,
    });
    expect(completed.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(lost).toBe(0);
    expect(after.filter((m) => m.role === "user").length).toBe(3);
    expect(left).toBe(0);
  });

  it("SIGKILL during a tool call: the tool's process group dies with the worker, the agent resumes", async () => {
    const { sup, rec, home } = piSupervisor();
    const toolPidFile = join(home, "tool.pid");
    const file = script(home, "tool", [
      { toolCalls: [{ name: "bash", arguments: { command: `echo $$ > ${toolPidFile}; sleep 30; echo done` } }] },
    ]);
    await sup.spawn({ name: "t", provider: "faux", extraArgs: ["--faux-script", file] });
    await sup.rpc("t", { type: "prompt", message: "run the tool" });
    const start = (await rec.waitFor((m) => isEvent(m, "t", "tool_execution_start"), 10_000, "tool start")) as Ev;
    const toolPid = await until(
      () => existsSync(toolPidFile) && Number(readFileSync(toolPidFile, "utf8").trim()),
      10_000,
      "tool pid",
    );
    pids.add(toolPid);
    const [pid] = workerPids(rec, "t");
    const killedAt = Date.now();
    process.kill(pid, "SIGKILL");
    const toolLeft = await waitAllGone([toolPid], 5_000);
    const toolGoneMs = Date.now() - killedAt;
    await until(
      () => sup.status("t").status === "idle" && sup.status("t").restarts === 1,
      10_000,
      "idle after restart",
    );
    const recovery = Date.now() - killedAt;
    const info = sup.status("t");
    const completed = completedMessages(rec, "t", start.seq);
    const lost = missing(completed, sessionMessages(info.sessionFile!));
    const left = await stopAndCount(sup, "t", [toolPid]);
    figures("worker-sigkill-tool-call", {
      recovery_ms: recovery,
      tool_killed_ms: toolGoneMs,
      completed_before: completed.length,
      messages_lost: lost,
      processes_left: left + toolLeft.length,
    });
    expect(toolLeft).toEqual([]);
    expect(completed.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(lost).toBe(0);
    expect(left).toBe(0);
  });

  it("SIGKILL during a storm of session writes, three times, then a torn last line: the session always loads", async () => {
    const { sup, rec, home } = piSupervisor();
    const turns = Array.from({ length: 60 }, (_, i) => ({
      toolCalls: [{ name: "ls", arguments: { path: "." } }],
      text: `turn ${i}`,
    }));
    const file = script(home, "storm", [...turns, { text: "storm over" }]);
    await sup.spawn({ name: "w", provider: "faux", extraArgs: ["--faux-script", file] });
    let lostTotal = 0;
    let completedTotal = 0;
    const recoveries: number[] = [];
    for (let round = 1; round <= 3; round++) {
      const from = rec.messages.length;
      await sup.rpc("w", { type: "prompt", message: `storm ${round}` });
      // Kill after a varying number of appended messages, while tool turns keep writing.
      const target = 3 + round * 7;
      await rec.waitFor(
        (m) =>
          rec.messages.indexOf(m) >= from &&
          isEvent(m, "w", "message_end") &&
          rec.messages.slice(from).filter((x) => isEvent(x, "w", "message_end")).length >= target,
        10_000,
        `${target} message_end`,
      );
      const pid = workerPids(rec, "w").at(-1)!;
      const killSeq = sup.status("w").lastSeq;
      const killedAt = Date.now();
      process.kill(pid, "SIGKILL");
      await until(
        () => sup.status("w").status === "idle" && sup.status("w").restarts === round,
        10_000,
        `idle after kill ${round}`,
      );
      recoveries.push(Date.now() - killedAt);
      const completed = completedMessages(rec, "w", killSeq + 1);
      completedTotal = completed.length;
      lostTotal += missing(completed, sessionMessages(sup.status("w").sessionFile!));
    }
    // A write cut in the middle of a line (what SIGKILL inside write(2) leaves): the resumed worker drops it and goes on.
    const session = sup.status("w").sessionFile!;
    await sup.stop("w");
    appendFileSync(
      session,
      '{"type":"message","id":"torn","parentId":null,"message":{"role":"assistant","content":[{"type":"te',
    );
    await sup.restart("w");
    const warnings: string[] = [];
    const stderrPath = sup.logPaths("w").stderr;
    await until(() => sup.status("w").status === "idle", 10_000, "idle after torn line");
    await sup.rpc("w", { type: "prompt", message: "after the torn line" });
    await until(
      () =>
        completedMessages(rec, "w").some(
          (m) => m.role === "user" && JSON.stringify(m.content).includes("after the torn line"),
        ),
      10_000,
      "prompt after torn line",
    );
    const final = sessionMessages(session, warnings);
    const lostAfterTorn = missing(
      completedMessages(rec, "w").filter((m) => !JSON.stringify(m.content).includes("after the torn")),
      final,
    );
    const left = await stopAndCount(sup, "w");
    const stderr = existsSync(stderrPath) ? readFileSync(stderrPath, "utf8") : "";
    figures("worker-sigkill-session-write", {
      kills: 3,
      recovery_ms_max: Math.max(...recoveries),
      completed_before_last_kill: completedTotal,
      messages_lost: lostTotal + lostAfterTorn,
      torn_line_skipped: /cut off by a crash/.test(stderr),
      processes_left: left,
    });
    expect(lostTotal).toBe(0);
    expect(lostAfterTorn).toBe(0);
    expect(stderr).toMatch(/cut off by a crash/);
    expect(warnings).toEqual([]);
    expect(left).toBe(0);
  });

  it("SIGSTOP shorter than the presence deadline is ridden out; SIGSTOP past it is detected and restarted", async () => {
    const { sup, rec, home } = piSupervisor({ pingIntervalMs: 100, pingDeadlineMs: 1_000 });
    const file = script(home, "stop", [{ text: "before the hang" }, { text: "after the hang" }]);
    await sup.spawn({ name: "h", provider: "faux", extraArgs: ["--faux-script", file] });
    await sup.rpc("h", { type: "prompt", message: "hello" });
    await until(
      () => completedMessages(rec, "h").length === 2 && sup.status("h").status === "idle",
      10_000,
      "first run",
    );
    const [pid] = workerPids(rec, "h");

    // Short hang: stopped for 300 ms, continued before the 1 s deadline.
    process.kill(pid, "SIGSTOP");
    const shortStart = Date.now();
    await until(() => Date.now() - shortStart >= 300, 2_000, "a short hang");
    process.kill(pid, "SIGCONT");
    const ok = await sup.rpc("h", { type: "get_state" });
    expect(ok.success).toBe(true);
    expect(sup.status("h")).toMatchObject({ status: "idle", restarts: 0, pid });

    // Long hang: presence is lost, the group is killed and the agent restarts on its session.
    process.kill(pid, "SIGSTOP");
    const stoppedAt = Date.now();
    await rec.status("h", "unresponsive", () => true, 10_000);
    const detectMs = Date.now() - stoppedAt;
    await until(
      () => sup.status("h").status === "idle" && sup.status("h").restarts === 1,
      10_000,
      "restarted after hang",
    );
    const recovery = Date.now() - stoppedAt;
    try {
      process.kill(pid, "SIGCONT"); // the late SIGCONT finds nothing to wake
    } catch {
      // gone, as expected
    }
    expect(leftAlive([pid])).toEqual([]);
    const info = sup.status("h");
    expect(info.lastExit).toMatchObject({ reason: "unresponsive", signal: "SIGKILL" });
    const lost = missing(completedMessages(rec, "h"), sessionMessages(info.sessionFile!));
    await sup.rpc("h", { type: "prompt", message: "still there?" });
    await until(
      () => completedMessages(rec, "h").length === 4 && sup.status("h").status === "idle",
      10_000,
      "run after restart",
    );
    const left = await stopAndCount(sup, "h");
    figures("worker-sigstop", {
      short_hang_restarts: 0,
      detect_ms: detectMs,
      recovery_ms: recovery,
      messages_lost: lost,
      processes_left: left,
    });
    expect(lost).toBe(0);
    expect(left).toBe(0);
  });

  it("a worker that exits 1 at start with the same words twice is failed after its second start, leaving nothing", async () => {
    const { sup, rec } = piSupervisor();
    const startedAt = Date.now();
    await sup.spawn({
      name: "conf",
      workerCommand: [
        process.execPath,
        "-e",
        "process.stderr.write('Error: --provider requires --model\\n'); process.exit(1)",
      ],
    });
    await rec.status("conf", "failed", () => true, 15_000);
    const toFailed = Date.now() - startedAt;
    const info = sup.status("conf");
    const started = workerPids(rec, "conf");
    const left = leftAlive(started);
    figures("worker-config-error-exit-1", {
      to_failed_ms: toFailed,
      starts: started.length,
      status: info.status,
      processes_left: left.length,
    });
    expect(info.statusReason).toBe(
      "the worker exited with code 1 before it was ready, twice with the same error: Error: --provider requires --model",
    );
    expect(started.length).toBe(2);
    expect(left).toEqual([]);
  });

  it("a worker that crashes at start with other words each time goes to failed after the intensity limit, leaving nothing", async () => {
    const { sup, rec } = piSupervisor();
    const startedAt = Date.now();
    // Exit 1 before it is ready, saying something else each time: a crash, restarted by policy.
    await sup.spawn({
      name: "crash",
      workerCommand: [
        process.execPath,
        "-e",
        "process.stderr.write('boom ' + Math.random().toString(36).replace(/[^a-z]/g, '') + '\\n'); process.exit(1)",
      ],
      policy: { backoffInitialMs: 20, backoffMaxMs: 100, intensity: 3, periodMs: 60_000 },
    });
    await rec.status("crash", "failed", () => true, 15_000);
    const toFailed = Date.now() - startedAt;
    const info = sup.status("crash");
    const started = workerPids(rec, "crash");
    const left = leftAlive(started);
    figures("worker-crash-at-start", {
      to_failed_ms: toFailed,
      starts: started.length,
      restarts: info.restarts,
      status: info.status,
      processes_left: left.length,
    });
    expect(info.status).toBe("failed");
    expect(info.restarts).toBe(3);
    expect(started.length).toBe(4);
    expect(info.statusReason).toMatch(/3 restarts/);
    expect(info.lastExit).toMatchObject({ code: 1, reason: "exit" });
    expect(left).toEqual([]);
    await expect(sup.rpc("crash", { type: "get_state" })).rejects.toMatchObject({ code: "not_running" });
  });

  it("a worker that refuses its configuration (exit 2 before ready) is failed at once with its own words", async () => {
    const { sup, rec } = piSupervisor();
    await sup.spawn({
      name: "badconf",
      provider: "faux",
      extraArgs: ["--faux-script", "/nonexistent/faux.json"],
      policy: { backoffInitialMs: 20, backoffMaxMs: 100, intensity: 3, periodMs: 60_000 },
    });
    await rec.status("badconf", "failed", () => true, 15_000);
    const info = sup.status("badconf");
    const started = workerPids(rec, "badconf");
    expect(info.restarts).toBe(0);
    expect(started.length).toBe(1);
    expect(info.lastExit).toMatchObject({ code: 2 });
    expect(info.statusReason).toMatch(/nonexistent\/faux\.json/);
    expect(leftAlive(started)).toEqual([]);
  });

  it("provider 500s until retries run out: the run ends in error, the agent stays up and answers the next prompt", async () => {
    const server = await startMockModelServer();
    mockServers.push(server);
    const { sup, rec, home } = piSupervisor();
    writeFileSync(
      join(home, "models.json"),
      JSON.stringify({
        providers: {
          mock: { baseUrl: `${server.url}/v1`, api: "openai-completions", apiKey: "k", models: [{ id: "mock-1" }] },
        },
      }),
    );
    for (let i = 0; i < 4; i++) server.enqueue({ error: { status: 500, message: "upstream exploded" } });
    server.enqueue({ text: "recovered" });
    await sup.spawn({ name: "m", provider: "mock", model: "mock-1", extraArgs: ["--retry-delay-ms", "10"] });
    const [pid] = workerPids(rec, "m");
    const t0 = Date.now();
    const from = rec.messages.length;
    await sup.rpc("m", { type: "prompt", message: "please" });
    // pi's order: each failed run ends (agent_end with our willRetry) before its retry runs; the last one ends the prompt.
    await rec.waitFor(
      (m) => isEvent(m, "m", "agent_end") && m.event.willRetry !== true,
      15_000,
      "agent_end after retries",
    );
    const errorMs = Date.now() - t0;
    await until(() => sup.status("m").status === "idle", 5_000, "idle after failed run");
    const statuses = rec.messages
      .slice(from)
      .filter((m) => isEvent(m, "m", "agent_status"))
      .map((m) => (m as Ev).event.status);
    // Busy through all four runs and the waits between them: idle once, at the end.
    expect(statuses).toEqual(["busy", "idle"]);
    expect(rec.messages.slice(from).filter((m) => isEvent(m, "m", "agent_end"))).toHaveLength(4);
    const retries = rec.messages.filter((m) => isEvent(m, "m", "auto_retry_start")).length;
    const finalAssistant = completedMessages(rec, "m")
      .filter((m) => m.role === "assistant")
      .at(-1)!;
    expect(finalAssistant.stopReason).toBe("error");
    expect(sup.status("m")).toMatchObject({ status: "idle", restarts: 0, pid });
    await sup.rpc("m", { type: "prompt", message: "again" });
    await until(
      () =>
        completedMessages(rec, "m").some(
          (m) => m.role === "assistant" && JSON.stringify(m.content).includes("recovered"),
        ),
      10_000,
      "next prompt answered",
    );
    await until(() => sup.status("m").status === "idle", 5_000, "idle");
    const info = sup.status("m");
    const lost = missing(completedMessages(rec, "m"), sessionMessages(info.sessionFile!));
    const left = await stopAndCount(sup, "m");
    figures("worker-provider-500", {
      requests: server.requests.length,
      retries,
      run_error_ms: errorMs,
      restarts: info.restarts,
      messages_lost: lost,
      processes_left: left,
    });
    expect(retries).toBe(3);
    expect(server.requests.length).toBe(5);
    expect(lost).toBe(0);
    expect(left).toBe(0);
  });
});

describe("fault: worker writes malformed stdout", () => {
  const cases: { name: string; fig: string; env: Record<string, string>; protocolErrors: number }[] = [
    {
      name: "non-JSON",
      fig: "worker-non-json-stdout",
      env: { FIXTURE_GARBAGE: "1", FIXTURE_NOISE_RUN: "1" },
      protocolErrors: 10,
    },
    {
      name: "partial lines",
      fig: "worker-partial-lines",
      env: { FIXTURE_PARTIAL_LINES: "1", FIXTURE_EVENTS: "20" },
      protocolErrors: 0,
    },
    { name: "a 20 MB line", fig: "worker-20mb-line", env: { FIXTURE_BIG_LINE_MB: "20" }, protocolErrors: 2 },
  ];
  it.each(cases)(
    "a worker that prints $name keeps working: runs complete, the bad lines are reported, memory stays bounded",
    async (c) => {
      // Presence is not what this is about: a worker blocked writing 20 MB into its pipe
      // while the supervisor reads it can miss the short test ping deadline (500 ms).
      const { sup, rec, home } = env.supervisor({
        defaultWorkerCommand: [process.execPath, FIXTURE],
        timings: { pingDeadlineMs: 10_000 },
      });
      const pidFile = env.pidFile(home);
      const rssBefore = process.memoryUsage().rss;
      await sup.spawn({ name: "x", env: { ...c.env, FIXTURE_PID_FILE: pidFile, FIXTURE_SESSION_DIR: home } });
      const t0 = Date.now();
      for (let run = 1; run <= 2; run++) {
        const ends = rec.messages.filter((m) => isEvent(m, "x", "agent_end")).length;
        const accepted = await sup.rpc("x", { type: "prompt", message: `run ${run}` });
        expect(accepted.success).toBe(true);
        await until(
          () =>
            rec.messages.filter((m) => isEvent(m, "x", "agent_end")).length > ends && sup.status("x").status === "idle",
          45_000,
          `run ${run}`,
        );
      }
      const ms = Date.now() - t0;
      const rssGrowthMb = Math.round((process.memoryUsage().rss - rssBefore) / 1024 / 1024);
      const protocolErrors = rec.messages.filter((m) => isEvent(m, "x", "protocol_error")).length;
      const state = await sup.rpc("x", { type: "get_state" });
      const messageCount = ((state.success ? state.data : undefined) as { messageCount: number }).messageCount;
      const info = sup.status("x");
      const updates = rec.messages.filter((m) => isEvent(m, "x", "message_update")).length;
      await sup.stop("x");
      const { workers } = readPids(pidFile);
      const left = await waitAllGone(workers, 5_000);
      figures(c.fig, {
        runs_completed: 2,
        run_ms: ms,
        protocol_errors: protocolErrors,
        message_updates: updates,
        session_messages: messageCount,
        restarts: info.restarts,
        rss_growth_mb: rssGrowthMb,
        processes_left: left.length,
      });
      expect(info).toMatchObject({ restarts: 0 });
      expect(protocolErrors).toBe(c.protocolErrors);
      expect(messageCount).toBe(4);
      expect(left).toEqual([]);
      // A deadline, not a speed check: the 20 MB line takes ~1 s alone but over 15 s at load 20–30.
    },
    120_000,
  );
});
