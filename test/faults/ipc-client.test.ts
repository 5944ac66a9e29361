/**
 * The client against sockets it must not trust or that answer badly: a
 * socket of another user is refused before anything is sent, a symlink planted where a
 * log goes is not followed, a request too long for the server is answered with an error
 * instead of hanging, a malformed reply is a clear error, and every request times out.
 */
import { afterEach, describe, expect, it } from "vitest";
import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runSupervisorServer, type RunningServer } from "../../cli/serve/supervisor-server.js";
import { IpcClient, IpcClientError, rpcUnansweredMessage } from "../../ipc/client.js";
import { AgentEventLog } from "../../supervisor/event-log.js";
import { openLogNoFollow } from "../../shared/safe-open.js";
import { FIXTURE } from "../supervisor/harness.js";
import { figures, rawConnect, until, type RawConnection } from "./support.js";

const dirs: string[] = [];
const servers: Server[] = [];
const running: RunningServer[] = [];
const clients: IpcClient[] = [];
const conns: RawConnection[] = [];
afterEach(async () => {
  for (const c of conns.splice(0)) c.socket.destroy();
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  await Promise.allSettled(running.splice(0).map((r) => r.close()));
  await Promise.allSettled(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function home(): string {
  const dir = mkdtempSync(join(tmpdir(), "po-"));
  dirs.push(dir);
  return dir;
}

/** A fake supervisor on `home/orch.sock` that answers every line with `reply(line)` (nothing when null). */
async function fakeServer(
  dir: string,
  reply: (line: string) => string | null,
): Promise<{ lines: string[]; connections: () => number }> {
  const lines: string[] = [];
  let connections = 0;
  const server = createServer((socket: Socket) => {
    connections++;
    let buf = "";
    socket.on("error", () => {});
    socket.on("data", (c: Buffer) => {
      buf += c.toString();
      for (let nl = buf.indexOf("\n"); nl !== -1; nl = buf.indexOf("\n")) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        lines.push(line);
        const out = reply(line);
        if (out !== null) socket.write(`${out}\n`);
      }
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(join(dir, "orch.sock"), r));
  return { lines, connections: () => connections };
}

const idOf = (line: string) => (JSON.parse(line) as { id: string }).id;
const rejection = async (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e as IpcClientError,
  );

describe.skipIf(process.getuid?.() !== 0)("fault: a socket of another user", () => {
  it("is refused before anything is sent, with an error naming its owner", async () => {
    const dir = home();
    const fake = await fakeServer(dir, (line) => JSON.stringify({ id: idOf(line), ok: true, data: [] }));
    chownSync(join(dir, "orch.sock"), 65534, 65534);
    const socketErr = await rejection(IpcClient.connect({ home: dir }));
    chownSync(join(dir, "orch.sock"), 0, 0);
    chownSync(dir, 65534, 65534);
    const folderErr = await rejection(IpcClient.connect({ home: dir }));
    figures("ipc-foreign-socket", {
      refused: [socketErr, folderErr].filter((e) => e?.code === "insecure_socket").length,
      lines_sent: fake.lines.length,
      connections: fake.connections(),
    });
    expect(socketErr?.code).toBe("insecure_socket");
    expect(socketErr?.message).toMatch(/belongs to user nobody \(uid 65534\), not to you/);
    expect(folderErr?.code).toBe("insecure_socket");
    expect(folderErr?.message).toContain(`the folder ${dir} belongs to user nobody`);
    expect(fake.connections()).toBe(0);
    expect(fake.lines).toEqual([]);
  });
});

describe("fault: a symlink planted where a log goes", () => {
  it("is not followed by the supervisor log nor the agents' event logs", () => {
    const dir = home();
    const victim = join(dir, "victim.txt");
    writeFileSync(victim, "keep me\n");
    mkdirSync(join(dir, "logs"));
    symlinkSync(victim, join(dir, "logs", "supervisor.log"));
    symlinkSync(victim, join(dir, "logs", "a.events.jsonl"));
    expect(() => openLogNoFollow(join(dir, "logs", "supervisor.log"))).toThrow(
      expect.objectContaining({ code: "ELOOP" }),
    );
    const problems: (string | null)[] = [];
    const log = new AgentEventLog({ logsDir: join(dir, "logs"), name: "a", onProblem: (p) => problems.push(p) });
    log.append({ type: "x", secret: "not for the victim" });
    log.close();
    expect(readFileSync(victim, "utf8")).toBe("keep me\n");
  });
});

describe("fault: requests and replies the other side cannot handle", () => {
  it("a 2 MB prompt is answered with an error, and the connection keeps working", async () => {
    const dir = home();
    const server = await runSupervisorServer({
      home: dir,
      handleSignals: false,
      defaultWorkerCommand: [process.execPath, FIXTURE],
    });
    running.push(server);
    const client = await IpcClient.connect({ home: dir });
    clients.push(client);
    await client.spawn({ name: "a" });
    const started = performance.now();
    const err = await rejection(client.rpc("a", { type: "prompt", message: "p".repeat(2 * 1024 * 1024) }));
    const ms = performance.now() - started;
    const after = await client.list();
    figures("ipc-2mb-prompt", {
      answered_ms: Math.round(ms),
      code: err?.code ?? "none",
      later_request_ok: after.length === 1,
    });
    expect(err?.code).toBe("line_too_long");
    expect(err?.message).toMatch(/request ignored: line exceeds the 1048576-byte limit/);
    expect(after.map((a) => a.name)).toEqual(["a"]);
  });

  it("a 2 MB request without an id in its head is answered with an error and the connection ends", async () => {
    const dir = home();
    const server = await runSupervisorServer({
      home: dir,
      handleSignals: false,
      defaultWorkerCommand: [process.execPath, FIXTURE],
    });
    running.push(server);
    const conn = await rawConnect(server.socketPath);
    conns.push(conn);
    const started = performance.now();
    // The id comes last: the server cannot match its answer to this request.
    await conn.write(
      `{"type":"rpc","agent":"a","command":{"type":"prompt","message":"${"p".repeat(2 * 1024 * 1024)}"},"id":"late"}\n`,
    );
    await conn.waitLines(1, 10_000);
    const answeredMs = performance.now() - started;
    await until(() => conn.closed, 10_000, "the server ends the connection");
    const closedMs = performance.now() - started;
    const later = await IpcClient.connect({ home: dir });
    clients.push(later);
    const list = await later.list();
    figures("ipc-2mb-no-id", {
      answered_ms: Math.round(answeredMs),
      closed_ms: Math.round(closedMs),
      code: conn.lines[0]?.error?.code,
      server_up: Array.isArray(list),
    });
    expect(conn.lines).toEqual([
      {
        id: null,
        ok: false,
        error: {
          code: "line_too_long",
          message: expect.stringMatching(/request ignored: line exceeds the 1048576-byte limit/),
        },
      },
    ]);
    expect(list).toEqual([]);
  });

  it.each([
    {
      name: "data that does not match the request's schema",
      reply: (id: string) => JSON.stringify({ id, ok: true, data: null }),
      code: "malformed_reply",
      message: /answer to list does not match its schema/,
    },
    {
      name: "a line that is not JSON",
      reply: () => "<html>hello</html>",
      code: "malformed_reply",
      message: /not a JSON object: <html>/,
    },
    {
      name: "an envelope without ok",
      reply: (id: string) => JSON.stringify({ id, data: [] }),
      code: "malformed_reply",
      message: /malformed reply/,
    },
    {
      name: "an error without an id",
      reply: () => JSON.stringify({ id: null, ok: false, error: { code: "line_too_long", message: "too long" } }),
      code: "line_too_long",
      message: /too long/,
    },
    {
      name: "no answer at all",
      reply: () => null,
      code: "timeout",
      message: /did not answer the list request within 300 ms/,
    },
  ])("$name is a clear error, not a hang or a crash", async ({ reply, code, message }) => {
    const dir = home();
    await fakeServer(dir, (line) => reply(idOf(line)));
    const client = await IpcClient.connect({ home: dir, requestTimeoutMs: 300 });
    clients.push(client);
    const err = await rejection(client.list());
    expect(err).toBeInstanceOf(IpcClientError);
    expect(err?.code).toBe(code);
    expect(err?.message).toMatch(message);
  });

  it("an rpc past its wait asks whether the supervisor still serves: waits on while it answers, gives up when it is silent too", async () => {
    // A supervisor that answers `status` but holds the rpc (as it does while a dialog is open) ...
    const serving = home();
    const seen = await fakeServer(serving, (line) =>
      JSON.parse(line).type === "status"
        ? JSON.stringify({ id: idOf(line), ok: false, error: { code: "not_found", message: "no agent a" } })
        : null,
    );
    const client = await IpcClient.connect({ home: serving, requestTimeoutMs: 100 });
    clients.push(client);
    let settled = false;
    void client.rpc("a", { type: "prompt", message: "/ask" }).then(
      () => (settled = true),
      () => (settled = true),
    );
    // ... is asked again and again, and the rpc stays open meanwhile.
    await until(
      () => seen.lines.filter((l) => JSON.parse(l).type === "status").length >= 3,
      10_000,
      "three status probes",
    );
    expect(settled).toBe(false);
    // One that answers nothing at all: the rpc ends with a clear timeout.
    const silent = home();
    await fakeServer(silent, () => null);
    const quiet = await IpcClient.connect({ home: silent, requestTimeoutMs: 100 });
    clients.push(quiet);
    const err = await rejection(quiet.rpc("a", { type: "get_state" }));
    expect(err?.code).toBe("timeout");
    expect(err?.message).toMatch(
      /did not answer the rpc request for agent "a" in \d+ ms in all \(a wait of 100 ms; the status request after the last wait got no answer within 100 ms, so it is not serving\)/,
    );
    expect(err?.message).toContain(`(${join(silent, "orch.sock")}); check whether it answers at all (pi-orch list)`);
    expect(err?.message).toContain(
      `in ${join(silent, "logs", "supervisor.log")} when a pi-orch command started it): if it stays silent, kill that pid`,
    );
  });

  it("forty spawns waiting on one connection ask whether the supervisor serves once per wait, not forty times", async () => {
    // Holds every spawn (a fleet queued behind its start) and answers status, as a busy supervisor does.
    const dir = home();
    const seen = await fakeServer(dir, (line) =>
      JSON.parse(line).type === "status"
        ? JSON.stringify({ id: idOf(line), ok: false, error: { code: "not_found", message: "no agent ?" } })
        : null,
    );
    const client = await IpcClient.connect({ home: dir, answerDeadlineMs: 100, requestTimeoutMs: 60_000 });
    clients.push(client);
    const spawns = Array.from({ length: 40 }, (_, i) => client.spawn({ name: `q${i}` }));
    for (const s of spawns) s.catch(() => undefined);
    const probes = () => seen.lines.filter((l) => JSON.parse(l).type === "status").length;
    await until(() => probes() >= 3, 10_000, "three status probes");
    // Forty waits end together: each round of them shares one probe.
    const spawnsSent = seen.lines.filter((l) => JSON.parse(l).type === "spawn").length;
    expect(spawnsSent).toBe(40);
    expect(probes()).toBeLessThan(spawnsSent);
    expect(seen.lines.filter((l) => JSON.parse(l).type === "list")).toEqual([]);
  });

  it("an rpc that gives up after several waits says how many and how long in all, not only the last wait", async () => {
    // Answers the first two status probes, then nothing: three waits for the rpc, the third probe unanswered.
    const dir = home();
    let statuses = 0;
    await fakeServer(dir, (line) =>
      JSON.parse(line).type === "status" && ++statuses <= 2
        ? JSON.stringify({ id: idOf(line), ok: false, error: { code: "not_found", message: "no agent a" } })
        : null,
    );
    const client = await IpcClient.connect({ home: dir, requestTimeoutMs: 100 });
    clients.push(client);
    const err = await rejection(client.rpc("a", { type: "prompt", message: "/ask" }));
    expect(err?.code).toBe("timeout");
    expect(statuses).toBe(3);
    expect(err?.message).toMatch(
      /in all \(3 waits of 100 ms, each but the last followed by a status request it answered; the status request after the last wait got no answer within 100 ms, so it is not serving\)/,
    );
  });
});

describe("the rpc timeout message", () => {
  it.each([
    [
      1,
      100,
      100,
      210,
      'for agent "a" in 210 ms in all (a wait of 100 ms; the status request after the last wait got no answer within 100 ms',
    ],
    [
      3,
      65_000,
      30_000,
      225_400,
      'for agent "a" in 3.8 min in all (3 waits of 65 s, each but the last followed by a status request it answered; the status request after the last wait got no answer within 30 s',
    ],
    [2, 600_000, 30_000, 1_230_000, 'for agent "a" in 20.5 min in all (2 waits of 10 min, each but the last'],
    [1, 1_500, 1_500, 3_049, "in 3 s in all (a wait of 1.5 s;"],
  ])("%i waits of %i ms, probes of %i ms, %i ms in all", (waits, waitMs, probeMs, totalMs, part) => {
    expect(rpcUnansweredMessage("a", waits, waitMs, probeMs, totalMs)).toContain(part);
  });
});
