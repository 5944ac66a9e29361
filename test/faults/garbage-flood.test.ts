/**
 * A worker flooding non-JSON lines: it is marked (`protocol errors`), the
 * log gets one summary event per second counting the dropped lines instead of one
 * event per line, the worker is restarted by policy past the threshold, and the agent's
 * history is not rotated out of its (small) logs by the garbage.
 */
import { afterEach, describe, expect, it } from "vitest";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";
import { FIXTURE, TestEnv, readPids } from "../supervisor/harness.js";
import { figures, until, waitAllGone } from "./support.js";

const env = new TestEnv();
afterEach(() => env.cleanup());

type Ev = Extract<IpcStreamMessage, { type: "event" }>;
const events = (messages: IpcStreamMessage[], type: string) =>
  messages.filter((m): m is Ev => m.type === "event" && m.agent === "x" && m.event.type === type);

describe("fault: a worker floods non-JSON lines", () => {
  it("is marked, summarised once a second, restarted past the threshold, and its history stays in the logs", async () => {
    const restartAfterDropped = 150_000;
    const { sup, rec, home } = env.supervisor({
      defaultWorkerCommand: [process.execPath, FIXTURE],
      protocolFlood: { restartAfterDropped },
      // Small logs with one rotated file: one event per garbage line would push the history out at once.
      logMaxBytes: 64 * 1024,
      logKeepFiles: 1,
    });
    const pidFile = env.pidFile(home);
    await sup.spawn({
      name: "x",
      env: { FIXTURE_GARBAGE_FLOOD: "0", FIXTURE_PID_FILE: pidFile, FIXTURE_SESSION_DIR: home },
    });
    // The history: one ordinary run.
    expect((await sup.rpc("x", { type: "prompt", message: "hello" })).success).toBe(true);
    const historyEnd = (await rec.waitFor(
      (m) => m.type === "event" && m.agent === "x" && m.event.type === "agent_end",
      15_000,
      "the first run's end",
    )) as Ev;
    await until(() => sup.status("x").status === "idle", 10_000, "idle after the first run");
    const firstPid = sup.status("x").pid;

    const t0 = Date.now();
    expect((await sup.rpc("x", { type: "prompt", message: "flood" })).success).toBe(true);
    const marked = (await rec.status(
      "x",
      "idle",
      (e) => String(e.reason ?? "").startsWith("protocol errors"),
      20_000,
    )) as Ev;
    const exited = (await rec.waitFor(
      (m) => m.type === "event" && m.agent === "x" && m.event.type === "worker_exited",
      120_000,
      "the restart for protocol errors",
    )) as Ev;
    const floodMs = Date.now() - t0;
    await until(
      () => sup.status("x").status === "idle" && sup.status("x").pid !== firstPid,
      20_000,
      "idle on a new worker",
    );
    const info = sup.status("x");

    const errors = events(rec.messages, "protocol_error");
    const summaries = errors.filter((m) => typeof m.event.dropped === "number");
    const dropped = summaries.reduce((n, m) => n + Number(m.event.dropped), 0);
    const reportedOneByOne = errors.length - summaries.length;
    const logs = join(home, "logs");
    const eventFiles = readdirSync(logs).filter((f) => f.startsWith("x.events.jsonl"));
    const onDisk = eventFiles.flatMap((f) =>
      readFileSync(join(logs, f), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { seq: number }),
    );
    const historyKept = onDisk.some((e) => e.seq === historyEnd.seq);
    const stderrBytes = statSync(join(logs, "x.stderr.log")).size;
    const eventsBytes = eventFiles.reduce((n, f) => n + statSync(join(logs, f)).size, 0);
    await sup.stop("x");
    const left = await waitAllGone(readPids(pidFile).workers, 5_000);

    figures("garbage-flood", {
      flood_ms: floodMs,
      lines_dropped: dropped,
      summary_events: summaries.length,
      reported_one_by_one: reportedOneByOne,
      events_during_flood: rec.messages.filter(
        (m) => m.type === "event" && m.agent === "x" && m.seq > historyEnd.seq && m.seq <= exited.seq,
      ).length,
      events_log_bytes: eventsBytes,
      stderr_log_bytes: stderrBytes,
      history_kept: historyKept,
      exit_reason: String(exited.event.reason),
      restarts: info.restarts,
      processes_left: left.length,
    });
    expect(marked.event.reason).toMatch(/^protocol errors/);
    expect(exited.event.reason).toBe("protocol_errors");
    expect(info.restarts).toBe(1);
    expect(reportedOneByOne).toBe(10);
    expect(dropped).toBeGreaterThanOrEqual(restartAfterDropped);
    // One summary per second of flood (and one at the exit), not one event per line.
    expect(summaries.length).toBeLessThanOrEqual(Math.ceil(floodMs / 1000) + 2);
    expect(historyKept).toBe(true);
    expect(left).toEqual([]);
  }, 180_000);
});
