/**
 * The agent actor's table, stepped message by message without a process or a timer:
 * each test feeds what a worker, a clock or a caller would say and checks the status
 * and the effects the shell would perform.
 */
import { describe, expect, it } from "vitest";
import { activityOfState, type AgentMessage } from "../../supervisor/agent-state.js";
import { Driver, record } from "../support/agent-driver.js";

describe("agent table: start and restart", () => {
  it("spawns, probes with get_state, and is idle once answered, with the session learned and the worker lowered", () => {
    const d = new Driver();
    d.send({ kind: "start" });
    expect(d.statuses()).toEqual(["starting"]);
    expect(d.effects.at(-1)).toMatchObject({ kind: "spawn", gen: 1, file: "pi", args: ["--mode", "rpc"], cwd: "/tmp" });
    d.spawned(100);
    expect(d.emitted()).toEqual(["worker_started"]);
    expect(d.state.record.pid).toBe(100);
    expect(d.timer("start").ms).toBe(500);
    d.answerProbe();
    expect(d.statuses()).toEqual(["idle"]);
    expect(d.state.record.sessionFile).toBe("/s/a.jsonl");
    expect(d.of("lower_priority")).toEqual([{ kind: "lower_priority", gen: 1, nice: 10 }]);
    expect(d.of("cancel_timer").map((e) => e.key)).toContain("start");
    expect(d.timer("ping_tick").ms).toBe(100);
  });

  it("restarts a crashed worker after a backoff that doubles, counting restarts, and resumes its session", () => {
    const d = new Driver();
    d.toIdle();
    d.exit(1);
    expect(d.statuses()).toEqual(["backoff"]);
    expect(d.state.record.statusReason).toBe("exited with code 1; restarting in 20 ms");
    expect(d.of("kill_leftovers")).toEqual([{ kind: "kill_leftovers", gen: 1 }]);
    expect(d.state.record.lastExit).toMatchObject({ code: 1, reason: "exit" });
    expect(d.timer("backoff").ms).toBe(20);
    d.fire("backoff");
    expect(d.state.record.restarts).toBe(1);
    expect(d.of("spawn")[0]).toMatchObject({ gen: 2, args: ["--mode", "rpc", "--session", "/s/a.jsonl"] });
    d.spawned(101);
    d.answerProbe();
    d.exit(null, "SIGKILL");
    expect(d.state.record.statusReason).toBe("killed by SIGKILL; restarting in 40 ms");
  });

  it("gives up after the restart intensity, with the last exit in the reason", () => {
    const d = new Driver();
    d.toIdle();
    for (let i = 0; i < 3; i++) {
      d.exit(3);
      expect(d.status).toBe("backoff");
      d.fire("backoff");
      d.spawned(200 + i);
      d.answerProbe();
    }
    d.exit(3);
    expect(d.status).toBe("failed");
    expect(d.state.record.statusReason).toBe("failed after 3 restarts in 10s; last exit: exited with code 3");
    expect(d.of("timer")).toEqual([]);
    expect(d.state.record.restarts).toBe(3);
  });

  it("a normal exit of a transient worker stays down", () => {
    const d = new Driver();
    d.toIdle();
    d.exit(0);
    expect(d.status).toBe("stopped");
    expect(d.state.record.statusReason).toBe("exited with code 0; restart policy is transient");
  });

  it("a worker that never answers its start is killed at the start deadline and restarted by policy", () => {
    const d = new Driver();
    d.send({ kind: "start" });
    d.spawned();
    d.fire("start");
    expect(d.of("kill_worker")).toEqual([{ kind: "kill_worker", gen: 1, notify: false }]);
    d.exit(null, "SIGKILL");
    expect(d.state.record.lastExit).toMatchObject({
      reason: "start_timeout",
      message: "no answer to get_state within 500 ms of starting",
    });
    expect(d.status).toBe("backoff");
  });

  it("a worker that never answers its start is failed after 3 timeouts in a row, though each start takes the whole deadline", () => {
    const d = new Driver(record({ policy: { ...record().policy, restart: "permanent", intensity: 5, periodMs: 600 } }));
    d.send({ kind: "start" });
    for (let start = 1; start <= 3; start++) {
      d.spawned();
      d.fire("start");
      d.exit(null, "SIGKILL");
      if (start < 3) {
        // Each try lasts the 500 ms deadline: the 600 ms period never holds the 5 restarts intensity counts.
        expect(d.status).toBe("backoff");
        d.fire("backoff");
      }
    }
    expect(d.status).toBe("failed");
    expect(d.state.record.statusReason).toBe(
      "its worker never answered get_state: 3 starts in a row, each given 500 ms; see its stderr (pi-orch logs a --stderr)",
    );
    expect(d.of("timer")).toEqual([]);
  });

  it("the start-timeout count starts over once a worker gets ready", () => {
    const d = new Driver(record({ policy: { ...record().policy, restart: "permanent" } }));
    d.send({ kind: "start" });
    d.spawned();
    d.fire("start");
    d.exit(null, "SIGKILL");
    d.fire("backoff");
    d.spawned();
    d.fire("start");
    d.exit(null, "SIGKILL");
    d.fire("backoff");
    d.spawned(); // the third start answers
    d.answerProbe();
    expect(d.status).toBe("idle");
    expect(d.state.startTimeouts).toBe(0);
  });

  it("a worker that dies before it is ready with its own words is failed at once (a configuration error), not restarted", () => {
    const d = new Driver();
    d.send({ kind: "start" });
    d.spawned();
    d.send({
      kind: "exit",
      gen: 1,
      code: 2,
      signal: null,
      spawnError: null,
      stderrTail: "error: unknown option --bogus\n",
    });
    expect(d.status).toBe("failed");
    expect(d.state.record.statusReason).toMatch(/unknown option --bogus/);
    expect(d.of("timer")).toEqual([]);
  });

  it("a record its worker command cannot be built from (a saved custom command with --api-key and no provider) is failed with the reason, never spawned", () => {
    const d = new Driver(record({ workerCommand: ["my-agent", "--api-key", "sk-secret"] }));
    expect(() => d.send({ kind: "start" })).not.toThrow();
    expect(d.status).toBe("failed");
    expect(d.state.record.statusReason).toMatch(/names no provider/);
    expect(d.state.record.statusReason).not.toContain("sk-secret");
    expect(d.of("spawn")).toEqual([]);
  });
});

