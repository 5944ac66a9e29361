/**
 * Fault: the wall clock jumps (NTP, a resumed laptop, `date -s`) while agents are busy in
 * a silent tool call. Under libfaketime (Debian `faketime`; the jump is a line in a file
 * every process of the test reads, monotonic time left real) the supervisor, its CLI and
 * its workers all see +3 h, then -3 h. Stall detection measures on the monotonic clock,
 * so neither jump changes any agent's state; the times `status` shows follow the new
 * wall clock.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { type Json, World } from "../support/orch-cli.js";
import { figures } from "./support.js";

const LIBFAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
const HOUR = 3_600_000;

let world: World | undefined;
afterEach(async () => {
  await world?.cleanup();
  world = undefined;
});

it.skipIf(!existsSync(LIBFAKETIME))(
  "+3 h and -3 h wall-clock jumps with two agents busy in a silent tool: no stall, no restart, no state change",
  async () => {
    const env: NodeJS.ProcessEnv = {};
    world = new World(env);
    const clockFile = join(world.cwd.path, "faketime");
    writeFileSync(clockFile, "+0\n");
    Object.assign(env, {
      LD_PRELOAD: LIBFAKETIME,
      FAKETIME_TIMESTAMP_FILE: clockFile,
      FAKETIME_CACHE_DURATION: "0",
      DONT_FAKE_MONOTONIC: "1",
    });
    // The stall timeout is the default 10 min: the old wall-clock check called both agents stalled at the first ping after +3 h.
    const w = world;
    await w.serve();
    const names = ["c1", "c2"];
    for (const name of names) {
      await w.ok(["spawn", "--name", name, "--provider", "faux", "--on-stall", "restart"]);
      await w.ok(["prompt", name, "run `sleep 15; echo done`"]);
    }
    for (const name of names) await w.waitForStatus(name, (a) => a.status === "busy");
    const before: Json[] = await w.json(["list"]);

    const seenAfter = async (name: string, offset: number) =>
      w.waitForStatus(
        name,
        (a) => typeof a.lastSeenAt === "number" && Math.abs(a.lastSeenAt - (Date.now() + offset)) < HOUR,
      );
    writeFileSync(clockFile, "+3h\n");
    // The supervisor has answered a presence ping after the jump once the time it shows is 3 h ahead.
    const ahead = await Promise.all(names.map((n) => seenAfter(n, 3 * HOUR)));
    expect(ahead.map((a) => a.status)).toEqual(["busy", "busy"]); // still in the 15 s sleep

    writeFileSync(clockFile, "-3h\n");
    const behind = await Promise.all(names.map((n) => seenAfter(n, -3 * HOUR)));
    expect(behind.map((a) => a.status).every((s) => s === "busy" || s === "idle")).toBe(true);

    for (const name of names) await w.waitForStatus(name, (a) => a.status === "idle", 30_000);
    const after: Json[] = await w.json(["list"]);
    expect(after.map((a) => [a.name, a.restarts, a.pid])).toEqual(before.map((a) => [a.name, a.restarts, a.pid]));
    const stalls = names.flatMap((n) => w.events(n)).filter((e) => e.event?.status === "stalled").length;
    expect(stalls).toBe(0);
    figures("clock-jump", { agents: names.length, jumps: "+3h,-3h", stalled: stalls, restarts: 0 });
  },
  90_000,
);
