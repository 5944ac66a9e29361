/**
 * The built `pi-orch` CLI end to end: a real `serve` process per test (short presence
 * and backoff timings through PI_ORCH_TIMINGS / PI_ORCH_RESTART_POLICY), real workers
 * (the faux `pi`), and the commands run as child processes against a temp home.
 * afterEach kills every process the test started, even when it failed.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { isAlive, waitForExit } from "../support/rpc-worker.js";
import { BIN, PI, POLICY, World, type Json } from "../support/orch-cli.js";

let world: World;

beforeAll(() => {
  if (!existsSync(BIN) || !existsSync(PI))
    throw new Error("dist/cli/pi-orch.js or dist/cli/pi.js is missing: run npm run build first");
});

afterEach(async () => {
  await world?.cleanup();
});

describe("pi-orch CLI", () => {
  it("spawns three agents and lists them as JSON", async () => {
    world = new World();
    await world.serve();
    for (const name of ["alpha", "beta", "gamma"]) await world.ok(["spawn", "--name", name, "--provider", "faux"]);
    const agents = await world.json<Json[]>(["list"]);
    expect(agents.map((a) => a.name)).toEqual(["alpha", "beta", "gamma"]);
    for (const a of agents) {
      expect(a.status).toBe("idle");
      expect(a.restarts).toBe(0);
      expect(a.provider).toBe("faux");
      expect(isAlive(a.pid)).toBe(true);
    }
    expect(new Set(agents.map((a) => a.pid)).size).toBe(3);
    const table = await world.ok(["list"]);
    expect(table).toMatch(/NAME\s+STATUS\s+STATE\s+PID\s+RESTARTS\s+MODEL\s+TOKENS\s+COST\s+CWD\s+LAST SEEN/);
    expect(table).toMatch(/gamma\s+idle\s+idle\s+\d+\s+0\s+faux\S*\s+-\s+-/);
    expect(table).toContain("fleet: 3 agents (3 idle), 0 tokens (0 in, 0 out), $0.00");
    // An id prefix works wherever a name does.
    const byId = await world.json(["status", agents[1].id.slice(0, 6)]);
    expect(byId.name).toBe("beta");
  }, 60_000);

  it("prompt --wait prints the reply and exits 0; a run that ends in error exits 1", async () => {
    world = new World();
    await world.serve();
    await world.ok(["spawn", "--name", "echo", "--provider", "faux"]);
    const r = await world.cli(["prompt", "echo", "run `echo hello-from-the-agent`", "--wait"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("hello-from-the-agent");
    const echo = await world.json(["status", "echo"]);
    expect(echo.status).toBe("idle");
    // Tokens and cost from the worker's usage, in status, list and their --json.
    expect(echo.usage.total).toBeGreaterThan(0);
    expect(echo.usage).toMatchObject({ cost: 0 });
    expect(echo.usage.total).toBe(echo.usage.input + echo.usage.output + echo.usage.cacheRead + echo.usage.cacheWrite);
    expect(await world.ok(["status", "echo"])).toMatch(/usage\s+\S+ tokens \(\S+ in, \S+ out, .*\), \$0\.00/);
    expect((await world.json<Json[]>(["list"]))[0]!.usage).toEqual(echo.usage);

    await world.ok([
      "spawn",
      "--name",
      "broken",
      "--worker-command",
      world.fauxWorker([{ error: { message: "the model is on fire" } }]),
    ]);
    const bad = await world.cli(["prompt", "broken", "hello", "--wait"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("the model is on fire");
  }, 60_000);

  it("fans one prompt out with --to and --wait", async () => {
    world = new World();
    await world.serve();
    await world.ok(["spawn", "--name", "one", "--provider", "faux"]);
    await world.ok(["spawn", "--name", "two", "--provider", "faux"]);
    const r = await world.cli(["prompt", "--to", "one,two", "run `echo fan-out-ok`", "--wait"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\[one\] .*fan-out-ok/);
    expect(r.stdout).toMatch(/\[two\] .*fan-out-ok/);
  }, 60_000);

  it("restarts a worker killed with SIGKILL mid-run and resumes its session (restarts: 1)", async () => {
    world = new World();
    await world.serve();
    const slow = "this reply streams slowly so the worker can be killed in the middle of it ".repeat(4);
    const worker = world.fauxWorker([
      { text: "first answer" },
      { text: slow, chunkDelayMs: 200 },
      { text: "after the restart" },
    ]);
    await world.ok(["spawn", "--name", "victim", "--worker-command", worker]);
    expect((await world.cli(["prompt", "victim", "first question", "--wait"])).stdout).toContain("first answer");
    const before = await world.json(["status", "victim"]);
    expect(before.sessionFile).toBeTruthy();

    await world.ok(["prompt", "victim", "second question"]);
    await world.waitForStatus("victim", (a) => a.status === "busy");
    process.kill(before.pid, "SIGKILL");

    const after = await world.waitForStatus("victim", (a) => a.status === "idle" && a.pid !== before.pid);
    expect(after.restarts).toBe(1);
    expect(after.sessionFile).toBe(before.sessionFile);
    expect(after.lastExit).toMatchObject({ reason: "exit", signal: "SIGKILL" });
    const types = world.events("victim").map((e) => e.event.type);
    expect(types).toContain("run_interrupted");
    const started = world.events("victim").filter((e) => e.event.type === "worker_started");
    expect(started.at(-1)!.event.resumed).toBe(before.sessionFile);

    const messages = JSON.parse(await world.ok(["rpc", "victim", '{"type":"get_messages"}']));
    expect(messages.success).toBe(true);
    const texts = JSON.stringify(messages.data);
    expect(texts).toContain("first question");
    expect(texts).toContain("first answer");
    expect(texts).toContain("second question");
  }, 60_000);

  it("puts a worker that exits at once in failed after the intensity limit, backing off in between", async () => {
    world = new World();
    await world.serve();
    const crash = join(world.cwd.path, "crash.sh");
    // Other words each time: a crash, not a configuration error (the same words twice fail it after two starts).
    writeFileSync(
      crash,
      '#!/bin/sh\necho "crash.sh: giving up at once ($(tr -dc a-z </dev/urandom | head -c 12))" >&2\nexit 1\n',
    );
    chmodSync(crash, 0o755);
    const spawned = await world.cli(["spawn", "--name", "crashy", "--worker-command", crash]);
    expect(spawned.code).toBe(1);
    expect(spawned.stderr).toContain("did not start");

    const failed = await world.waitForStatus("crashy", (a) => a.status === "failed");
    expect(failed.restarts).toBe(POLICY.intensity);
    expect(failed.statusReason).toMatch(/failed after 3 restarts/);
    const events = world.events("crashy");
    const backoffs = events.filter((e) => e.event.type === "agent_status" && e.event.status === "backoff");
    // The first exit before ready is started again at once (only a second start tells a configuration error).
    expect(backoffs.map((e) => /restarting in (\d+) ms/.exec(e.event.reason)?.[1])).toEqual(["200", "400"]);
    const starts = events.filter((e) => e.event.type === "worker_started").map((e) => e.at as number);
    expect(starts).toHaveLength(4);
    // Each later restart waited at least its backoff (timer slack aside) after the previous start.
    for (const [i, delay] of [0, 200, 400].entries())
      expect(starts[i + 1] - starts[i]).toBeGreaterThanOrEqual(delay - 10);

    expect(await world.ok(["logs", "crashy", "--stderr"])).toContain("crash.sh: giving up at once");
    const status = await world.cli(["prompt", "crashy", "hello"]);
    expect(status.code).toBe(1);
    expect(status.stderr).toMatch(/not running \(status: failed/);
  }, 60_000);

  it("marks a worker stopped with SIGSTOP unresponsive and restarts it", async () => {
    world = new World();
    await world.serve();
    await world.ok(["spawn", "--name", "frozen", "--provider", "faux"]);
    const before = await world.json(["status", "frozen"]);
    process.kill(before.pid, "SIGSTOP");
    const after = await world.waitForStatus("frozen", (a) => a.status === "idle" && a.pid !== before.pid);
    expect(after.restarts).toBe(1);
    expect(after.lastExit).toMatchObject({ reason: "unresponsive" });
    const statuses = world
      .events("frozen")
      .filter((e) => e.event.type === "agent_status")
      .map((e) => e.event.status);
    expect(statuses).toContain("unresponsive");
    expect(await waitForExit(before.pid, 5000)).toBe(true);
  }, 60_000);

  it("leaves no process alive after SIGTERM to serve with busy agents, and serve --resume brings them back", async () => {
    world = new World();
    const serve = await world.serve();
    const names = ["sleeper-1", "sleeper-2"];
    for (const name of names) {
      await world.ok(["spawn", "--name", name, "--provider", "faux", "--prompt", "run `sleep 60 & echo PID=$!; wait`"]);
    }
    // Collect every pid of the tree: workers from list, the sleeps from their bash output.
    const workerPids = (await world.json<Json[]>(["list"])).map((a) => a.pid as number);
    const sleepPids: number[] = [];
    const deadline = Date.now() + 20_000;
    for (const name of names) {
      for (;;) {
        const match = world
          .events(name)
          .map((e) => JSON.stringify(e.event))
          .join("\n")
          .match(/PID=(\d+)/);
        if (match) {
          sleepPids.push(Number(match[1]));
          break;
        }
        if (Date.now() > deadline) throw new Error(`${name} never printed its sleep pid`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    for (const a of await world.json<Json[]>(["list"])) expect(a.status).toBe("busy");
    const tree = world.taggedPids().filter((p) => p !== serve.pid);
    expect(tree.length).toBeGreaterThanOrEqual(6); // two workers, two bash, two sleeps
    for (const pid of [...workerPids, ...sleepPids]) expect(tree).toContain(pid);

    const exited = new Promise<number | null>((r) => serve.once("exit", (code) => r(code)));
    serve.kill("SIGTERM");
    expect(await exited).toBe(0);
    for (const pid of [...tree, ...workerPids, ...sleepPids])
      expect(isAlive(pid), `pid ${pid} outlived serve`).toBe(false);
    expect(world.taggedPids()).toEqual([]);

    const registry = JSON.parse(readFileSync(join(world.home.path, "agents.json"), "utf8"));
    for (const a of registry.agents)
      expect(a).toMatchObject({ status: "stopped", statusReason: "supervisor exited", pid: null });

    await world.serve(["--resume"]);
    const resumed = await world.json<Json[]>(["list"]);
    expect(resumed.map((a) => a.name)).toEqual(names);
    for (const a of resumed) {
      expect(["idle", "busy"]).toContain(a.status);
      expect(workerPids).not.toContain(a.pid);
      expect(isAlive(a.pid)).toBe(true);
      expect(a.sessionFile).toBe(registry.agents.find((r: Json) => r.name === a.name).sessionFile);
    }
    const messages = JSON.parse(await world.ok(["rpc", names[0], '{"type":"get_messages"}']));
    expect(JSON.stringify(messages.data)).toContain("sleep 60");
    await world.ok(["shutdown"]);
  }, 90_000);

  it("exits 1 with a clear message for an unknown agent and 2 for bad usage", async () => {
    world = new World();
    const none = await world.cli(["list"]);
    expect(none.code).toBe(1);
    // The CLI was given --home, so the hint names it: a plain `pi-orch serve` would serve the default home.
    expect(none.stderr).toContain(
      `no supervisor is running for ${world.home.path}; start one with: pi-orch --home ${world.home.path} serve`,
    );

    await world.serve();
    const unknown = await world.cli(["status", "ghost"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no agent named "ghost"');
    expect(unknown.stderr).toContain("pi-orch list");
    expect((await world.cli(["prompt", "ghost", "hi"])).code).toBe(1);

    expect((await world.cli(["spawn", "--restart", "sometimes"])).code).toBe(2);
    expect((await world.cli(["stop"])).code).toBe(2);
    expect((await world.cli(["prompt", "ghost"])).code).toBe(2);
    expect((await world.cli(["spawn", "--max-tokens", "lots"])).code).toBe(2);
    expect((await world.cli(["no-such-command"])).code).toBe(2);
    const badJson = await world.cli(["rpc", "ghost", "{not json"]);
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toContain("not valid JSON");
    const help = await world.cli(["spawn", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Examples:");
  }, 60_000);
});