describe("agent table: stop and remove", () => {
  it("stop while starting tears the worker down and answers once it is gone, without a restart", () => {
    const d = new Driver();
    d.send({ kind: "start" });
    d.spawned();
    d.send({ kind: "stop", caller: 7, reason: "stopped by request" });
    expect(d.statuses()).toEqual(["stopping"]);
    expect(d.of("stop_worker")).toEqual([
      { kind: "stop_worker", gen: 1, graceMs: 50, killGraceMs: 50, abort: true, notify: true },
    ]);
    expect(d.of("cancel_timer").map((e) => e.key)).toContain("start");
    expect(d.of("resolve")).toEqual([]);
    d.exit(0);
    expect(d.state.record.lastExit).toMatchObject({ reason: "stopped" });
    expect(d.of("timer")).toEqual([]);
    expect(d.of("kill_leftovers")).toEqual([]);
    d.send({ kind: "teardown_done", gen: 1 });
    expect(d.statuses()).toEqual(["stopped"]);
    expect(d.of("resolve")).toEqual([{ kind: "resolve", caller: 7, value: undefined }]);
    // A late start deadline of the old worker changes nothing.
    expect(d.send({ kind: "start_timeout", gen: 1 })).toEqual([]);
  });

  it("remove while restarting: waiters learn it now, stop cancels the backoff, and the old backoff timer is void", () => {
    const d = new Driver();
    d.toIdle();
    d.exit(1);
    const backoff = d.timer("backoff");
    d.send({ kind: "wait", caller: 3, test: (s) => s === "idle", timeoutMs: 1_000 });
    expect(d.timer("wait:3").ms).toBe(1_000);
    d.send({ kind: "stop", caller: 4, reason: "stopped by request" });
    expect(d.statuses()).toEqual(["stopped"]);
    expect(d.of("cancel_timer").map((e) => e.key)).toContain("backoff");
    expect(d.of("resolve")).toEqual([{ kind: "resolve", caller: 4, value: undefined }]);
    d.send({ kind: "removed" });
    expect(d.of("reject")).toMatchObject([
      { caller: 3, error: { code: "not_found", message: 'agent "a" was removed' } },
    ]);
    expect(d.send(backoff.message)).toEqual([]);
    expect(d.status).toBe("stopped");
  });

  it("a manual restart stops the worker and starts a new one once the teardown is done, with a fresh restart history", () => {
    const d = new Driver();
    d.toIdle();
    d.send({ kind: "restart" });
    expect(d.statuses()).toEqual(["stopping"]);
    d.exit(0);
    d.send({ kind: "teardown_done", gen: 1 });
    expect(d.statuses()).toEqual(["stopped", "starting"]);
    expect(d.state.record.statusReason).toBeUndefined();
    expect(d.of("spawn")[0].gen).toBe(2);
    expect(d.state.restartHistory.restartTimes).toEqual([]);
  });
});

