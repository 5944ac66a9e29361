/**
 * What an MCP server leaves behind: a stdio server (and what it started) is part of its
 * worker's process tree, so `stop`, a SIGKILL of the worker and `shutdown` take it down
 * like a bash tool's background job (its own process group, found again by the worker's
 * tool tag). Real `pi --mode rpc` workers under an in-process supervisor, with a real MCP
 * server written with the official SDK.
 */
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";
import { PI_BIN } from "../support/rpc-worker.js";
import { TestEnv } from "../supervisor/harness.js";
import { figures, killPids, leftAlive, waitAllGone } from "./support.js";

const PROBE = resolve(import.meta.dirname, "../support/mcp-probe-server.mjs");
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

describe("fault: an MCP server of a worker", () => {
  it("is gone with what it started after stop, a SIGKILL of the worker and shutdown", async () => {
    const { sup, rec, home } = env.supervisor({
      defaultWorkerCommand: [process.execPath, PI_BIN, "--mode", "rpc"],
      timings: { pingIntervalMs: 200, pingDeadlineMs: 3_000, stopGraceMs: 1_000, killGraceMs: 500 },
    });
    writeFileSync(
      join(home, "mcp.json"),
      JSON.stringify({ mcpServers: { probe: { command: process.execPath, args: [PROBE], exposure: "direct" } } }),
    );
    const trees: Record<string, number[]> = {};
    const workers: Record<string, number> = {};
    for (const name of ["stop", "kill", "shut"]) {
      const script = join(home, `${name}.faux.json`);
      writeFileSync(
        script,
        JSON.stringify([
          { toolCalls: [{ name: "mcp__probe__pid", arguments: {} }] },
          { toolCalls: [{ name: "mcp__probe__spawn_sleeper", arguments: {} }] },
          { text: "done" },
        ]),
      );
      await sup.spawn({ name, provider: "faux", extraArgs: ["--faux-script", script] });
      await sup.rpc(name, { type: "prompt", message: "go" });
      await rec.waitFor((m) => isEvent(m, name, "agent_end"), 20_000, `${name} agent_end`);
      const results = rec.messages
        .filter((m) => isEvent(m, name, "tool_execution_end"))
        .map((m) => Number(((m as Ev).event as { result: { content: { text: string }[] } }).result.content[0]!.text));
      trees[name] = results;
      for (const pid of results) pids.add(pid);
      workers[name] = rec.messages
        .filter((m) => isEvent(m, name, "worker_started"))
        .map((m) => Number((m as Ev).event.pid))
        .at(-1)!;
      pids.add(workers[name]!);
    }
    expect(leftAlive(Object.values(trees).flat())).toHaveLength(6);

    let at = Date.now();
    await sup.stop("stop");
    const stopLeft = await waitAllGone(trees.stop!, 5_000);
    const stopMs = Date.now() - at;

    at = Date.now();
    process.kill(workers.kill!, "SIGKILL");
    const killLeft = await waitAllGone(trees.kill!, 5_000);
    const killMs = Date.now() - at;

    at = Date.now();
    await sup.shutdown();
    const shutLeft = await waitAllGone(trees.shut!, 5_000);
    const shutMs = Date.now() - at;

    figures("mcp-server-teardown", {
      gone_after_stop_ms: stopMs,
      gone_after_worker_sigkill_ms: killMs,
      gone_after_shutdown_ms: shutMs,
      left_stop: stopLeft.length,
      left_kill: killLeft.length,
      left_shutdown: shutLeft.length,
    });
    expect({ stopLeft, killLeft, shutLeft }).toEqual({ stopLeft: [], killLeft: [], shutLeft: [] });
  });
});
