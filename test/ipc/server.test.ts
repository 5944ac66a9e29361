import { afterEach, describe, expect, it } from "vitest";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { spawn, type ChildProcess } from "node:child_process";
import { createConnection, type Socket } from "node:net";
import { join } from "node:path";
import { IpcClient, IpcClientError } from "../../ipc/client.js";
import { runSupervisorServer, type RunningServer, type ServeOptions } from "../../cli/serve/supervisor-server.js";
import { startIpcServer, type IpcBackend, type IpcServer } from "../../ipc/server.js";
import { LineSplitter, withItemsWire, withWire } from "../../shared/jsonl.js";
import { FAST, FIXTURE, Recorder, TestEnv, alive } from "../supervisor/harness.js";

const env = new TestEnv();
const servers: { close(): Promise<void> }[] = [];
const sockets: Socket[] = [];
const clients: IpcClient[] = [];
const procs: ChildProcess[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  await Promise.allSettled(servers.splice(0).map((s) => s.close()));
  await env.cleanup();
});

/** A backend that echoes requests, for testing the socket layer alone. */
const echoBackend: IpcBackend = {
  handle: async (request) => {
    if (request.type === "status" && request.agent === "boom")
      throw Object.assign(new Error('agent "boom" is not running'), { code: "not_running" });
    return { echoed: request.type };
  },
  subscribe: (_request, sink) => {
    void sink.write({ type: "event", agent: "a", seq: 1, event: { type: "agent_status" } });
    return { data: { agents: null }, close: () => {} };
  },
  shutdown: async () => ({}),
};

async function echoServer(): Promise<{ server: IpcServer; home: string }> {
  const home = env.home();
  const server = await startIpcServer({ home, backend: echoBackend, maxLineBytes: 1024 });
  servers.push(server);
  return { server, home };
}

/** A raw connection that reads whole lines, to send what a real client never would. */
async function raw(path: string): Promise<{ send(text: string): void; next(): Promise<any> }> {
  const socket = createConnection(path);
  sockets.push(socket);
  await new Promise<void>((r) => socket.once("connect", () => r()));
  const lines: any[] = [];
  const waiting: ((v: any) => void)[] = [];
  const splitter = new LineSplitter({
    onLine: (line) => {
      const value = JSON.parse(line);
      const w = waiting.shift();
      if (w) w(value);
      else lines.push(value);
    },
  });
  socket.on("data", (c: Buffer) => splitter.push(c));
  return {
    send: (text) => void socket.write(text),
    next: () => (lines.length > 0 ? Promise.resolve(lines.shift()) : new Promise((r) => waiting.push(r))),
  };
}