describe("agent table: requests and presence", () => {
  it("forwards a command with our id, answers with the caller's id, and a timed-out request is refused and its late answer dropped", () => {
    const d = new Driver();
    d.toIdle();
    d.send({ kind: "rpc", caller: 1, command: { id: "mine", type: "get_state" }, timeoutMs: 300 });
    const sent = d.of("send")[0].value as { id: string };
    expect(sent).toMatchObject({ type: "get_state", id: expect.stringMatching(/^orch-rpc-/) });
    d.line({ type: "response", id: sent.id, command: "get_state", success: true, data: {} });
    expect(d.of("resolve")).toEqual([
      {
        kind: "resolve",
        caller: 1,
        value: { type: "response", id: "mine", command: "get_state", success: true, data: {} },
      },
    ]);
    expect(d.of("cancel_timer").map((e) => e.key)).toEqual([`rpc:${sent.id}`]);

    d.send({ kind: "rpc", caller: 2, command: { type: "prompt", message: "hi" }, timeoutMs: 300 });
    const second = d.of("send")[0].value as { id: string };
    d.fire(`rpc:${second.id}`);
    expect(d.of("reject")).toMatchObject([
      {
        caller: 2,
        error: {
          code: "timeout",
          message: expect.stringMatching(/^agent "a" did not answer prompt within 300 ms; check pi-orch status a/),
        },
      },
    ]);
    expect(d.line({ type: "response", id: second.id, command: "prompt", success: true })).toEqual([]);
  });

  it("a request past its timeout while the worker waits on a dialog is held, then gets its whole timeout again once the dialog is answered", () => {
    const d = new Driver();
    d.toIdle();
    d.send({ kind: "rpc", caller: 1, command: { type: "prompt", message: "/ask" }, timeoutMs: 300 });
    const prompt = d.of("send")[0].value as { id: string };
    // A fire-and-forget request opens nothing; a confirm does.
    d.line({ type: "extension_ui_request", id: "n1", method: "notify", message: "hi" });
    d.line({ type: "extension_ui_request", id: "q1", method: "confirm", title: "Go on?" });
    expect(d.state.dialogs).toEqual(new Map([["q1", "Go on?"]]));
    d.fire(`rpc:${prompt.id}`);
    expect(d.of("reject")).toEqual([]);
    expect(d.of("emit").map((e) => e.event)).toEqual([
      { type: "rpc_waiting", command: "prompt", timeoutMs: 300, dialogs: 1 },
    ]);
    expect(d.timers.has(`rpc:${prompt.id}`)).toBe(false);
    // A long wait for the person: no ping tick makes it stalled or times it out.
    d.now += 60_000;
    d.send({
      kind: "rpc",
      caller: 2,
      command: { type: "extension_ui_response", id: "q1", confirmed: true },
      timeoutMs: 300,
    });
    expect(d.of("send").map((e) => e.value)).toEqual([{ type: "extension_ui_response", id: "q1", confirmed: true }]);
    expect(d.state.dialogs.size).toBe(0);
    expect(d.of("emit").map((e) => e.event)).toEqual([{ type: "dialog_closed", id: "q1", reason: "answered" }]);
    expect(d.timer(`rpc:${prompt.id}`).ms).toBe(300);
    d.line({ type: "response", id: prompt.id, command: "prompt", success: true });
    expect(d.of("resolve")).toMatchObject([{ caller: 1, value: { command: "prompt", success: true } }]);

    // Unanswered past the timeout again, with no dialog open: refused, saying what to do next.
    d.send({ kind: "rpc", caller: 3, command: { type: "prompt", message: "/ask" }, timeoutMs: 300 });
    const again = d.of("send")[0].value as { id: string };
    d.fire(`rpc:${again.id}`);
    expect(d.of("reject")).toMatchObject([
      { caller: 3, error: { code: "timeout", message: /within 300 ms.*--timeout MS.*rpcTimeoutMs/ } },
    ]);
  });

  it("a dialog closes at its own timeout and with its worker; a held request is then timed again or refused", () => {
    const d = new Driver();
    d.toIdle();
    d.send({ kind: "rpc", caller: 1, command: { type: "prompt", message: "/ask" }, timeoutMs: 300 });
    const prompt = d.of("send")[0].value as { id: string };
    d.line({
      type: "extension_ui_request",
      id: "s1",
      method: "select",
      title: "Pick",
      options: ["a", "b"],
      timeout: 5_000,
    });
    d.fire(`rpc:${prompt.id}`);
    expect(d.of("reject")).toEqual([]);
    d.fire("dialog:s1");
    expect(d.state.dialogs.size).toBe(0);
    expect(d.of("emit").map((e) => e.event)).toEqual([{ type: "dialog_closed", id: "s1", reason: "timeout" }]);
    expect(d.timer(`rpc:${prompt.id}`).ms).toBe(300);
    d.fire(`rpc:${prompt.id}`);
    expect(d.of("reject")).toMatchObject([{ caller: 1, error: { code: "timeout" } }]);

    d.send({ kind: "rpc", caller: 2, command: { type: "prompt", message: "/ask" }, timeoutMs: 300 });
    const held = d.of("send")[0].value as { id: string };
    d.line({ type: "extension_ui_request", id: "i1", method: "input", title: "Name?" });
    d.fire(`rpc:${held.id}`);
    d.exit(null, "SIGKILL");
    expect(d.of("reject")).toMatchObject([{ caller: 2, error: { code: "worker_exited" } }]);
    expect(d.state.dialogs.size).toBe(0);
    expect(d.of("emit").map((e) => e.event)).toContainEqual({
      type: "dialog_closed",
      id: "i1",
      reason: "worker_exited",
    });
  });

  it("a dialog its extension dismissed through its signal closes at the next ping's answer that no longer lists it open", () => {
    const d = new Driver();
    d.toIdle();
    d.send({ kind: "rpc", caller: 1, command: { type: "prompt", message: "/ask" }, timeoutMs: 300 });
    const prompt = d.of("send")[0].value as { id: string };
    d.line({ type: "extension_ui_request", id: "q1", method: "confirm", title: "Go on?" });
    d.fire(`rpc:${prompt.id}`);
    expect(d.of("emit").map((e) => e.event)).toMatchObject([{ type: "rpc_waiting", dialogs: 1 }]);
    const ping = (): string => {
      d.fire("ping_tick");
      return (d.of("send")[0].value as { id: string }).id;
    };
    // A pi without the list (upstream's get_state): nothing to learn, the dialog stays open.
    d.line({ type: "response", id: ping(), command: "get_state", success: true, data: { isStreaming: false } });
    expect([...d.state.dialogs.keys()]).toEqual(["q1"]);
    // Still listed: still open.
    d.line({ type: "response", id: ping(), command: "get_state", success: true, data: { openDialogs: ["q1"] } });
    expect([...d.state.dialogs.keys()]).toEqual(["q1"]);
    // q2 opens after the ping went out, so an answer without it says nothing about q2; q1 is gone.
    const asked = ping();
    d.line({ type: "extension_ui_request", id: "q2", method: "input", title: "Name?" });
    d.line({ type: "response", id: asked, command: "get_state", success: true, data: { openDialogs: [] } });
    expect([...d.state.dialogs.keys()]).toEqual(["q2"]);
    expect(d.of("emit").map((e) => e.event)).toEqual([{ type: "dialog_closed", id: "q1", reason: "dismissed" }]);
    expect(d.timers.has(`rpc:${prompt.id}`)).toBe(false);
    d.line({ type: "response", id: ping(), command: "get_state", success: true, data: { openDialogs: [] } });
    expect(d.state.dialogs.size).toBe(0);
    // None open: the held prompt gets its whole timeout again.
    expect(d.timer(`rpc:${prompt.id}`).ms).toBe(300);
  });

  // The worker starts its dialog timer before writing the request, so it fires a little before ours;
  // a ping answered in between finds the dialog gone, and that is its timeout, not a dismissal.
  it.each([
    { what: "long before its timeout", timeout: 5_000, after: 1_000, reason: "dismissed" },
    { what: "just before our timer, after the worker's", timeout: 5_000, after: 4_600, reason: "timeout" },
    { what: "at its deadline", timeout: 5_000, after: 5_000, reason: "timeout" },
    { what: "past it, before our timer's turn", timeout: 5_000, after: 7_000, reason: "timeout" },
    { what: "without a timeout", timeout: undefined, after: 60_000, reason: "dismissed" },
  ])("a dialog a ping finds gone $what is closed as $reason", ({ timeout, after, reason }) => {
    const d = new Driver();
    d.toIdle();
    d.line({
      type: "extension_ui_request",
      id: "s1",
      method: "select",
      title: "Pick",
      options: ["a"],
      ...(timeout ? { timeout } : {}),
    });
    d.now += after;
    const tick = d.timer("ping_tick");
    d.timers.delete("ping_tick");
    d.send(tick.message);
    const ping = (d.of("send")[0].value as { id: string }).id;
    d.line({ type: "response", id: ping, command: "get_state", success: true, data: { openDialogs: [] } });
    expect(d.of("emit").map((e) => e.event)).toEqual([{ type: "dialog_closed", id: "s1", reason }]);
    expect(d.state.dialogs.size).toBe(0);
    expect(d.state.dialogDeadlines.size).toBe(0);
    expect(d.timers.has("dialog:s1")).toBe(false);
  });

  it("refuses commands while no worker runs, and rejects what is pending when the worker dies", () => {
    const d = new Driver();
    d.send({ kind: "rpc", caller: 1, command: { type: "get_state" }, timeoutMs: 300 });
    expect(d.of("reject")).toMatchObject([{ caller: 1, error: { code: "not_running" } }]);
    d.toIdle();
    d.send({ kind: "rpc", caller: 2, command: { type: "prompt", message: "x" }, timeoutMs: 300 });
    d.exit(null, "SIGKILL");
    expect(d.of("reject")).toMatchObject([
      { caller: 2, error: { code: "worker_exited", message: /killed by SIGKILL before answering/ } },
    ]);
  });

  it("a ping not answered by its deadline makes the agent unresponsive and kills the group", () => {
    const d = new Driver();
    d.toIdle();
    d.fire("ping_tick");
    const ping = d.of("send")[0].value as { id: string; type: string };
    expect(ping.type).toBe("get_state");
    expect(d.timer("ping_tick").ms).toBe(200); // idle with nothing going on: the next tick waits longer
    d.fire("ping_tick");
    expect(d.of("send")).toEqual([]); // one ping at a time
    d.fire("ping_deadline");
    expect(d.statuses()).toEqual(["unresponsive"]);
    expect(d.of("kill_worker")).toEqual([{ kind: "kill_worker", gen: 1, notify: false }]);
    d.exit(null, "SIGKILL");
    expect(d.state.record.lastExit).toMatchObject({ reason: "unresponsive" });
    expect(d.status).toBe("backoff");
  });

  it("an idle agent's pings drift apart, doubling up to six intervals, and come at the usual interval again once something goes on", () => {
    const d = new Driver();
    d.toIdle();
    expect(d.timer("ping_tick").ms).toBe(100);
    const answerPing = (): void => {
      const ping = d.of("send").find((e) => (e.value as { type?: string }).type === "get_state");
      expect(ping).toBeDefined();
      const { id } = ping!.value as { id: string };
      d.line({ type: "response", id, command: "get_state", success: true, data: { isStreaming: false } });
    };
    const ticks: number[] = [];
    for (let i = 0; i < 5; i++) {
      d.fire("ping_tick");
      ticks.push(d.timer("ping_tick").ms);
      answerPing();
    }
    expect(ticks).toEqual([200, 400, 600, 600, 600]);
    // A command from a client: the next ping comes at the usual interval.
    d.send({ kind: "rpc", caller: 1, command: { type: "get_messages" }, timeoutMs: 300 });
    const command = d.of("send")[0].value as { id: string };
    expect(d.timer("ping_tick").ms).toBe(100);
    // While the command is out the agent is not left alone: the interval stays.
    d.fire("ping_tick");
    expect(d.timer("ping_tick").ms).toBe(100);
    answerPing();
    d.line({ type: "response", id: command.id, command: "get_messages", success: true, data: { messages: [] } });
    expect(d.of("resolve")).toHaveLength(1);
    // Answered, and idle again: the ticks drift apart from the start.
    d.fire("ping_tick");
    expect(d.timer("ping_tick").ms).toBe(200);
  });

  it("an idle agent with a memory limit is pinged, and measured, at the usual interval", () => {
    const d = new Driver(record({ limits: { maxMemoryMb: 100 } }));
    d.toIdle();
    for (let i = 0; i < 3; i++) {
      d.send({ kind: "ping_tick", gen: 1, rssBytes: 10 * 1024 * 1024 });
      expect(d.timer("ping_tick")).toMatchObject({ ms: 100, measureRss: true });
      const { id } = d.of("send")[0].value as { id: string };
      d.line({ type: "response", id, command: "get_state", success: true, data: {} });
    }
  });

  it("a worker event the table acts on brings an idle agent's pings back to the usual interval", () => {
    const d = new Driver();
    d.toIdle();
    d.fire("ping_tick");
    d.fire("ping_tick"); // the first is still out: no second ping, the interval grows on
    expect(d.timer("ping_tick").ms).toBe(400);
    d.line({ type: "agent_start" });
    expect(d.statuses()).toEqual(["busy"]);
    expect(d.timer("ping_tick").ms).toBe(100);
    d.fire("ping_tick");
    expect(d.timer("ping_tick").ms).toBe(100); // busy: the usual interval
  });

  it("a ping's deadline gives back the time the worker or the supervisor waited for a CPU, up to six deadlines", () => {
    const d = new Driver();
    d.toIdle();
    d.fire("ping_tick");
    // The deadline (200 ms) fires; the shell measured 150 ms of waiting for a CPU since the ping.
    const first = d.timer("ping_deadline");
    d.timers.delete("ping_deadline");
    d.now += first.ms;
    d.send({ ...first.message, waitedMs: 150 } as AgentMessage);
    expect(d.statuses()).toEqual([]);
    expect(d.timer("ping_deadline").ms).toBe(150);
    // 150 ms later it had its 200 ms of running time: unresponsive.
    d.fire("ping_deadline");
    expect(d.statuses()).toEqual(["unresponsive"]);

    // A worker that waits the whole time is judged at six deadlines of wall time.
    const e = new Driver();
    e.toIdle();
    e.fire("ping_tick");
    const waits: number[] = [];
    while (e.statuses().length === 0) {
      const t = e.timer("ping_deadline");
      e.timers.delete("ping_deadline");
      e.now += t.ms;
      waits.push(t.ms);
      e.send({ ...t.message, waitedMs: waits.reduce((a, b) => a + b, 0) } as AgentMessage);
    }
    expect(e.statuses()).toEqual(["unresponsive"]);
    expect(waits.reduce((a, b) => a + b, 0)).toBe(1_200);
  });

  it("an answered ping clears its deadline; a busy agent silent past the stall timeout stalls and is busy again at its next event", () => {
    const d = new Driver();
    d.toIdle();
    d.fire("ping_tick");
    const ping = d.of("send")[0].value as { id: string };
    d.line({ type: "response", id: ping.id, command: "get_state", success: true, data: {} });
    expect(d.of("cancel_timer").map((e) => e.key)).toEqual(["ping_deadline"]);
    d.line({ type: "agent_start" });
    expect(d.statuses()).toEqual(["busy"]);
    d.now += 1_000;
    d.send({ kind: "ping_tick", gen: 1, rssBytes: null });
    expect(d.statuses()).toEqual(["stalled"]);
    expect(d.state.record.statusReason).toBe("busy with no event for 1s");
    d.line({ type: "message_update" });
    expect(d.statuses()).toEqual(["busy"]);
  });

  it("what it means for a person: idle, working, waiting for you with the question, done, failed with the error, aborted", () => {
    const d = new Driver();
    d.send({ kind: "start" });
    expect(activityOfState(d.state)).toEqual({ state: "starting" });
    d.spawned(100);
    d.answerProbe();
    expect(activityOfState(d.state)).toEqual({ state: "idle" });
    d.line({ type: "agent_start" });
    expect(activityOfState(d.state)).toEqual({ state: "working" });
    d.line({ type: "extension_ui_request", id: "p1", method: "confirm", title: "Deploy?", message: "to production" });
    expect(activityOfState(d.state)).toEqual({ state: "waiting", message: "Deploy?: to production" });
    d.send({
      kind: "rpc",
      caller: 1,
      command: { type: "extension_ui_response", id: "p1", confirmed: true },
      timeoutMs: 300,
    });
    expect(activityOfState(d.state)).toEqual({ state: "working" });
    d.line({ type: "message_end", message: { role: "assistant", content: [], stopReason: "stop" } });
    d.line({ type: "agent_end", messages: [] });
    expect(activityOfState(d.state)).toEqual({ state: "done" });
    // The latest reply decides: an error no retry follows is the run's outcome.
    d.line({ type: "agent_start" });
    d.line({
      type: "message_end",
      message: {
        role: "assistant",
        content: [],
        stopReason: "error",
        errorMessage: "401 invalid x-api-key\nrequest id r1",
      },
    });
    d.line({ type: "agent_end", messages: [] });
    expect(activityOfState(d.state)).toEqual({ state: "failed", message: "401 invalid x-api-key" });
    d.line({ type: "agent_start" });
    d.line({ type: "message_end", message: { role: "assistant", content: [], stopReason: "aborted" } });
    d.line({ type: "agent_end", messages: [] });
    expect(activityOfState(d.state)).toEqual({ state: "idle", message: "aborted" });
    // A worker that dies mid-run: the run failed, whatever the restart does.
    d.line({ type: "agent_start" });
    d.send({ kind: "exit", gen: 1, code: 1, signal: null, spawnError: null, stderrTail: "" });
    expect(d.state.outcome).toEqual({ state: "failed", message: "its worker exited during the run" });
  });

  it("a busy agent waiting on a dialog is not stalled; its silence counts from the answer on", () => {
    const d = new Driver();
    d.toIdle();
    d.line({ type: "agent_start" });
    d.line({
      type: "extension_ui_request",
      id: "p1",
      method: "select",
      title: "Allow rm -rf?",
      options: ["Allow", "Block"],
    });
    d.now += 5_000;
    d.send({ kind: "ping_tick", gen: 1, rssBytes: null });
    expect(d.statuses()).toEqual([]);
    d.send({
      kind: "rpc",
      caller: 1,
      command: { type: "extension_ui_response", id: "p1", value: "Block" },
      timeoutMs: 300,
    });
    d.now += 999;
    d.send({ kind: "ping_tick", gen: 1, rssBytes: null });
    expect(d.statuses()).toEqual([]);
    d.now += 1;
    d.send({ kind: "ping_tick", gen: 1, rssBytes: null });
    expect(d.statuses()).toEqual(["stalled"]);
  });

  it("an event the table only forwards is emitted as the worker wrote it, moves the times seen, and keeps a busy agent from stalling", () => {
    const d = new Driver();
    d.toIdle();
    d.line({ type: "agent_start" });
    const before = d.state;
    d.now += 900;
    const line = '{"type":"message_update","delta":"a"}  ';
    expect(d.send({ kind: "line", gen: 1, line })).toEqual([
      { kind: "emit", event: { type: "message_update", delta: "a" }, raw: line.trim() },
    ]);
    expect(d.state).toEqual({ ...before, lastSeenAt: d.now, lastEventAt: d.now });
    // Lines while the times are less than an eighth of the stall timeout old (125 ms here)
    // change nothing at all: the very same state.
    const same = d.state;
    d.line({ type: "tool_execution_update", toolCallId: "t1" });
    expect(d.state).toBe(same);
    expect(d.emitted()).toEqual(["tool_execution_update"]);
    d.now += 124.75;
    d.line({ type: "tool_execution_update", toolCallId: "t1" });
    expect(d.state).toBe(same);
    // 125 ms after the times last moved, they move again.
    d.now += 0.25;
    d.line({ type: "tool_execution_update", toolCallId: "t1" });
    expect(d.state).toEqual({ ...same, lastSeenAt: d.now, lastEventAt: d.now });
    // A stream of lines closer together than that keeps a busy agent from stalling all the same.
    for (let i = 0; i < 20; i++) {
      d.now += 100;
      d.line({ type: "message_update", delta: "b" });
      d.send({ kind: "ping_tick", gen: 1, rssBytes: null });
    }
    expect(d.status).toBe("busy");
    d.now += 900;
    d.send({ kind: "ping_tick", gen: 1, rssBytes: null });
    expect(d.statuses()).toEqual([]);
    expect(d.status).toBe("busy");
  });

  it("forwards a valid event line as its text and type, unparsed, and parses alike one the scan is not sure of", () => {
    const d = new Driver();
    d.toIdle();
    d.line({ type: "agent_start" });
    d.now += 900;
    const line = JSON.stringify({ type: "message_update", delta: 'a "b"\n', message: { type: "inner" } });
    expect(d.send({ kind: "line", gen: 1, line })).toEqual([
      { kind: "forward", type: "message_update", raw: line, toolCallId: "" },
    ]);
    const tool = JSON.stringify({ type: "tool_execution_update", toolCallId: "t9", partialResult: { text: "x" } });
    expect(d.send({ kind: "line", gen: 1, line: tool })).toEqual([
      { kind: "forward", type: "tool_execution_update", raw: tool, toolCallId: "t9" },
    ]);
    expect(d.state.lastSeenAt).toBe(d.now);
    // An escaped top-level key, a type with an escape: parsed, and emitted as the parse reads them.
    const escapedKey = '{"type":"message_update","\\u0074ype":"tool_execution_update","toolCallId":"t1"}';
    expect(d.send({ kind: "line", gen: 1, line: escapedKey })).toEqual([
      { kind: "emit", event: { type: "tool_execution_update", toolCallId: "t1" }, raw: escapedKey },
    ]);
    const escapedType = '{"type":"agent\\u005fend","messages":[]}';
    d.send({ kind: "line", gen: 1, line: escapedType });
    expect(d.emitted()).toContain("agent_end");
    // A line that is not JSON is never forwarded.
    expect(d.send({ kind: "line", gen: 1, line: '{"type":"message_update",}' }).map((e) => e.kind)).not.toContain(
      "forward",
    );
  });

  it("a ping answer keeps the model the worker reports in the record, and writes the registry only for a new model or session file", () => {
    const d = new Driver();
    d.toIdle();
    d.fire("ping_tick");
    const ping = d.of("send")[0].value as { id: string };
    d.line({
      type: "response",
      id: ping.id,
      command: "get_state",
      success: true,
      data: { sessionFile: "/s/a.jsonl", model: { provider: "faux", id: "faux-1" } },
    });
    expect(d.state.record.reportedModel).toEqual({ provider: "faux", model: "faux-1" });
    expect(d.of("persist")).toHaveLength(1);
    d.fire("ping_tick");
    const same = d.of("send")[0].value as { id: string };
    d.line({
      type: "response",
      id: same.id,
      command: "get_state",
      success: true,
      data: { sessionFile: "/s/a.jsonl", model: { provider: "faux", id: "faux-1" } },
    });
    expect(d.of("persist")).toEqual([]);
    d.fire("ping_tick");
    const next = d.of("send")[0].value as { id: string };
    d.line({ type: "response", id: next.id, command: "get_state", success: true, data: { sessionFile: "/s/b.jsonl" } });
    expect(d.of("persist")).toHaveLength(1);
    expect(d.state.record.sessionFile).toBe("/s/b.jsonl");
    expect(d.state.record.reportedModel).toEqual({ provider: "faux", model: "faux-1" });
    d.exit(0);
    expect(d.state.record.reportedModel).toEqual({ provider: "faux", model: "faux-1" });
  });

  it("a group over its memory limit is killed at a ping tick", () => {
    const d = new Driver(record({ limits: { maxMemoryMb: 10 } }));
    d.toIdle();
    expect(d.timer("ping_tick").measureRss).toBe(true);
    d.send({ kind: "ping_tick", gen: 1, rssBytes: 20 * 1024 * 1024 });
    expect(d.of("emit").map((e) => e.event)).toContainEqual({
      type: "limit_exceeded",
      limit: "max_memory",
      message: "process tree RSS 20 MB is over the 10 MB limit",
    });
    expect(d.of("kill_worker")).toHaveLength(1);
  });
});

