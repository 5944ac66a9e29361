/**
 * Fault: a worker that starts but never answers its first `get_state` (a hung start-up,
 * a program that is not a pi worker). Each try takes the whole start deadline, so the
 * restart intensity never trips; the agent is failed after 3 such starts in a row, with
 * the cause, and nothing is left running.
 */
import { afterEach, expect, it } from "vitest";
import { type Json, TIMINGS, World } from "../support/orch-cli.js";
import { figures } from "./support.js";

let world: World | undefined;
afterEach(async () => {
  await world?.cleanup();
  world = undefined;
});

it("a worker that never answers get_state is failed after 3 starts with the cause, 0 processes left", async () => {
  world = new World({ PI_ORCH_TIMINGS: JSON.stringify({ ...TIMINGS, startTimeoutMs: 1_000 }) });
  await world.serve();
  const silent = `${process.execPath} -e setInterval(()=>{},1000)`;
  const t = performance.now();
  const spawned = await world.cli(["spawn", "--name", "mute", "--restart", "permanent", "--worker-command", silent]);
  expect(spawned.code).toBe(1);
  const failed: Json = await world.waitForStatus("mute", (a) => a.status === "failed", 30_000);
  const ms = performance.now() - t;
  expect(failed.statusReason).toBe(
    "its worker never answered get_state: 3 starts in a row, each given 1s; see its stderr (pi-orch logs mute --stderr)",
  );
  const starts = world.events("mute").filter((e) => e.event?.type === "worker_started").length;
  expect(starts).toBe(3);
  expect(world.taggedPids().filter((pid) => pid !== world!.serves[0]?.pid)).toEqual([]);
  figures("silent-start", { starts, failed_after_ms: Math.round(ms), processes_left: 0 });
}, 60_000);
