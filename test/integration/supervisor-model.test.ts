/**
 * The model an agent runs, as every supervisor client sees it (list, status, the TUI):
 * what the worker resolved in its get_state (`faux/faux-1` for `--provider faux`), while
 * the registry on disk keeps what was asked, so a restart asks the same again, and
 * beside it what the worker reported, so the next supervisor names a stopped agent the same.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { IpcClient } from "../../ipc/client.js";
import { modelLabel } from "../../cli/tui/agent-labels.js";
import { TuiStore } from "../../cli/tui/store.js";
import { SupervisorLink } from "../../cli/tui/supervisor-link.js";
import { World, type Json } from "../support/orch-cli.js";
import { TestEnv } from "../supervisor/harness.js";

const PI = [process.execPath, resolve(import.meta.dirname, "../../dist/cli/pi.js"), "--mode", "rpc", "--no-session"];
const env = new TestEnv();
let world: World | undefined;
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await env.cleanup();
  await world?.cleanup();
  world = undefined;
});

describe("the model in the supervisor's agent info", () => {
  it("is the worker's own provider/id once it answered, and stays the last one after it stopped", async () => {
    const { sup, home } = env.supervisor({ defaultWorkerCommand: PI });
    const spawned = await sup.spawn({ name: "m", provider: "faux" });
    expect(spawned).toMatchObject({ status: "idle", provider: "faux", model: "faux-1" });
    expect(sup.list()[0]).toMatchObject({ provider: "faux", model: "faux-1" });
    await sup.stop("m");
    expect(sup.status("m")).toMatchObject({ status: "stopped", provider: "faux", model: "faux-1" });
    const registry = JSON.parse(readFileSync(join(home, "agents.json"), "utf8")) as unknown;
    const rows = (Array.isArray(registry) ? registry : ((registry as { agents?: unknown[] }).agents ?? [])) as {
      name: string;
      provider?: string;
      model?: string;
    }[];
    const row = rows.find((a) => a.name === "m");
    expect(row).toMatchObject({ provider: "faux", reportedModel: { provider: "faux", model: "faux-1" } });
    expect(row?.model).toBeUndefined();
  });

  it("is still the worker's provider/id for a stopped agent that an earlier supervisor ran (list, status, TUI)", async () => {
    world = new World();
    const first = await world.serve();
    // No session file: nothing but the registry can tell the next supervisor what the worker ran.
    await world.ok([
      "spawn",
      "--name",
      "m",
      "--provider",
      "faux",
      "--worker-command",
      `${process.execPath} ${PI[1]} --mode rpc --no-session`,
    ]);
    expect(await world.json(["status", "m"])).toMatchObject({ status: "idle", provider: "faux", model: "faux-1" });
    const exited = new Promise((r) => first.once("exit", r));
    first.kill("SIGTERM");
    await exited;

    await world.serve();
    const status = await world.json(["status", "m"]);
    expect(status).toMatchObject({
      status: "stopped",
      statusReason: "supervisor exited",
      provider: "faux",
      model: "faux-1",
      sessionFile: null,
    });
    expect((await world.json<Json[]>(["list"]))[0]).toMatchObject({ name: "m", provider: "faux", model: "faux-1" });
    expect(await world.ok(["list"])).toMatch(/\bm\b.*stopped.*faux\/faux-1/);

    const store = new TuiStore({ frameMs: 10 });
    closers.push(() => store.dispose());
    const link = new SupervisorLink(store, { connect: () => IpcClient.connect({ home: world!.home.path }) });
    closers.push(() => link.close());
    // Wait for the store's own change notices, not for time.
    const view = await new Promise<NonNullable<ReturnType<TuiStore["getState"]>["agents"][string]>>((done) => {
      const check = () => {
        const state = store.getState();
        if (state.connection.state !== "connected" || !state.agents.m) return;
        unsubscribe();
        done(state.agents.m);
      };
      const unsubscribe = store.subscribe(check);
      check();
    });
    expect(view.status).toBe("stopped");
    expect(modelLabel(view)).toBe("faux/faux-1");
  }, 60_000);
});