describe("agent table: run limits", () => {
  it("a run over maxTokens is aborted once, and ends idle with the reason", () => {
    const d = new Driver(record({ limits: { maxTokens: 100 } }));
    d.toIdle();
    d.line({ type: "agent_start" });
    d.line({ type: "message_end", message: { role: "assistant", usage: { totalTokens: 60 } } });
    expect(d.of("send")).toEqual([]);
    d.line({ type: "message_end", message: { role: "assistant", usage: { totalTokens: 60 } } });
    expect(d.of("emit").map((e) => e.event)).toContainEqual({
      type: "limit_exceeded",
      limit: "max_tokens",
      message: "120 tokens used, over the 100-token limit",
    });
    expect(d.of("send").map((e) => (e.value as { type: string }).type)).toEqual(["abort"]);
    d.line({ type: "message_end", message: { role: "assistant", usage: { totalTokens: 60 } } });
    expect(d.of("send")).toEqual([]);
    d.line({ type: "agent_end", messages: [] });
    expect(d.statuses()).toEqual(["idle"]);
    expect(d.state.record.statusReason).toBe("run aborted: 120 tokens used, over the 100-token limit");
  });

  it("a run over its timeout is aborted; a timer of an earlier run does nothing", () => {
    const d = new Driver(record({ limits: { runTimeoutMs: 1_000 } }));
    d.toIdle();
    d.line({ type: "agent_start" });
    const first = d.timer("run");
    d.line({ type: "agent_end", messages: [] });
    expect(d.of("cancel_timer").map((e) => e.key)).toContain("run");
    d.line({ type: "agent_start" });
    expect(d.send(first.message)).toEqual([]);
    d.fire("run");
    expect(d.of("emit").map((e) => e.event)).toContainEqual({
      type: "limit_exceeded",
      limit: "run_timeout",
      message: "run timeout of 1s exceeded",
    });
    expect(d.of("send").map((e) => (e.value as { type: string }).type)).toEqual(["abort"]);
  });

  it("a crash mid-run reports the interrupted run; lines of an old worker are ignored", () => {
    const d = new Driver();
    d.toIdle();
    d.line({ type: "agent_start" });
    d.exit(null, "SIGKILL");
    expect(d.emitted()).toEqual(["worker_exited", "run_interrupted", "agent_status"]);
    expect(d.send({ kind: "line", gen: 1, line: '{"type":"agent_end"}' })).toEqual([]);
  });
});