describe("ipc server", () => {
  it("sends an answer's attached JSON as its data instead of serialising the answer again", async () => {
    const home = env.home();
    const server = await startIpcServer({
      home,
      backend: { ...echoBackend, handle: async () => withWire([{ from: "object" }], '[{"from":"wire"}]') },
    });
    servers.push(server);
    const c = await raw(server.socketPath);
    c.send('{"id":"l1","type":"list"}\n');
    expect(await c.next()).toEqual({ id: "l1", ok: true, data: [{ from: "wire" }] });
    c.send('{"id":7,"type":"list"}\n');
    expect(await c.next()).toEqual({ id: 7, ok: true, data: [{ from: "wire" }] });
  });

  it("sends an answer's JSON attached as byte chunks, one line for the whole answer", async () => {
    const home = env.home();
    const items = withItemsWire([Object.freeze({ name: "é" }), Object.freeze({ name: "b" })]);
    const server = await startIpcServer({ home, backend: { ...echoBackend, handle: async () => items } });
    servers.push(server);
    const c = await raw(server.socketPath);
    c.send('{"id":"l2","type":"list"}\n');
    expect(await c.next()).toEqual({ id: "l2", ok: true, data: [{ name: "é" }, { name: "b" }] });
  });

  it("answers bad input with errors and keeps the connection usable", async () => {
    const { server } = await echoServer();
    const c = await raw(server.socketPath);
    c.send("{not json\n");
    expect(await c.next()).toMatchObject({ id: null, ok: false, error: { code: "bad_json" } });
    c.send("[1,2]\n");
    expect(await c.next()).toMatchObject({ id: null, ok: false, error: { code: "bad_request" } });
    c.send('{"type":"list"}\n');
    expect(await c.next()).toMatchObject({
      id: null,
      ok: false,
      error: { code: "bad_request", message: expect.stringMatching(/needs an "id"/) },
    });
    c.send('{"id":1,"type":"explode"}\n');
    expect(await c.next()).toMatchObject({
      id: 1,
      ok: false,
      error: { code: "unknown_type", message: expect.stringMatching(/expected one of: spawn, list/) },
    });
    c.send('{"id":2,"type":"status","agent":7}\n');
    expect(await c.next()).toMatchObject({
      id: 2,
      ok: false,
      error: { code: "invalid_request", message: expect.stringMatching(/\/agent/) },
    });
    c.send('{"id":"3","type":"status","agent":"boom"}\n');
    expect(await c.next()).toEqual({
      id: "3",
      ok: false,
      error: { code: "not_running", message: 'agent "boom" is not running' },
    });
    c.send(`{"id":4,"type":"list","pad":"${"x".repeat(2000)}"}\n`);
    expect(await c.next()).toMatchObject({ id: 4, ok: false, error: { code: "line_too_long" } });
    c.send('{"id":5,"type":"list"}\r\n');
    expect(await c.next()).toEqual({ id: 5, ok: true, data: { echoed: "list" } });
  });

  it("sends the subscribe response before any streamed event", async () => {
    const { server } = await echoServer();
    const c = await raw(server.socketPath);
    c.send('{"id":1,"type":"subscribe"}\n');
    expect(await c.next()).toMatchObject({ id: 1, ok: true });
    expect(await c.next()).toMatchObject({ type: "event", agent: "a", seq: 1 });
  });

  it("creates the home 0700 and the socket 0600", async () => {
    const parent = env.home();
    const home = join(parent, "nested");
    const server = await startIpcServer({ home, backend: echoBackend });
    servers.push(server);
    expect(statSync(home).mode & 0o777).toBe(0o700);
    expect(statSync(server.socketPath).mode & 0o777).toBe(0o600);
    await server.close();
    expect(existsSync(server.socketPath)).toBe(false);
  });

  it("refuses a home that others can enter", async () => {
    const home = join(env.home(), "open");
    mkdirSync(home);
    chmodSync(home, 0o755);
    await expect(startIpcServer({ home, backend: echoBackend })).rejects.toThrow(
      /open to other users \(mode 755\); run chmod 700/,
    );
  });

  it("removes a stale socket but refuses to start next to a live supervisor", async () => {
    const home = env.home();
    const path = join(home, "orch.sock");
    // A socket file nobody listens on any more: what a supervisor killed with SIGKILL leaves.
    const holder = spawn(process.execPath, [
      "-e",
      `require("net").createServer().listen(${JSON.stringify(path)}, () => console.log("ready"))`,
    ]);
    procs.push(holder);
    await new Promise((r) => holder.stdout.once("data", r));
    const gone = new Promise((r) => holder.once("exit", r));
    holder.kill("SIGKILL");
    await gone;
    expect(existsSync(path)).toBe(true);
    const first = await startIpcServer({ home, backend: echoBackend });
    servers.push(first);
    await expect(startIpcServer({ home, backend: echoBackend })).rejects.toThrow(
      /already running on .*orch\.sock; stop it with pi-orch shutdown/,
    );
  });
});

describe("ipc client", () => {
  it("says clearly when no supervisor runs", async () => {
    const home = env.home();
    const err = await IpcClient.connect({ home }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IpcClientError);
    expect(err).toMatchObject({
      code: "no_supervisor",
      message: expect.stringMatching(/no pi-orch supervisor is running .*start one with pi-orch serve/),
    });
  });
});

