/**
 * A worker that cannot start because of its configuration is `failed` with its own
 * words, not restarted in a loop: upstream pi 1.6.0 unchanged, given `--provider`
 * without `--model`, exits 1 with `Error: --provider requires --model`; the supervisor
 * starts it once more, hears the same words, and fails it. `spawn`, `status` and `list`
 * say why. afterEach kills every process the test started.
 */
import { existsSync } from "node:fs";
import { afterEach, beforeAll, expect, it } from "vitest";
import { figures } from "../faults/support.js";
import { BIN, World } from "../support/orch-cli.js";
import { NODE22, PI16_CLI, pi16Installed } from "../support/upstream-pi16.js";

let world: World | undefined;

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error("dist/cli/pi-orch.js is missing: run npm run build first");
});

afterEach(async () => {
  await world?.cleanup();
  world = undefined;
});

it.skipIf(!pi16Installed)(
  "pi 1.6.0 exiting 1 with a configuration error is failed after two starts, with its words in spawn, status and list",
  async () => {
    world = new World({ PI_OFFLINE: "1" });
    const w = world;
    await w.serve();
    const t0 = performance.now();
    const spawn = await w.cli([
      "spawn",
      "--name",
      "conf",
      "--worker-command",
      `${NODE22} ${PI16_CLI} --mode rpc --no-session`,
      "--provider",
      "mock",
    ]);
    const toFailedMs = Math.round(performance.now() - t0);
    const cause = "twice with the same error: Error: --provider requires --model";
    expect(spawn.code).toBe(1);
    expect(spawn.stderr).toContain(
      `agent "conf" did not start (failed: the worker exited with code 1 before it was ready, ${cause}`,
    );
    const status = await w.json(["status", "conf"]);
    expect(status).toMatchObject({ status: "failed", restarts: 1 });
    expect(status.statusReason).toContain(cause);
    expect(await w.ok(["list"])).toContain(cause);
    const events = w.events("conf");
    const starts = events.filter((e) => e.event?.type === "worker_started");
    const failedAt = events.find((e) => e.event?.type === "agent_status" && e.event.status === "failed")?.at;
    // The supervisor's own figure: first start to failed (the CLI's includes its own start and the socket).
    figures("pi16-config-error-exit-1", {
      cli_spawn_ms: toFailedMs,
      supervisor_to_failed_ms: failedAt - starts[0]!.at,
      starts: starts.length,
    });
    expect(starts).toHaveLength(2);
  },
  60_000,
);
