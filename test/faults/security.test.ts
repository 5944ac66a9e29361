/**
 * Security: the socket's folder and file modes, refusing an open
 * home, refusing a client of another uid (by the modes, and by the socket's door), API keys kept out of everything a client
 * or a log reader sees, project extensions that wait for trust, and `rpc` that
 * forwards pi protocol commands only.
 */
import { afterEach, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { IpcClient, type IpcClientError } from "../../ipc/client.js";
import { runSupervisorServer, type RunningServer } from "../../cli/serve/supervisor-server.js";
import { startMockModelServer, type MockModelServer } from "../support/mock-model-server.js";
import { PI_BIN } from "../support/rpc-worker.js";
import { FIXTURE, TestEnv } from "../supervisor/harness.js";
import { rpcData } from "../support/rpc-data.js";
import { figures, killPids, until, waitAllGone } from "./support.js";

const run = promisify(execFile);
const env = new TestEnv();
const servers: RunningServer[] = [];
const clients: IpcClient[] = [];
const mockServers: MockModelServer[] = [];
const pids = new Set<number>();
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  await Promise.allSettled(servers.splice(0).map((s) => s.close()));
  await Promise.allSettled(mockServers.splice(0).map((s) => s.close()));
  killPids(pids);
  pids.clear();
  await env.cleanup();
});

const PI = [process.execPath, PI_BIN, "--mode", "rpc"];
const TIMINGS = { pingIntervalMs: 200, pingDeadlineMs: 3_000, stopGraceMs: 1_000, killGraceMs: 500 };

async function serve(
  home: string,
  extra: Record<string, unknown> = {},
): Promise<{ server: RunningServer; client: IpcClient }> {
  const server = await runSupervisorServer({
    home,
    handleSignals: false,
    defaultWorkerCommand: PI,
    timings: TIMINGS,
    ...extra,
  });
  servers.push(server);
  const client = await IpcClient.connect({ socketPath: server.socketPath });
  clients.push(client);
  return { server, client };
}

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8).padStart(3, "0");

/** Can `uid` 65534 (nobody) be used here without network? Then a real second-user client is tried. */
async function otherUidWorks(): Promise<boolean> {
  if (process.getuid?.() !== 0) return false;
  try {
    await run("setpriv", [
      "--reuid=65534",
      "--regid=65534",
      "--clear-groups",
      process.execPath,
      "-e",
      "process.exit(process.getuid() === 65534 ? 0 : 1)",
    ]);
    return true;
  } catch {
    return false;
  }
}

/** Try to connect to `socket` as uid 65534; resolves with the error code or "connected". */
async function connectAsNobody(socket: string, request?: object): Promise<string> {
  // With a request: print the answer's first line instead of "connected".
  const send = request
    ? `s.write(${JSON.stringify(`${JSON.stringify(request)}\n`)});s.on("data",(d)=>{console.log(String(d).split("\\n")[0]);s.destroy()})`
    : `console.log("connected");s.destroy()`;
  const script = `const s=require("net").createConnection(${JSON.stringify(socket)});s.on("connect",()=>{${send}});s.on("error",(e)=>console.log(e.code))`;
  const { stdout } = await run("setpriv", [
    "--reuid=65534",
    "--regid=65534",
    "--clear-groups",
    process.execPath,
    "-e",
    script,
  ]);
  return stdout.trim();
}