describe("runSupervisorServer", () => {
  async function serve(home = env.home(), extra: Partial<ServeOptions> = {}): Promise<RunningServer> {
    const running = await runSupervisorServer({
      home,
      handleSignals: false,
      defaultWorkerCommand: [process.execPath, FIXTURE],
      timings: FAST,
      ...extra,
    });
    env.track(running.supervisor);
    servers.push(running);
    return running;
  }

  it("spawns, lists, streams, forwards rpc, stops and shuts down over the socket", async () => {
    const running = await serve();
    const client = await IpcClient.connect({ socketPath: running.socketPath });
    clients.push(client);
    const rec = new Recorder();
    await client.subscribe({}, (m) => rec.sink.write(m as never));
    const spawned = await client.spawn({ name: "one" });
    expect(spawned).toMatchObject({ name: "one", status: "idle" });
    const list = await client.list();
    expect(list.map((a) => a.name)).toEqual(["one"]);
    const response = await client.rpc("one", { type: "prompt", message: "hi" });
    expect(response).toMatchObject({ type: "response", command: "prompt", success: true });
    await rec.status("one", "idle", (e) => e.previous === "busy");
    // Only the envelope is checked on the way: the worker answers a command it does not know.
    await expect(client.forward("one", { type: "bogus" })).resolves.toMatchObject({ command: "bogus", success: true });
    // A known command's data is checked where it enters the client: the fixture answers
    // get_available_models without the models, and rpc() says so, naming the agent and command.
    const state = await client.rpc("one", { type: "get_state" });
    expect(state.success && state.data.sessionFile).toMatch(/\.jsonl$/);
    await expect(client.rpc("one", { type: "get_available_models" })).rejects.toMatchObject({
      code: "malformed_answer",
      message: expect.stringContaining('agent "one" answered get_available_models with data pi-orch cannot read (/: '),
    });
    await expect(client.request("rpc", { agent: "one", command: { kind: "bogus" } as never })).rejects.toMatchObject({
      code: "invalid_request",
    });
    await expect(client.status("nobody")).rejects.toMatchObject({ code: "not_found" });
    // A late subscriber replays from a sequence number.
    const late = await IpcClient.connect({ socketPath: running.socketPath });
    clients.push(late);
    const replay = new Recorder();
    await late.subscribe({ agents: ["one"], since: 0 }, (m) => replay.sink.write(m as never));
    await replay.waitFor((m) => m.type === "event" && m.event.type === "agent_end");
    expect(replay.messages[0]).toMatchObject({ type: "event", agent: "one", seq: 1 });
    await expect(client.stop("one")).resolves.toMatchObject({ status: "stopped" });
    expect(alive(spawned.pid!)).toBe(false);
    await client.shutdown();
    await running.closed;
    expect(existsSync(running.socketPath)).toBe(false);
  });

  it("stops once its socket file is removed and no agent runs: nothing could reach it again", async () => {
    const said: string[] = [];
    const running = await serve(env.home(), { socketCheckMs: 50, onWarning: (m) => said.push(m) });
    rmSync(running.socketPath);
    await running.closed;
    expect(said).toEqual([
      `${running.socketPath} was removed and no agent runs, so no command can reach this supervisor; it stops`,
    ]);
  });

  it("with its socket removed, keeps its running agents, says so once, and stops after they end", async () => {
    const said: string[] = [];
    const running = await serve(env.home(), { socketCheckMs: 50, onWarning: (m) => said.push(m) });
    const one = await running.supervisor.spawn({ name: "one" });
    rmSync(running.socketPath);
    const deadline = Date.now() + 10_000;
    while (said.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(said).toEqual([expect.stringContaining("was removed: no command can reach this supervisor")]);
    expect(said[0]).toContain("(one)");
    expect(alive(one.pid!)).toBe(true);
    let closed = false;
    void running.closed.then(() => (closed = true));
    await running.supervisor.stop("one");
    await running.closed;
    expect(closed).toBe(true);
    expect(said).toHaveLength(2);
  });

  it("streams an event only once its line is in the agent's events file (write-ahead)", async () => {
    const home = env.home();
    const running = await serve(home);
    const client = await IpcClient.connect({ socketPath: running.socketPath });
    clients.push(client);
    const rec = new Recorder();
    const notOnDisk: number[] = [];
    const file = join(home, "logs", "one.events.jsonl");
    await client.subscribe({}, (m) => {
      if (m.type === "event" && !(existsSync(file) && readFileSync(file, "utf8").includes(`{"seq":${m.seq},`)))
        notOnDisk.push(m.seq);
      rec.sink.write(m as never);
    });
    await client.spawn({ name: "one" });
    await client.rpc("one", { type: "prompt", message: "hi" });
    await rec.status("one", "idle", (e) => e.previous === "busy");
    expect(rec.messages.filter((m) => m.type === "event").length).toBeGreaterThan(5);
    expect(notOnDisk).toEqual([]);
  });

  it("stops every agent on close and records them for resume", async () => {
    const home = env.home();
    const running = await serve(home);
    const info = await running.supervisor.spawn({ name: "keep" });
    await running.close();
    expect(alive(info.pid!)).toBe(false);
    const again = await serve(home);
    expect(again.supervisor.status("keep")).toMatchObject({ status: "stopped", statusReason: "supervisor exited" });
    await again.close();
  });
});
