/**
 * A run whose events add up past the line limit: 200 reads of a 60 KB file in
 * one turn make `turn_end` and `agent_end` repeat about 10 MB of tool output each. The
 * worker cuts such an event to fit the line limit instead of writing a line the
 * supervisor must drop, so the run ends and the agent is idle again. A real
 * `pi --mode rpc` worker under an in-process supervisor.
 */
import { afterEach, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";
import { PI_BIN } from "../support/rpc-worker.js";
import { TestEnv } from "../supervisor/harness.js";
import { figures, killPids, until } from "./support.js";

const env = new TestEnv();
const pids = new Set<number>();
afterEach(async () => {
  await env.cleanup();
  killPids(pids);
  pids.clear();
});

type Ev = Extract<IpcStreamMessage, { type: "event" }>;
const isEvent = (m: IpcStreamMessage, agent: string, type: string): m is Ev =>
  m.type === "event" && m.agent === agent && m.event.type === type;

describe("fault: a run bigger than the line limit", () => {
  it("200 reads of a 60 KB file in one run: every event arrives, the run ends, the agent is idle", async () => {
    const { sup, rec, home } = env.supervisor({
      defaultWorkerCommand: [process.execPath, PI_BIN, "--mode", "rpc"],
      timings: { pingIntervalMs: 500, pingDeadlineMs: 10_000, rpcTimeoutMs: 30_000 },
      // The run is CPU-heavy; at nice 19 on a shared, loaded runner the worker starves past its ping deadline.
      workerNice: 0,
    });
    const file = join(home, "big.txt");
    writeFileSync(file, Array.from({ length: 1500 }, (_, i) => `line ${i} ${"x".repeat(32)}`).join("\n"));
    const calls = Array.from({ length: 200 }, () => ({ name: "read", arguments: { path: file } }));
    const script = join(home, "big.faux.json");
    writeFileSync(script, JSON.stringify([{ toolCalls: calls }, { text: "read them all" }]));
    await sup.spawn({ name: "big", provider: "faux", extraArgs: ["--faux-script", script] });
    const started = Date.now();
    await sup.rpc("big", { type: "prompt", message: "read the file 200 times" });
    const end = (await rec.waitFor((m) => isEvent(m, "big", "agent_end"), 60_000, "agent_end")) as Ev;
    const runMs = Date.now() - started;
    await until(() => sup.status("big").status === "idle", 10_000, "idle");
    for (const m of rec.messages) if (isEvent(m, "big", "worker_started")) pids.add(Number(m.event.pid));
    const toolEnds = rec.messages.filter((m) => isEvent(m, "big", "tool_execution_end")).length;
    const turnEnds = rec.messages.filter((m) => isEvent(m, "big", "turn_end")).length;
    const protocolErrors = rec.messages.filter((m) => isEvent(m, "big", "protocol_error")).length;
    const runBytes = rec.messages
      .filter((m): m is Ev => m.type === "event" && m.agent === "big")
      .reduce((sum, m) => sum + Buffer.byteLength(JSON.stringify(m.event)), 0);
    const endBytes = Buffer.byteLength(JSON.stringify(end.event));
    const endMessages = (end.event.messages as unknown[]).length;
    figures("big-run", {
      tool_calls: 200,
      run_mb: (runBytes / 1024 / 1024).toFixed(1),
      agent_end_kb: Math.round(endBytes / 1024),
      agent_end_messages: endMessages,
      turn_ends: turnEnds,
      protocol_errors: protocolErrors,
      run_ms: runMs,
    });
    expect(toolEnds).toBe(200);
    expect(turnEnds).toBe(2);
    expect(protocolErrors).toBe(0);
    // system (the prompt and tools), user, assistant with 200 calls, 200 results, final
    // assistant: all there, their long texts cut.
    expect(endMessages).toBe(204);
    expect(endBytes).toBeLessThanOrEqual(4 * 1024 * 1024);
    expect(runBytes).toBeGreaterThan(20 * 1024 * 1024);
    expect(JSON.stringify(end.event)).toMatch(/characters cut: the event was over/);
  }, 120_000);
});
