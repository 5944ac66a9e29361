import { afterEach, describe, expect, it } from "vitest";
import { wireOf } from "../../shared/jsonl.js";
import { Supervisor } from "../../supervisor/supervisor.js";
import { alive, FAST, FIXTURE, readPids, TestEnv } from "./harness.js";

const env = new TestEnv();
afterEach(() => env.cleanup());

const fastPolicy = { backoffInitialMs: 20, backoffMaxMs: 200, intensity: 3, periodMs: 10_000 };

describe("agent actor with the fixture worker", () => {
  it("spawns to idle, learns the session file, and stop leaves no process", async () => {
    const { sup, rec } = env.supervisor();
    const info = await sup.spawn({ name: "a" });
    expect(info.status).toBe("idle");
    expect(info.sessionFile).toMatch(/fixture-.*\.jsonl$/);
    expect(rec.statuses("a")).toEqual(["starting", "idle"]);
    const pid = info.pid!;
    expect(alive(pid)).toBe(true);
    const stopped = await sup.stop("a");
    expect(stopped.status).toBe("stopped");
    expect(alive(pid)).toBe(false);
    expect(rec.statuses("a")).toEqual(["starting", "idle", "stopping", "stopped"]);
  });

  it("lists an unchanged agent from the entry made at its last change, and a new one after each", async () => {
    const { sup, rec } = env.supervisor();
    await sup.spawn({ name: "a" });
    const [first] = sup.list();
    expect(sup.list()[0]).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    await sup.rpc("a", { type: "prompt", message: "hi" });
    await rec.status("a", "idle", (e) => e.previous === "busy");
    const [after] = sup.list();
    expect(after).not.toBe(first);
    expect(after!.lastSeq).toBeGreaterThan(first!.lastSeq);
    expect(after).toEqual({ ...first, ...after, lastSeq: after!.lastSeq });
    expect(sup.status("a")).toBe(after);
    // The list carries its JSON for the socket, made from the entries it holds.
    await sup.spawn({ name: "b" });
    const listed = sup.list();
    const wire = Buffer.concat(wireOf(listed) as Buffer[]).toString();
    expect(wire).toBe(JSON.stringify(listed));
    expect(JSON.parse(wire).map((a: { name: string }) => a.name)).toEqual(["a", "b"]);
  });

  it("forwards a prompt, streams the run, and returns the worker's own response with the caller's id", async () => {
    const { sup, rec } = env.supervisor();
    await sup.spawn({ name: "a" });
    const response = await sup.rpc("a", { id: "mine", type: "prompt", message: "hi" });
    expect(response).toEqual({ id: "mine", type: "response", command: "prompt", success: true });
    await rec.waitFor((m) => m.type === "event" && m.event.type === "agent_end");
    await rec.status("a", "idle", (e) => e.previous === "busy");
    const seqs = rec.messages.filter((m) => m.type === "event").map((m) => (m.type === "event" ? m.seq : 0));
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    // The supervisor does not check commands: the worker does (this fixture acknowledges any).
    await expect(sup.rpc("a", { type: "no_such_command" })).resolves.toMatchObject({
      command: "no_such_command",
      success: true,
    });
    const deep: { type: string; [key: string]: unknown } = { type: "get_state" };
    let inner: Record<string, unknown> = deep;
    for (let i = 0; i < 20_000; i++) inner = (inner.x = {}) as Record<string, unknown>;
    await expect(sup.rpc("a", deep)).rejects.toMatchObject({
      code: "invalid",
      message: /cannot be sent to the worker/,
    });
  });

  it("restarts a crashed transient worker with restarts:1 and resumes its session", async () => {
    const { sup, rec } = env.supervisor({ policy: fastPolicy });
    const first = await sup.spawn({ name: "a" });
    await sup.rpc("a", { type: "prompt", message: "remember me" });
    await rec.status("a", "idle", (e) => e.previous === "busy");
    process.kill(first.pid!, "SIGKILL");
    await rec.status("a", "backoff");
    await rec.status("a", "idle", (e) => e.restarts === 1);
    const after = sup.status("a");
    expect(after.restarts).toBe(1);
    expect(after.pid).not.toBe(first.pid);
    expect(after.lastExit).toMatchObject({ signal: "SIGKILL", reason: "exit" });
    const state = await sup.rpc("a", { type: "get_state" });
    const data = (state.success ? state.data : undefined) as {
      argv: string[];
      sessionFile: string;
      messageCount: number;
    };
    expect(data.argv.slice(-2)).toEqual(["--session", first.sessionFile]);
    expect(data.sessionFile).toBe(first.sessionFile);
    expect(data.messageCount).toBe(2);
  });

  it("reports a run interrupted by a crash in the event stream", async () => {
    const home = env.home();
    const pidFile = env.pidFile(home);
    const { sup, rec } = env.supervisor({ home, policy: fastPolicy });
    const info = await sup.spawn({ name: "a", env: { FIXTURE_RUN_BASH: "sleep 60", FIXTURE_PID_FILE: pidFile } });
    await sup.rpc("a", { type: "prompt", message: "run" });
    await rec.waitFor((m) => m.type === "event" && m.event.type === "tool_execution_start");
    const child = readPids(pidFile).children[0];
    expect(alive(child)).toBe(true);
    process.kill(info.pid!, "SIGKILL");
    await rec.waitFor((m) => m.type === "event" && m.event.type === "run_interrupted", 5_000, "run_interrupted");
    // The crashed worker's tool child was in its process group: it must not outlive it.
    await rec.status("a", "idle", (e) => e.restarts === 1);
    expect(alive(child)).toBe(false);
  });

  it("goes to failed after the intensity limit, with backoff in between", async () => {
    const { sup, rec } = env.supervisor({ policy: fastPolicy });
    // It gets ready, then crashes: a crash, not a configuration error.
    await sup.spawn({ name: "crashy", env: { FIXTURE_EXIT_AFTER_MS: "300", FIXTURE_EXIT_CODE: "3" } });
    await rec.status("crashy", "failed", () => true, 15_000);
    const info = sup.status("crashy");
    expect(info.restarts).toBe(3);
    expect(info.statusReason).toBe("failed after 3 restarts in 10s; last exit: exited with code 3");
    const statuses = rec.statuses("crashy");
    expect(statuses).toEqual([
      "starting",
      "idle",
      "backoff",
      "starting",
      "idle",
      "backoff",
      "starting",
      "idle",
      "backoff",
      "starting",
      "idle",
      "failed",
    ]);
    const backoffs = rec.messages
      .filter((m) => m.type === "event" && m.event.type === "agent_status" && m.event.status === "backoff")
      .map((m) => (m.type === "event" ? String(m.event.reason) : ""));
    expect(backoffs).toEqual([
      "exited with code 3; restarting in 20 ms",
      "exited with code 3; restarting in 40 ms",
      "exited with code 3; restarting in 80 ms",
    ]);
    await expect(sup.rpc("crashy", { type: "get_state" })).rejects.toThrow(
      'agent "crashy" is not running (status: failed after 3 restarts in 10s; last exit: exited with code 3); see pi-orch logs crashy, or start it again with pi-orch restart crashy',
    );
  });

  it("fails a worker command that cannot be started at once, naming the error and what to do", async () => {
    const { sup, rec } = env.supervisor({ policy: fastPolicy });
    await sup.spawn({ name: "ghost", workerCommand: ["/nonexistent/pi", "--mode", "rpc"] });
    await rec.status("ghost", "failed");
    const info = sup.status("ghost");
    expect(info.statusReason).toMatch(
      /^could not start the worker "\/nonexistent\/pi": .*ENOENT.*; is it installed and on PATH\?/,
    );
    expect(info.restarts).toBe(0);
    expect(
      rec.messages.filter(
        (m) => m.type === "event" && m.agent === "ghost" && (m.event as { status?: string }).status === "backoff",
      ),
    ).toEqual([]);
  });

  it("fails a worker whose command node refuses before any process exists, with node's words", async () => {
    const { sup, rec } = env.supervisor({ policy: fastPolicy });
    await sup.spawn({ name: "nul", workerCommand: [process.execPath, "bad\0arg"] });
    await rec.status("nul", "failed");
    expect(sup.status("nul").statusReason).toMatch(/^could not start the worker .*null bytes/);
    expect(sup.status("nul").pid).toBeNull();
  });

  it("a worker that exits 1 before it is ready the same way twice is failed after its second start, with its words", async () => {
    const { sup, rec } = env.supervisor({ policy: fastPolicy });
    const t0 = Date.now();
    await sup.spawn({ name: "conf1", env: { FIXTURE_CRASH_AT_START: "1", FIXTURE_EXIT_CODE: "1" } });
    await rec.status("conf1", "failed");
    const ms = Date.now() - t0;
    const info = sup.status("conf1");
    expect(info.statusReason).toBe(
      "the worker exited with code 1 before it was ready, twice with the same error: fixture: crashing at start",
    );
    expect(rec.statuses("conf1")).toEqual(["starting", "failed"]);
    expect(info.restarts).toBe(1);
    expect(ms).toBeLessThan(5_000);
  });

  it("fails a worker that exits with the usage code 2 before it is ready at once, with its own last stderr line", async () => {
    const { sup, rec } = env.supervisor({ policy: fastPolicy });
    await sup.spawn({ name: "misconfigured", env: { FIXTURE_CRASH_AT_START: "1", FIXTURE_EXIT_CODE: "2" } });
    await rec.status("misconfigured", "failed");
    const info = sup.status("misconfigured");
    expect(info.statusReason).toBe("the worker refused its configuration: fixture: crashing at start");
    expect(info.restarts).toBe(0);
  });

  it("leaves a cleanly exiting transient worker stopped and a temporary one down after a crash", async () => {
    const { sup, rec } = env.supervisor({ policy: fastPolicy });
    await sup.spawn({ name: "clean", env: { FIXTURE_EXIT_AFTER_MS: "50", FIXTURE_EXIT_CODE: "0" } });
    await sup.spawn({ name: "temp", restart: "temporary", env: { FIXTURE_EXIT_AFTER_MS: "50" } });
    await rec.status("clean", "stopped");
    await rec.status("temp", "stopped");
    expect(sup.status("clean").statusReason).toMatch(/exited with code 0; restart policy is transient/);
    expect(sup.status("temp").restarts).toBe(0);
  });

  it("pings an idle worker less and less often, up to idlePingMaxMs, and still finds it unresponsive once it hangs", async () => {
    const timings = { pingIntervalMs: 100, idlePingMaxMs: 800, pingDeadlineMs: 300 };
    const { sup, rec } = env.supervisor({ policy: fastPolicy, timings });
    const first = await sup.spawn({ name: "a", env: { FIXTURE_GET_STATE_EVENTS: "1" } });
    const pings = (): number[] =>
      rec.messages.flatMap((m) =>
        m.type === "event" && m.agent === "a" && m.event.type === "fixture_get_state" ? [Number(m.event.at)] : [],
      );
    // The start's probe, then pings sent 100, 200, 400, 800 ms after the one before (at every
    // 100 ms before the drift). Between two answers the interval give or take the difference
    // of their trips through the pipes, so only bounds well below the intervals are certain.
    await rec.waitFor(() => pings().length >= 5, 15_000, "five answered get_state");
    const at = pings();
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    expect(gaps[2]).toBeGreaterThan(300);
    expect(gaps[3]).toBeGreaterThan(600);
    process.kill(first.pid!, "SIGSTOP");
    await rec.status("a", "unresponsive");
    await rec.status("a", "idle", (e) => e.restarts === 1);
    expect(alive(first.pid!)).toBe(false);
  });

  it("marks a SIGSTOPped worker unresponsive and restarts it", async () => {
    const { sup, rec } = env.supervisor({ policy: fastPolicy, timings: { pingIntervalMs: 50, pingDeadlineMs: 200 } });
    const first = await sup.spawn({ name: "a" });
    process.kill(first.pid!, "SIGSTOP");
    await rec.status("a", "unresponsive");
    await rec.status("a", "idle", (e) => e.restarts === 1);
    expect(alive(first.pid!)).toBe(false);
    expect(sup.status("a").lastExit).toMatchObject({ reason: "unresponsive" });
  });

  it("kills bash grandchildren with the group when a worker ignores stdin close and SIGTERM", async () => {
    const home = env.home();
    const pidFile = env.pidFile(home);
    const { sup, rec } = env.supervisor({ home, timings: { stopGraceMs: 200, killGraceMs: 200 } });
    await sup.spawn({
      name: "stubborn",
      env: {
        FIXTURE_RUN_BASH: "sleep 60",
        FIXTURE_PID_FILE: pidFile,
        FIXTURE_LEAVE_CHILDREN: "1",
        FIXTURE_IGNORE_STDIN_CLOSE: "1",
        FIXTURE_IGNORE_SIGTERM: "1",
      },
    });
    await sup.rpc("stubborn", { type: "prompt", message: "run" });
    await rec.waitFor((m) => m.type === "event" && m.event.type === "tool_execution_start");
    const { workers, children } = readPids(pidFile);
    expect(children).toHaveLength(1);
    await sup.stop("stubborn");
    for (const pid of [...workers, ...children]) expect(alive(pid), `pid ${pid}`).toBe(false);
  });

  it("kills children a worker leaves behind when it exits on stdin close", async () => {
    const home = env.home();
    const pidFile = env.pidFile(home);
    const { sup, rec } = env.supervisor({ home });
    await sup.spawn({
      name: "leaky",
      env: { FIXTURE_RUN_BASH: "sleep 60", FIXTURE_PID_FILE: pidFile, FIXTURE_LEAVE_CHILDREN: "1" },
    });
    await sup.rpc("leaky", { type: "prompt", message: "run" });
    await rec.waitFor((m) => m.type === "event" && m.event.type === "tool_execution_start");
    await sup.stop("leaky");
    const { workers, children } = readPids(pidFile);
    for (const pid of [...workers, ...children]) expect(alive(pid), `pid ${pid}`).toBe(false);
  });

  it("reports garbage on stdout as protocol errors and keeps working", async () => {
    const { sup, rec } = env.supervisor();
    const info = await sup.spawn({ name: "noisy", env: { FIXTURE_GARBAGE: "1" } });
    expect(info.status).toBe("idle");
    const errors = rec.messages.filter((m) => m.type === "event" && m.event.type === "protocol_error");
    expect(errors).toHaveLength(2);
    expect((await sup.rpc("noisy", { type: "get_state" })).success).toBe(true);
  });

  it("marks a silent busy agent stalled and aborts the run under --on-stall abort", async () => {
    const { sup, rec } = env.supervisor({ timings: { pingIntervalMs: 50, stallTimeoutMs: 200 } });
    await sup.spawn({ name: "quiet", onStall: "abort", env: { FIXTURE_SILENT_RUN: "1" } });
    await sup.rpc("quiet", { type: "prompt", message: "think" });
    await rec.status("quiet", "stalled");
    await rec.waitFor((m) => m.type === "event" && m.event.type === "limit_exceeded" && m.event.limit === "stall");
    await rec.status("quiet", "idle", (e) => String(e.reason).startsWith("run aborted: stalled"));
  });

  it("aborts a run over its timeout and records why", async () => {
    const { sup, rec } = env.supervisor();
    await sup.spawn({ name: "slow", limits: { runTimeoutMs: 150 }, env: { FIXTURE_SILENT_RUN: "1" } });
    await sup.rpc("slow", { type: "prompt", message: "think" });
    await rec.status("slow", "idle", (e) => e.previous === "busy");
    expect(sup.status("slow").statusReason).toBe("run aborted: run timeout of 150 ms exceeded");
    expect(
      rec.messages.some(
        (m) => m.type === "event" && m.event.type === "limit_exceeded" && m.event.limit === "run_timeout",
      ),
    ).toBe(true);
  });

  it("aborts a run over its token limit and records why", async () => {
    const { sup, rec } = env.supervisor();
    await sup.spawn({ name: "hungry", limits: { maxTokens: 5 }, env: { FIXTURE_USAGE_TOKENS: "10" } });
    await sup.rpc("hungry", { type: "prompt", message: "eat" });
    await rec.waitFor(
      (m) =>
        m.type === "event" &&
        m.agent === "hungry" &&
        m.event.type === "limit_exceeded" &&
        m.event.limit === "max_tokens",
    );
    await rec.status("hungry", "idle", (e) => e.previous === "busy");
    expect(sup.status("hungry").statusReason).toBe("run aborted: 10 tokens used, over the 5-token limit");
  });

  it("records live agents as 'supervisor exited' on shutdown and resumes them with their sessions", async () => {
    const home = env.home();
    const { sup } = env.supervisor({ home });
    const before = await sup.spawn({ name: "a" });
    await sup.spawn({ name: "b" });
    await sup.stop("b");
    await sup.shutdown();
    expect(alive(before.pid!)).toBe(false);
    const next = Supervisor.open({ home, defaultWorkerCommand: [process.execPath, FIXTURE], timings: FAST });
    env.track(next);
    expect(next.status("a")).toMatchObject({ status: "stopped", statusReason: "supervisor exited" });
    expect(next.status("b")).toMatchObject({ status: "stopped", statusReason: "stopped by request" });
    const resumed = await next.resumeAll();
    expect(resumed.map((a) => [a.name, a.status])).toEqual([["a", "idle"]]);
    const state = await next.rpc("a", { type: "get_state" });
    expect(((state.success ? state.data : undefined) as { resumed: string }).resumed).toBe(before.sessionFile);
  });

  it("stops every agent in parallel on shutdown", async () => {
    const { sup } = env.supervisor({ timings: { stopGraceMs: 300 } });
    const infos = await Promise.all(
      ["a", "b", "c"].map((name) => sup.spawn({ name, env: { FIXTURE_IGNORE_STDIN_CLOSE: "1" } })),
    );
    const started = Date.now();
    await sup.shutdown();
    // Three sequential grace periods would take 900 ms or more.
    expect(Date.now() - started).toBeLessThan(850);
    for (const info of infos) expect(alive(info.pid!)).toBe(false);
  });

  it("starts workers one slot at a time; one stopped while it waits never runs", async () => {
    const { sup, rec } = env.supervisor({ startConcurrency: 1 });
    const first = sup.spawn({ name: "a" });
    const second = sup.spawn({ name: "b" });
    const third = sup.spawn({ name: "c" });
    // b and c wait for a's slot: starting, no worker yet (a's pid comes with its worker_started).
    await rec.waitFor((m) => m.type === "event" && m.agent === "a" && m.event.type === "worker_started");
    expect(sup.list().map((a) => [a.name, a.status, a.pid])).toEqual([
      ["a", "starting", expect.any(Number)],
      ["b", "starting", null],
      ["c", "starting", null],
    ]);
    const stopped = await sup.stop("c");
    expect(stopped).toMatchObject({ status: "stopped", pid: null });
    expect((await third).status).toBe("stopped");
    expect(rec.messages.some((m) => m.type === "event" && m.agent === "c" && m.event.type === "worker_started")).toBe(
      false,
    );
    // a's answer frees the slot for b.
    expect((await first).status).toBe("idle");
    expect((await second).status).toBe("idle");
    await sup.restart("c");
    expect(sup.status("c").status).toBe("idle");
  });

  it("a spawn that waits its turn longer than a start may take still succeeds: its start is timed from its spawn", async () => {
    // Each start takes 2.5 s of a 3 s deadline; the fourth waits 7.5 s for its slot, past the 3 s + 5 s a start is given.
    const { sup } = env.supervisor({ startConcurrency: 1, timings: { startTimeoutMs: 3_000 } });
    const infos = await Promise.all(
      ["a", "b", "c", "d"].map((name) => sup.spawn({ name, env: { FIXTURE_STARTUP_MS: "2500" } })),
    );
    expect(infos.map((i) => i.status)).toEqual(["idle", "idle", "idle", "idle"]);
  }, 30_000);
});