describe("agent table: run boundaries", () => {
  const end = (willRetry?: boolean) => ({
    type: "agent_end",
    messages: [],
    ...(willRetry === undefined ? {} : { willRetry }),
  });

  /** Statuses each line of `lines` leads to (one entry per line: the statuses it emitted). */
  function statusesAfter(d: Driver, lines: unknown[]): unknown[][] {
    return lines.map((l) => {
      d.line(l);
      return d.statuses();
    });
  }

  it.each([
    {
      worker: "pi 0.73 (agent_end only): idle at the agent_end no retry follows",
      lines: [{ type: "agent_start" }, end(), { type: "agent_start" }, end()],
      statuses: [["busy"], ["idle"], ["busy"], ["idle"]],
    },
    {
      worker: "ours (willRetry only when true): busy through the retry",
      lines: [{ type: "agent_start" }, end(true), { type: "auto_retry_start" }, { type: "agent_start" }, end()],
      statuses: [["busy"], [], [], [], ["idle"]],
    },
    {
      worker: "pi 1.6 learned at its first agent_settled: the next run's agent_end leaves it busy until settled",
      lines: [
        { type: "agent_start" },
        end(false),
        { type: "agent_settled", aborted: false },
        { type: "agent_start" },
        end(false),
        { type: "agent_start" },
        end(false),
        { type: "agent_settled", aborted: false },
      ],
      statuses: [["busy"], ["idle"], [], ["busy"], [], [], [], ["idle"]],
    },
  ])("$worker", ({ lines, statuses }) => {
    const d = new Driver();
    d.toIdle();
    expect(statusesAfter(d, lines)).toEqual(statuses);
  });

  it("a prompt answered with a disposition (pi 1.6) makes the first run end at agent_settled; the run timeout spans it", () => {
    const d = new Driver(record({ limits: { runTimeoutMs: 1_000 } }));
    d.toIdle();
    d.send({ kind: "rpc", caller: 1, command: { type: "prompt", message: "hi" }, timeoutMs: 300 });
    const sent = d.of("send")[0].value as { id: string };
    d.line({ type: "response", id: sent.id, command: "prompt", success: true, data: { disposition: "started" } });
    expect(d.state.settles).toBe(true);
    d.line({ type: "agent_start" });
    const timer = d.timer("run");
    expect(statusesAfter(d, [end(false), { type: "agent_start" }, end(false)])).toEqual([[], [], []]);
    expect(d.status).toBe("busy");
    expect(d.timer("run")).toBe(timer);
    d.line({ type: "agent_settled", aborted: false });
    expect(d.statuses()).toEqual(["idle"]);
    expect(d.of("cancel_timer").map((e) => e.key)).toContain("run");
  });

  it("a restarted worker is not assumed to settle until it says so", () => {
    const d = new Driver();
    d.toIdle();
    d.line({ type: "agent_settled", aborted: false });
    expect(d.state.settles).toBe(true);
    d.exit(1);
    d.fire("backoff");
    d.spawned(101);
    d.answerProbe();
    expect(d.state.settles).toBe(false);
    expect(statusesAfter(d, [{ type: "agent_start" }, end()])).toEqual([["busy"], ["idle"]]);
  });

  it("an agent_settled line too long to read still ends the run", () => {
    const d = new Driver();
    d.toIdle();
    d.line({ type: "agent_settled", aborted: false });
    d.line({ type: "agent_start" });
    d.line(end(false));
    expect(d.status).toBe("busy");
    d.send({ kind: "line_too_long", gen: d.gen, message: "line too long", head: '{"type":"agent_settled","x":"' });
    expect(d.statuses()).toEqual(["idle"]);
  });
});

