/**
 * Fault: the supervisor stops answering (SIGSTOP here; a hang looks the same from the
 * client). `list` and `spawn` give up within seconds with an error that names its pid
 * and what to do, instead of a silent 10-minute wait; and the spawn the client gave up
 * on is not carried out when the supervisor runs again.
 */
import { afterEach, expect, it } from "vitest";
import { type Json, World } from "../support/orch-cli.js";
import { figures } from "./support.js";

let world: World | undefined;
let stopped: number | undefined;
afterEach(async () => {
  if (stopped !== undefined) process.kill(stopped, "SIGCONT");
  stopped = undefined;
  await world?.cleanup();
  world = undefined;
});

it("SIGSTOPped supervisor: list and spawn fail fast naming its pid; the abandoned spawn never happens", async () => {
  world = new World();
  const serve = await world.serve();
  await world.ok(["spawn", "--name", "kept", "--provider", "faux"]);
  const pid = serve.pid!;
  process.kill(pid, "SIGSTOP");
  stopped = pid;

  // Both clients wait out their own timeouts on the silent supervisor: at once, not in turn.
  const timed = async (args: string[]) => {
    const t = performance.now();
    const r = await world!.cli(args);
    return { ...r, ms: performance.now() - t };
  };
  const [list, spawn] = await Promise.all([timed(["list"]), timed(["spawn", "--name", "ghost", "--provider", "faux"])]);
  const [listMs, spawnMs] = [list.ms, spawn.ms];
  expect(list.code).toBe(1);
  expect(list.stderr).toContain(`the supervisor (pid ${pid}) did not answer the list request within 5 s`);
  expect(list.stderr).toContain(`if you stopped it, kill -CONT ${pid}; if it stays silent, kill ${pid}`);

  expect(spawn.code).toBe(1);
  expect(spawn.stderr).toMatch(
    new RegExp(
      `the supervisor \\(pid ${pid}\\) did not answer the spawn request in [\\d.]+ s, nor a status request after it`,
    ),
  );

  process.kill(pid, "SIGCONT");
  stopped = undefined;
  const agents = await world.json<Json[]>(["list"]);
  expect(agents.map((a) => a.name)).toEqual(["kept"]);
  await world.until(
    "the abandoned-request warning",
    () => world!.serveOutput.get(serve) ?? "",
    (s) => s.includes("a spawn request was not carried out: its client had gone before it was read"),
    5_000,
  );
  figures("silent-supervisor", {
    list_gave_up_ms: Math.round(listMs),
    spawn_gave_up_ms: Math.round(spawnMs),
    abandoned_spawns_carried_out: 0,
  });
}, 90_000);