describe("fault: security", () => {
  it("keeps the socket folder 0700 and the socket 0600, refuses open or foreign homes and other users' clients", async () => {
    const home = join(env.home(), "fresh-home");
    const { server } = await serve(home);
    const homeMode = mode(home);
    const socketMode = mode(server.socketPath);
    expect(homeMode).toBe("700");
    expect(socketMode).toBe("600");

    const refusals: string[] = [];
    for (const open of [0o755, 0o770, 0o701]) {
      const h = env.home();
      chmodSync(h, open);
      await expect(runSupervisorServer({ home: h, handleSignals: false })).rejects.toMatchObject({
        code: "insecure_home",
      });
      refusals.push(open.toString(8));
      expect(existsSync(join(h, "orch.sock"))).toBe(false);
    }
    let foreignRefused = "skipped (not root)";
    if (process.getuid?.() === 0) {
      const h = env.home();
      chownSync(h, 65534, 65534);
      await expect(runSupervisorServer({ home: h, handleSignals: false })).rejects.toMatchObject({
        code: "insecure_home",
      });
      foreignRefused = "refused";
    }

    let otherUid = "modes only (no second uid)";
    if (await otherUidWorks()) {
      // The test's own temporary parent is opened for traversal, so that each lock below
      // is what stops uid 65534, not the parent.
      chmodSync(dirname(home), 0o711);
      // As it runs: the 0700 folder stops uid 65534 before the socket.
      const closedFolder = await connectAsNobody(server.socketPath);
      // Second lock: even with the folder opened for traversal, the 0600 socket refuses.
      chmodSync(home, 0o711);
      const closedSocket = await connectAsNobody(server.socketPath);
      // Third: with both opened (a chmod, a bind mount), the door asks the kernel who
      // connected and answers no request of another user.
      chmodSync(server.socketPath, 0o666);
      const door = await connectAsNobody(server.socketPath, { id: 1, type: "list" });
      chmodSync(server.socketPath, 0o600);
      chmodSync(home, 0o700);
      chmodSync(dirname(home), 0o700);
      expect(closedFolder).toBe("EACCES");
      expect(closedSocket).toBe("EACCES");
      const answer = JSON.parse(door) as { ok: boolean; error?: { code: string; message: string } };
      expect(answer).toMatchObject({ ok: false, error: { code: "agent_refused" } });
      expect(answer.error?.message).toContain("refusing a request from another user (uid 65534)");
      otherUid = `uid 65534: ${closedFolder} (folder), ${closedSocket} (socket), ${answer.error?.code} (door, both opened)`;
    }
    figures("security-socket-modes", {
      home_mode: homeMode,
      socket_mode: socketMode,
      open_homes_refused: refusals.join("+"),
      foreign_owner: foreignRefused,
      other_uid_client: JSON.stringify(otherUid),
    });
  });

  it("never shows API keys in list, status, events, logs or error messages", async () => {
    const SECRET_ENV = "sk-env-SECRET-7f3a9c";
    const SECRET_ARG = "sk-arg-SECRET-41be02";
    const SECRET_MODELS = "sk-models-SECRET-c0ffee";
    const mock = await startMockModelServer();
    mockServers.push(mock);
    const home = env.home();
    writeFileSync(
      join(home, "models.json"),
      JSON.stringify({
        providers: {
          mock: {
            baseUrl: `${mock.url}/v1`,
            api: "openai-completions",
            apiKey: SECRET_MODELS,
            models: [{ id: "mock-1" }],
          },
        },
      }),
    );
    const { server, client } = await serve(home);
    const seen: string[] = [];
    await client.subscribe({}, (m) => seen.push(JSON.stringify(m)));
    mock.enqueue(
      { text: "hello" },
      { error: { status: 401, message: "bad key" } },
      { error: { status: 500, message: "boom" } },
      { error: { status: 500 } },
      { error: { status: 500 } },
      { error: { status: 500 } },
    );
    const spawned = await client.spawn({
      name: "keys",
      provider: "mock",
      model: "mock-1",
      env: { OPENAI_API_KEY: SECRET_ENV, ANTHROPIC_API_KEY: SECRET_ENV },
      extraArgs: ["--retry-delay-ms", "10", "--api-key", SECRET_ARG],
    });
    pids.add(spawned.pid!);
    const outputs: string[] = [JSON.stringify(spawned)];
    await client.rpc("keys", { type: "prompt", message: "hi" });
    await until(() => seen.some((s) => s.includes('"agent_end"')), 10_000, "first run");
    await until(async () => (await client.status("keys")).status === "idle", 5_000, "idle");
    await client.rpc("keys", { type: "prompt", message: "again" });
    await until(() => seen.filter((s) => s.includes('"agent_end"')).length >= 2, 10_000, "second run (401)");
    await until(async () => (await client.status("keys")).status === "idle", 5_000, "idle");
    await client.rpc("keys", { type: "prompt", message: "third" });
    await until(() => seen.filter((s) => s.includes('"agent_end"')).length >= 3, 10_000, "third run (500s)");
    outputs.push(JSON.stringify(await client.list()));
    outputs.push(JSON.stringify(await client.status("keys")));
    outputs.push(JSON.stringify(await client.rpc("keys", { type: "get_state" })));
    outputs.push(JSON.stringify(await client.rpc("keys", { type: "get_messages" })));
    // Error messages: a duplicate spawn, a bad command, a stopped agent.
    for (const attempt of [
      () => client.spawn({ name: "keys", env: { OPENAI_API_KEY: SECRET_ENV } }),
      () => client.rpc("keys", { type: "set_model", provider: 1 as unknown as string, modelId: "x" }),
      async () => {
        await client.stop("keys");
        return client.rpc("keys", { type: "get_state" });
      },
    ]) {
      try {
        outputs.push(JSON.stringify(await attempt()));
      } catch (err) {
        outputs.push((err as IpcClientError).message);
      }
    }
    outputs.push(JSON.stringify(await client.status("keys")));
    await server.supervisor.shutdown();
    const logsDir = join(home, "logs");
    const logs = readdirSync(logsDir).map((f) => readFileSync(join(logsDir, f), "utf8"));
    const places = { outputs, events: seen, logs };
    const leaks: string[] = [];
    for (const [where, texts] of Object.entries(places)) {
      for (const secret of [SECRET_ENV, SECRET_ARG, SECRET_MODELS]) {
        const n = texts.filter((t) => t.includes(secret) || t.includes(secret.slice(-8))).length;
        if (n > 0) leaks.push(`${secret} in ${n} ${where}`);
      }
    }
    expect(await waitAllGone(pids, 5_000)).toEqual([]);
    figures("security-api-keys", {
      outputs_checked: outputs.length,
      events_checked: seen.length,
      log_files_checked: logs.length,
      leaks: leaks.length,
    });
    expect(leaks).toEqual([]);
    // The key still reached the worker: the mock server saw it on the wire.
    expect(mock.requests.some((r) => String(r.headers.authorization).includes(SECRET_ARG))).toBe(true);
  });

  it("never runs a project's .pi/extensions/ until the project is trusted", async () => {
    const home = env.home();
    const project = env.home();
    const marker = join(project, "project-extension-ran.txt");
    mkdirSync(join(project, ".pi", "extensions"), { recursive: true });
    writeFileSync(
      join(project, ".pi", "extensions", "evil.ts"),
      `import { writeFileSync } from "node:fs";
       writeFileSync(${JSON.stringify(marker)}, "ran");
       export default (pi: any) => pi.registerCommand("from-project", { description: "project command", handler: () => {} });`,
    );
    const script = join(home, "ext.faux.json");
    writeFileSync(script, JSON.stringify([{ text: "one" }, { text: "two" }]));
    const { client } = await serve(home);
    const commands = async (name: string) =>
      rpcData<{ commands?: { name: string }[] }>(await client.rpc(name, { type: "get_commands" })).commands?.map(
        (c) => c.name,
      ) ?? [];

    await client.spawn({ name: "untrusted", cwd: project, provider: "faux", extraArgs: ["--faux-script", script] });
    await client.rpc("untrusted", { type: "prompt", message: "go" });
    await until(
      async () =>
        (await client.status("untrusted")).lastSeq > 5 && (await client.status("untrusted")).status === "idle",
      10_000,
      "a run",
    );
    await client.restart("untrusted");
    const untrustedCommands = await commands("untrusted");
    const ranUntrusted = existsSync(marker);
    await client.stop("untrusted");

    await client.spawn({
      name: "trusted",
      cwd: project,
      provider: "faux",
      extraArgs: ["--faux-script", script, "--trust"],
    });
    const trustedCommands = await commands("trusted");
    const ranTrusted = existsSync(marker);
    await client.stop("trusted");
    figures("security-project-extensions", { ran_before_trust: ranUntrusted, ran_after_trust: ranTrusted });
    expect(untrustedCommands).toEqual([]);
    expect(ranUntrusted).toBe(false);
    expect(trustedCommands).toEqual(["from-project"]);
    expect(ranTrusted).toBe(true);
  });

  it("rpc hands every command to the worker, which refuses what is not pi protocol, and a caller cannot hijack the supervisor's request ids", async () => {
    const home = env.home();
    const { client, server } = await serve(home, { defaultWorkerCommand: [process.execPath, FIXTURE] });
    const info = await client.spawn({ name: "fw", env: { FIXTURE_SESSION_DIR: home } });
    pids.add(info.pid!);
    // Our own worker checks every command against the protocol's schemas.
    const pi = await client.spawn({
      name: "pi",
      provider: "faux",
      workerCommand: [process.execPath, PI_BIN, "--mode", "rpc"],
    });
    pids.add(pi.pid!);
    const notRefused: string[] = [];
    const bad: { type: string; [key: string]: unknown }[] = [
      { type: "shell", command: "id" },
      { type: "exec" },
      { type: "__proto__" },
      { type: "constructor" },
      { type: "response", success: true },
      { type: "extension_ui_request" },
      { type: "prompt" },
      { type: "prompt", message: ["not", "a", "string"] },
      { type: "bash", command: 42 },
      { type: "set_model", provider: "x" },
      { type: "spawn", name: "x" },
    ];
    for (const command of bad) {
      const response = await client.forward("pi", command);
      if (response.success || response.command !== command.type)
        notRefused.push(`${JSON.stringify(command)} -> ${JSON.stringify(response)}`);
    }
    // The fixture acknowledges any command it receives: the supervisor forwards what it does not know.
    const unknown = await client.forward("fw", { type: "shell", command: "id" });
    // A caller id that looks like the supervisor's own is echoed back but never confused with a ping.
    const spoof = await client.rpc("fw", { type: "get_state", id: "orch-ping-1" });
    const stillFine = [await client.status("fw"), await client.status("pi")].map((a) => a.status);
    await server.supervisor.shutdown();
    const left = await waitAllGone(pids, 5_000);
    figures("security-rpc-worker-checks", {
      refused_by_worker: bad.length - notRefused.length,
      of: bad.length,
      spoofed_id_echoed: spoof.id === "orch-ping-1",
      processes_left: left.length,
    });
    expect(notRefused).toEqual([]);
    expect(unknown).toMatchObject({ command: "shell", success: true });
    expect(spoof).toMatchObject({ id: "orch-ping-1", success: true });
    expect(stillFine).toEqual(["idle", "idle"]);
    expect(left).toEqual([]);
  });
});
