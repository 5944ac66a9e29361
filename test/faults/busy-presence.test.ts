/**
 * Fault (issue 31, item 12): several agents at once each run a command with ~50 KB of
 * output and then stream a 20,000-word reply with no delay, while the supervisor pings
 * each every 100 ms with a 500 ms deadline (20 times stricter than the default 10 s).
 * Before, 5 such agents were SIGKILLed as unresponsive: their answers waited behind a
 * pile of events written faster than they were read. Real `pi --mode rpc` workers under
 * an in-process supervisor.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";
import { PI_BIN } from "../support/rpc-worker.js";
import { TestEnv } from "../supervisor/harness.js";
import { figures, killPids } from "./support.js";

const env = new TestEnv();
const pids = new Set<number>();
afterEach(async () => {
  await env.cleanup();
  killPids(pids);
  pids.clear();
});

const AGENTS = 5;
const WORDS = 20_000;

type Ev = Extract<IpcStreamMessage, { type: "event" }>;
const isEvent = (m: IpcStreamMessage, type: string): m is Ev => m.type === "event" && m.event.type === type;

describe("fault: busy agents keep answering their presence pings", () => {
  it("5 agents with 50 KB of command output and a 20,000-word reply each: none unresponsive", async () => {
    const { sup, rec, home } = env.supervisor({
      defaultWorkerCommand: [process.execPath, PI_BIN, "--mode", "rpc"],
      // The default 5 s interval and 10 s deadline, 20 times stricter.
      timings: { pingIntervalMs: 100, pingDeadlineMs: 500, rpcTimeoutMs: 30_000 },
    });
    const script = join(home, "busy.faux.json");
    writeFileSync(
      script,
      JSON.stringify([
        { toolCalls: [{ name: "bash", arguments: { command: "seq 1 10000" } }] },
        { text: Array.from({ length: WORDS }, (_, i) => `w${i}`).join(" ") },
      ]),
    );
    const names = Array.from({ length: AGENTS }, (_, i) => `busy${i}`);
    for (const name of names)
      await sup.spawn({ name, provider: "faux", extraArgs: ["--faux-script", script, "--no-session"] });
    const started = Date.now();
    await Promise.all(names.map((name) => sup.rpc(name, { type: "prompt", message: "go" })));
    // Each run ends, or its agent is found unresponsive (then killed and restarted: the run is lost).
    await Promise.all(
      names.map((name) =>
        rec.waitFor(
          (m) =>
            m.type === "event" &&
            m.agent === name &&
            (m.event.type === "agent_end" || (m.event.type === "agent_status" && m.event.status === "unresponsive")),
          120_000,
          `${name}'s agent_end`,
        ),
      ),
    );
    const runMs = Date.now() - started;
    for (const m of rec.messages) if (isEvent(m, "worker_started")) pids.add(Number(m.event.pid));
    const unresponsive = names.filter((name) => rec.statuses(name).includes("unresponsive"));
    const restarts = names.reduce((sum, name) => sum + sup.status(name).restarts, 0);
    const toolBytes = rec.messages
      .filter((m) => isEvent(m, "tool_execution_end"))
      .map((m) => JSON.stringify(m.event).length);
    const updates = rec.messages.filter((m) => isEvent(m, "message_update")).length;
    figures("busy-presence", {
      agents: AGENTS,
      words_each: WORDS,
      tool_output_kb: Math.round(Math.min(...toolBytes) / 1024),
      message_updates: updates,
      run_ms: runMs,
      ping_deadline_ms: 500,
      unresponsive: unresponsive.length,
      restarts,
    });
    expect(toolBytes).toHaveLength(AGENTS);
    expect(Math.min(...toolBytes)).toBeGreaterThan(45_000);
    expect(unresponsive).toEqual([]);
    expect(restarts).toBe(0);
  }, 180_000);
});