describe("agent table: start-up failures", () => {
  const early = (d: Driver, code: number, stderrTail: string) =>
    d.send({ kind: "exit", gen: d.gen, code, signal: null, spawnError: null, stderrTail });

  it("exit 1 before ready: started once more at once, then failed with its words when it says the same", () => {
    const d = new Driver();
    d.send({ kind: "start" });
    d.spawned();
    early(d, 1, "Error: --provider requires --model\n");
    // Started again at once, still starting: a caller waiting for the start waits for this one.
    expect(d.status).toBe("starting");
    expect(d.statuses()).toEqual([]);
    expect(d.of("spawn")).toMatchObject([{ gen: 2 }]);
    d.spawned(101);
    early(d, 1, "Error: --provider requires --model\n");
    expect(d.status).toBe("failed");
    expect(d.state.record.statusReason).toBe(
      "the worker exited with code 1 before it was ready, twice with the same error: Error: --provider requires --model",
    );
    expect(d.state.record.restarts).toBe(1);
    expect(d.of("timer")).toEqual([]);
  });

  it("a worker that got ready in between starts the count again; a temporary one is not started again", () => {
    const d = new Driver();
    d.send({ kind: "start" });
    d.spawned();
    early(d, 1, "flaky\n");
    d.spawned(101);
    d.answerProbe();
    d.exit(1);
    d.fire("backoff");
    d.spawned(102);
    early(d, 1, "flaky\n");
    expect(d.status).toBe("starting");

    const t = new Driver(record({ policy: { ...record().policy, restart: "temporary" } }));
    t.send({ kind: "start" });
    t.spawned();
    early(t, 1, "Error: --provider requires --model\n");
    expect(t.status).toBe("stopped");
  });
});
