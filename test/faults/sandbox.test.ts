/**
 * Fault: an agent that tries to reach past its box, under `--sandbox on|strict`
 * (bubblewrap around the whole worker). Real `pi-orch serve`, real workers, the faux
 * model running the commands: its bash tries to command the fleet with the guard variable
 * removed, to read the supervisor's files, to write outside its project, to escape
 * teardown seven ways (`setsid`, `setsid -f`, `setpgid`, `env -i setsid`, ...), and under
 * `strict` to open a TCP connection. The same escapes unboxed (`--sandbox off`), where the
 * command reaper holds them. Figures in FAULTS.md.
 */
import { createServer, type Server } from "node:net";
import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readlinkSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { pidsWithEnv, readProcStat, TOOL_TAG_VAR } from "../../shared/proc.js";
import { sandboxSupport } from "../../shared/sandbox.js";
import { startMockModelServer } from "../support/mock-model-server.js";
import { BIN, type Json, World } from "../support/orch-cli.js";
import { PI_BIN } from "../support/rpc-worker.js";
import { NODE22 } from "../support/upstream-pi16.js";
import { figures, killPids, until, waitAllGone } from "./support.js";

const support = sandboxSupport();
let world: World | undefined;
let server: Server | undefined;
const made: string[] = [];
afterEach(async () => {
  // The escaped sleeps no tag finds (`env -i`), also when a test failed before its own cleanup.
  killPids(sleepsOf("43"));
  for (const file of made.splice(0)) rmSync(file, { force: true, recursive: true });
  await world?.cleanup();
  world = undefined;
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
});

/** The tool results of an agent's runs, from its event log, one string each. */
function toolOutputs(events: Json[]): string[] {
  return events
    .filter((e) => e.event?.type === "tool_execution_end")
    .map((e) => (e.event.result?.content ?? []).map((c: Json) => c.text ?? "").join(""));
}

/** The refusal and the exit status, in either order (stdout and stderr are two pipes). */
const READ_ONLY_AND_EXIT_1 = /Read-only file system[\s\S]*exit=1|exit=1[\s\S]*Read-only file system/;

/** Run `command` in the agent's bash through the faux model and return what the tool printed. */
async function run(w: World, agent: string, command: string): Promise<string> {
  const before = toolOutputs(w.events(agent)).length;
  await w.ok(["prompt", agent, `run \`${command}\``, "--wait"]);
  const outputs = toolOutputs(w.events(agent));
  expect(outputs.length, `the tool ran: ${command}`).toBe(before + 1);
  return outputs.at(-1)!;
}

/** Running `sleep` processes whose argument starts with `marker` (the escaped sleeps; any environment, `env -i` too). */
function sleepsOf(marker: string): number[] {
  return readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .filter((pid) => {
      try {
        const [program, arg] = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        return program === "sleep" && arg?.startsWith(marker) === true;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** The seven escaped sleeps of `marker`, once all have started (`setsid` forks before it execs). */
async function allSeven(marker: string): Promise<number[]> {
  return until(
    () => {
      const pids = sleepsOf(marker);
      return pids.length >= 7 && pids;
    },
    10_000,
    `7 sleeps ${marker}x`,
  );
}

/**
 * Seven ways a command leaves its shell's process group or outlives it; each sleep says
 * `<base><n>`. The last also clears its environment, so no tag finds it: only the sandbox.
 */
function escapes(base: number): string {
  const s = (n: number) => `sleep ${base}${n}`;
  return [
    `${s(1)} >/dev/null 2>&1 &`,
    `nohup ${s(2)} >/dev/null 2>&1 &`,
    `(${s(3)} >/dev/null 2>&1 &);`,
    `setsid ${s(4)} >/dev/null 2>&1 &`,
    `setsid -f ${s(5)} >/dev/null 2>&1;`,
    `perl -e 'setpgrp(0,0); exec "sleep", "${base}6"' >/dev/null 2>&1 &`,
    `env -i setsid ${s(7)} >/dev/null 2>&1 &`,
    "echo started",
  ].join(" ");
}

describe.skipIf(!support.ok)("fault: an agent in the sandbox reaches past its box", () => {
  it("its bash cannot see the supervisor's files, command the fleet, or write outside its project", async () => {
    world = new World();
    const w = world;
    await w.serve();
    const home = w.home.path;
    writeFileSync(join(home, "models.json"), `{"providers":{}}\n`);
    await w.ok(["spawn", "--name", "victim", "--provider", "faux", "--sandbox", "on"]);
    await w.ok(["spawn", "--name", "intruder", "--provider", "faux", "--sandbox", "on"]);
    // Not under /tmp, which `on` leaves writable.
    const outside = join(homedir(), `pi-orch-sandbox-outside-${process.pid}.txt`);
    made.push(outside);
    const cli = `env -u PI_ORCH_AGENT ${process.execPath} ${BIN} --home ${home}`;
    await w.ok(["prompt", "victim", "a secret plan", "--wait"]);
    const victimSession = (await w.json(["status", "victim"])).sessionFile as string;
    expect(readFileSync(victimSession, "utf8")).toContain("a secret plan");
    const seen = {
      home: await run(w, "intruder", `ls -A ${home}; echo end-of-list`),
      registry: await run(w, "intruder", `cat ${home}/agents.json 2>&1; echo cat-done`),
      list: await run(w, "intruder", `${cli} list 2>&1; echo exit=$?`),
      rpc: await run(w, "intruder", `${cli} rpc victim '{"type":"get_messages"}' 2>&1; echo exit=$?`),
      stop: await run(w, "intruder", `${cli} stop victim 2>&1; echo exit=$?`),
      outside: await run(w, "intruder", `echo x > ${outside} 2>&1; echo exit=$?`),
      etc: await run(w, "intruder", "touch /etc/pi-orch-sandbox-test 2>&1; echo exit=$?"),
      project: await run(w, "intruder", "echo kept > made-in-project.txt && cat made-in-project.txt"),
      // Run by root, the box keeps no capability to take itself apart with.
      unmount: await run(w, "intruder", `umount ${home} 2>&1; ls -AR ${home}; echo end-of-list`),
      // The victim's conversation, by the path its status gives.
      victimSession: await run(w, "intruder", `cat ${victimSession} 2>&1; echo cat-done`),
      remount: await run(
        w,
        "intruder",
        "mount -o remount,rw / 2>&1; touch /etc/pi-orch-sandbox-test 2>&1; echo exit=$?",
      ),
    };
    // The home shows only what the worker reads (models.json here) and its own sessions.
    expect(seen.home).not.toMatch(/agents\.json|logs|\.sock/);
    expect(seen.home).toContain("models.json");
    expect(seen.registry).toContain("No such file");
    // (`logs/supervisor.log` there is the one the refused `list` above wrote into the box's own tmpfs.)
    expect(seen.unmount).toContain("must be superuser to unmount");
    expect(seen.unmount).not.toMatch(/agents\.json|\.sock|events/);
    // Only its own session folder shows: not the victim's, in the same project.
    expect(seen.unmount).not.toContain(basename(victimSession));
    expect(seen.victimSession).toContain("No such file");
    expect(seen.victimSession).not.toContain("a secret plan");
    expect(seen.unmount).toContain("end-of-list");
    expect(seen.remount).toMatch(READ_ONLY_AND_EXIT_1);
    for (const answer of [seen.list, seen.rpc, seen.stop]) {
      expect(answer).toMatch(/exit=[12]/);
      expect(answer).not.toContain("victim\t");
    }
    expect(seen.outside).toMatch(READ_ONLY_AND_EXIT_1);
    expect(seen.etc).toMatch(READ_ONLY_AND_EXIT_1);
    expect(existsSync(outside)).toBe(false);
    expect(seen.project).toContain("kept");
    expect(readFileSync(join(w.cwd.path, "made-in-project.txt"), "utf8")).toBe("kept\n");
    const victim: Json = await w.json(["status", "victim"]);
    expect(victim.status).toBe("idle");
    expect(victim.sandbox).toBe("on");
    figures("sandbox-reach", { fleet_requests: 3, answered: 0, supervisor_files_seen: 0, writes_outside: 0 });
  }, 120_000);

  it("every process it starts ends with it: 7 escape ways, after stop and after a SIGKILL of the supervisor", async () => {
    world = new World();
    const w = world;
    const serve = await w.serve();
    await w.ok(["spawn", "--name", "stopped", "--provider", "faux", "--sandbox", "on"]);
    await w.ok(["spawn", "--name", "orphaned", "--provider", "faux", "--sandbox", "on"]);
    const said = await run(w, "stopped", escapes(4310));
    expect(said).toContain("started");
    expect(await run(w, "orphaned", escapes(4320))).toContain("started");
    const before = { stopped: await allSeven("431"), orphaned: await allSeven("432") };
    expect(before.stopped).toHaveLength(7);
    expect(before.orphaned).toHaveLength(7);

    await w.ok(["stop", "stopped"]);
    const afterStop = await waitAllGone(before.stopped, 10_000);
    serve.kill("SIGKILL");
    const afterKill = await waitAllGone(before.orphaned, 10_000);
    figures("sandbox-escapes", {
      ways: 7,
      left_after_stop: afterStop.length,
      left_after_supervisor_sigkill: afterKill.length,
    });
    expect(afterStop).toEqual([]);
    expect(afterKill).toEqual([]);
  }, 120_000);

  it("--sandbox off under a serve whose default is on: the worker runs unboxed, not wrapped by the default", async () => {
    world = new World({ PI_ORCH_SANDBOX: "on" });
    const w = world;
    await w.serve();
    expect(await w.ok(["spawn", "--name", "plain", "--provider", "faux", "--sandbox", "off"])).toContain("no sandbox");
    expect(await w.ok(["spawn", "--name", "boxed", "--provider", "faux"])).toContain("sandbox on");
    expect((await w.json(["status", "boxed"])).sandbox).toBe("on");
    // README: list --json and status show each agent's sandbox, the unboxed one's too.
    expect((await w.json(["status", "plain"])).sandbox).toBe("off");
    const listed = await w.json<{ name: string; sandbox?: string }[]>(["list"]);
    expect(Object.fromEntries(listed.map((a) => [a.name, a.sandbox]))).toEqual({ plain: "off", boxed: "on" });
    expect(await w.ok(["status", "plain"])).toMatch(/^sandbox +off$/m);
    expect(await w.ok(["status", "boxed"])).toMatch(/^sandbox +on$/m);
    const said = await run(w, "plain", "echo mode=${PI_ORCH_SANDBOXED:-none} default=${PI_ORCH_SANDBOX:-none}");
    expect(said).toContain("mode=none default=off");
    const boxed = await run(w, "boxed", "echo mode=${PI_ORCH_SANDBOXED:-none}");
    expect(boxed).toContain("mode=on");
  }, 120_000);

  it("the model finds no provider key in any process's environ or cmdline it can see", async () => {
    const secret = `sk-sandbox-${process.pid}-secret`;
    world = new World({ OPENAI_API_KEY: secret });
    const w = world;
    const serve = await w.serve();
    await w.ok(["spawn", "--name", "boxed", "--provider", "faux", "--sandbox", "on"]);
    await w.ok(["spawn", "--name", "plain", "--provider", "faux", "--sandbox", "off"]);
    // Every process's environ and cmdline, one line per process that holds the key.
    // The key in two halves, so the hunting shell's own command line does not hold it.
    const half = secret.length >> 1;
    const hunt = `a=${secret.slice(0, half)}; b=${secret.slice(half)}; for p in /proc/[0-9]*; do cat $p/environ $p/cmdline 2>/dev/null | tr '\\0' '\\n' | grep -q "$a$b" && echo found-in-\${p#/proc/}; done; echo hunt-done`;
    const boxed = await run(w, "boxed", hunt);
    const plain = await run(w, "plain", hunt);
    const found = (out: string) => [...out.matchAll(/found-in-(\d+)/g)].map((m) => Number(m[1]));
    expect(boxed).toContain("hunt-done");
    expect(found(boxed)).toEqual([]);
    // Unboxed, the processes its user exported the key to hold it (the supervisor, the CLI
    // waiting on this prompt), but no process of an agent: the workers took theirs on the
    // private channel.
    const agentPids = new Set([
      ...pidsWithEnv(TOOL_TAG_VAR, `${(await w.json(["status", "plain"])).id}.1`),
      (await w.json(["status", "plain"])).pid,
    ]);
    expect(found(plain)).toContain(serve.pid);
    expect(found(plain).filter((pid) => agentPids.has(pid))).toEqual([]);
    figures("sandbox-keys", { boxed_found: found(boxed).length, unboxed_found_in_agent_processes: 0 });
  }, 120_000);

  it("the model finds no literal key of models.json or auth.json in the box; the keys still reach the provider", async () => {
    const mock = await startMockModelServer();
    try {
      const inModels = `sk-models-${process.pid}-literal`;
      const inAuth = `sk-auth-${process.pid}-literal`;
      const inOauth = `oauth-${process.pid}-token`;
      const inMcp = `mcp-${process.pid}-token`;
      world = new World();
      const w = world;
      const home = w.home.path;
      writeFileSync(
        join(home, "models.json"),
        JSON.stringify({
          providers: {
            keyed: { baseUrl: `${mock.url}/v1`, api: "openai-completions", apiKey: inModels, models: [{ id: "m" }] },
            authed: { baseUrl: mock.url, api: "anthropic-messages", models: [{ id: "m" }] },
          },
        }),
      );
      writeFileSync(
        join(home, "auth.json"),
        JSON.stringify({
          authed: { type: "api_key", key: inAuth },
          other: { type: "oauth", access: inOauth, refresh: inOauth, expires: 1 },
        }),
      );
      // An MCP server with a literal token in its env: the box shows mcp.json (the worker reads
      // it), with the token as a ${PI_ORCH_KEY_n} reference.
      writeFileSync(
        join(home, "mcp.json"),
        JSON.stringify({ mcpServers: { vault: { command: "/nonexistent/mcp-server", env: { TOKEN: inMcp } } } }),
      );
      await w.serve();
      await w.ok(["spawn", "--name", "hunter", "--provider", "faux", "--sandbox", "on"]);
      await w.ok(["spawn", "--name", "keyed", "--provider", "keyed", "--model", "m", "--sandbox", "on"]);
      await w.ok(["spawn", "--name", "authed", "--provider", "authed", "--model", "m", "--sandbox", "on"]);
      // Everything a command in the box can read: the key files, every file under the home,
      // its environment, every process's environ and cmdline, the key variables by name.
      const hunts = [
        `cat ${home}/models.json ${home}/auth.json ${home}/mcp.json; echo cat-done`,
        `grep -ra . ${home} 2>/dev/null | head -c 200000; echo grep-done`,
        "env; printenv PI_ORCH_KEY_1 PI_ORCH_KEY_2; echo env-done",
        "for p in /proc/[0-9]*; do cat $p/environ $p/cmdline 2>/dev/null | tr '\\0' '\\n'; done; echo proc-done",
      ];
      const said: string[] = [];
      for (const hunt of hunts) said.push(await run(w, "hunter", hunt));
      const secrets = [inModels, inAuth, inOauth, inMcp];
      const found = said.flatMap((out) => secrets.filter((k) => out.includes(k)));
      expect(said[0]).toContain('"apiKey": "PI_ORCH_KEY_1"');
      expect(said[0]).toContain('"key": "!printenv PI_ORCH_KEY_2"');
      expect(said[0]).toContain('"TOKEN": "${PI_ORCH_KEY_3}"');
      // The worker read it: its MCP client tried the server and says so (a notify).
      expect(
        w.events("hunter").some((e) => JSON.stringify(e).includes("vault") && JSON.stringify(e).includes("ENOENT")),
      ).toBe(true);
      expect(said.join("")).toContain("proc-done");
      expect(found).toEqual([]);
      // The workers still authenticate with them.
      mock.enqueue({ text: "hello keyed" }, { text: "hello authed" });
      await w.ok(["prompt", "keyed", "hi", "--wait"]);
      await w.ok(["prompt", "authed", "hi", "--wait"]);
      const headers = mock.requests.map((r) => JSON.stringify(r.headers));
      expect(headers.some((h) => h.includes(`Bearer ${inModels}`))).toBe(true);
      expect(headers.some((h) => h.includes(inAuth))).toBe(true);
      // Nor did a key reach the hunter's session file or the event logs.
      const logs = readdirSync(join(home, "logs"), { recursive: true })
        .map((f) => join(home, "logs", String(f)))
        .filter((f) => f.endsWith(".jsonl"));
      const session = (await w.json(["status", "hunter"])).sessionFile as string;
      const stored = [...logs, session].map((f) => readFileSync(f, "utf8")).join("");
      expect(secrets.filter((k) => stored.includes(k))).toEqual([]);
      figures("sandbox-key-files", {
        hunts: hunts.length,
        keys: secrets.length,
        found: found.length,
        in_session_or_logs: 0,
        reached_provider: 2,
      });
    } finally {
      await mock.close();
    }
  }, 120_000);

  it("strict cuts the network of its commands; on keeps it", async () => {
    server = createServer((socket) => socket.end("hello from the host\n"));
    await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    world = new World();
    const w = world;
    await w.serve();
    await w.ok(["spawn", "--name", "open", "--provider", "faux", "--sandbox", "on"]);
    await w.ok(["spawn", "--name", "closed", "--provider", "faux", "--sandbox", "strict"]);
    const connect = `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3; echo exit=$?`;
    const open = await run(w, "open", connect);
    const closed = await run(w, "closed", connect);
    const hostFile = join(tmpdir(), `pi-orch-host-${process.pid}.txt`);
    writeFileSync(hostFile, "host tmp\n");
    made.push(hostFile);
    const tmpOpen = await run(w, "open", `cat ${hostFile} 2>&1; echo tmp-exit=$?`);
    const tmp = await run(w, "closed", `cat ${hostFile} 2>&1; echo tmp-exit=$?`);
    expect(open).toContain("hello from the host");
    expect(closed).not.toContain("hello from the host");
    expect(closed).toMatch(/exit=1/);
    // strict's /tmp is its own: the test's folders in the host's /tmp are not there.
    expect(tmpOpen).toContain("host tmp");
    expect(tmp).toMatch(/No such file[\s\S]*tmp-exit=1/);
    figures("sandbox-strict-network", { on_connected: 1, strict_connected: 0 });
  }, 120_000);
});

describe("fault: an unboxed agent's commands escape teardown (--sandbox off)", () => {
  it("every process it starts ends with it: 7 escape ways, after stop, the worker's SIGKILL and the supervisor's", async () => {
    world = new World();
    const w = world;
    const serve = await w.serve();
    for (const name of ["stopped", "killed", "orphaned"])
      await w.ok(["spawn", "--name", name, "--provider", "faux", "--sandbox", "off"]);
    expect(await run(w, "stopped", escapes(4350))).toContain("started");
    expect(await run(w, "killed", escapes(4360))).toContain("started");
    expect(await run(w, "orphaned", escapes(4370))).toContain("started");
    const before = { stopped: await allSeven("435"), killed: await allSeven("436"), orphaned: await allSeven("437") };
    // The command's reaper adopted what left the shell (`env -i setsid` too), not PID 1.
    const parents = new Set(Object.values(before).flatMap((pids) => pids.map((pid) => readProcStat(pid)?.ppid)));
    const parentNames = [...parents].map((pid) => readFileSync(`/proc/${pid}/comm`, "utf8").trim());
    expect(parents.size).toBe(3);
    expect(new Set(parentNames)).toEqual(new Set(["pi-reaper"]));

    await w.ok(["stop", "stopped"]);
    const afterStop = await waitAllGone(before.stopped, 10_000);
    // The worker dies with no word: its commands' reapers end what they hold.
    process.kill((await w.json(["status", "killed"])).pid as number, "SIGKILL");
    const afterWorkerKill = await waitAllGone(before.killed, 10_000);
    serve.kill("SIGKILL");
    const afterKill = await waitAllGone(before.orphaned, 10_000);
    figures("unboxed-escapes", {
      ways: 7,
      left_after_stop: afterStop.length,
      left_after_worker_sigkill: afterWorkerKill.length,
      left_after_supervisor_sigkill: afterKill.length,
    });
    expect(afterStop).toEqual([]);
    expect(afterWorkerKill).toEqual([]);
    expect(afterKill).toEqual([]);
  }, 120_000);
});

describe("fault: a sub-agent's teardown", () => {
  it("a pi the agent starts ends its own leftovers at exit, not the agent's", async () => {
    world = new World();
    const w = world;
    await w.serve();
    await w.ok(["spawn", "--name", "parent", "--provider", "faux", "--sandbox", "off"]);
    // The sub-agent's model runs one command: a setsid job of its own.
    const script = join(w.cwd.path, "sub.faux.json");
    writeFileSync(
      script,
      JSON.stringify([
        { toolCalls: [{ name: "bash", arguments: { command: "setsid sleep 43602 >/dev/null 2>&1 &" } }] },
        { text: "done" },
      ]),
    );
    const sub = `${process.execPath} ${PI_BIN} -p --provider faux --no-session --faux-script ${script} go`;
    expect(await run(w, "parent", `sleep 43601 >/dev/null 2>&1 & ${sub} >/dev/null 2>&1; echo sub-done`)).toContain(
      "sub-done",
    );
    const own = await until(() => sleepsOf("43601").length === 1 && sleepsOf("43601"), 10_000, "the agent's job");
    // The sub-agent's setsid job went with it; the agent's own job is still there until its stop.
    expect(await waitAllGone(sleepsOf("43602"), 5_000)).toEqual([]);
    expect(sleepsOf("43601")).toEqual(own);
    await w.ok(["stop", "parent"]);
    expect(await waitAllGone(own, 10_000)).toEqual([]);
  }, 120_000);
});

describe.skipIf(!support.ok)("pi --sandbox on (one agent, no supervisor)", () => {
  it("is the same box: no write outside, and every escape ends when pi exits", async () => {
    const project = mkdtempSync(join(tmpdir(), "pi-orch-sbx-pi-"));
    made.push(project);
    const tag = `pi-sbx-${process.pid}-${Date.now()}`;
    const outside = join(homedir(), `pi-orch-sandbox-pi-outside-${process.pid}.txt`);
    made.push(outside);
    const pi = spawn(
      process.execPath,
      [PI_BIN, "--mode", "rpc", "--provider", "faux", "--no-session", "--sandbox", "on"],
      {
        cwd: project,
        env: { ...process.env, PI_ORCH_SANDBOX: "", PI_ORCH_TEST_TAG: tag },
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    try {
      let out = "";
      pi.stdout!.on("data", (c: Buffer) => (out += c.toString()));
      const answer = async (id: string, command: string): Promise<string> => {
        pi.stdin!.write(`${JSON.stringify({ id, type: "bash", command })}\n`);
        const line = await until(
          () => out.split("\n").find((l) => l.includes(`"id":"${id}"`) && l.includes('"response"')),
          20_000,
          id,
        );
        return JSON.stringify(JSON.parse(line).data);
      };
      expect(await answer("inside", "echo mode=$PI_ORCH_SANDBOXED")).toContain("mode=on");
      expect(await answer("outside", `echo x > ${outside}; echo exit=$?`)).toMatch(READ_ONLY_AND_EXIT_1);
      expect(await answer("escapes", escapes(4340))).toContain("started");
      const escaped = await allSeven("434");
      expect(escaped).toHaveLength(7);
      pi.stdin!.end();
      await new Promise((r) => (pi.exitCode === null ? pi.once("exit", r) : r(undefined)));
      const left = await waitAllGone(escaped, 10_000);
      figures("sandbox-pi", { ways: 7, left_after_exit: left.length, writes_outside: existsSync(outside) ? 1 : 0 });
      expect(left).toEqual([]);
      expect(existsSync(outside)).toBe(false);
    } finally {
      pi.kill("SIGKILL");
      killPids(sleepsOf("434"));
    }
  }, 60_000);
});

/** Start `pi --mode rpc` with `env` (PI_ORCH_SANDBOX unset: pi's own default), run one `bash` command, return its output and pi's stderr. */
async function piBash(
  env: NodeJS.ProcessEnv,
  command: string,
  args: string[] = [],
): Promise<{ out: string; stderr: string }> {
  const project = mkdtempSync(join(tmpdir(), "pi-orch-sbx-default-"));
  made.push(project);
  const { PI_ORCH_SANDBOX: _unset, ...rest } = env;
  const pi = spawn(process.execPath, [PI_BIN, "--mode", "rpc", "--provider", "faux", "--no-session", ...args], {
    cwd: project,
    env: rest,
    stdio: ["pipe", "pipe", "pipe"],
  });
  try {
    let out = "";
    let stderr = "";
    pi.stdout!.on("data", (c: Buffer) => (out += c.toString()));
    pi.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
    pi.stdin!.write(`${JSON.stringify({ id: "b", type: "bash", command })}\n`);
    const line = await until(
      () => out.split("\n").find((l) => l.includes('"id":"b"') && l.includes('"response"')),
      20_000,
      "the bash answer",
    );
    return { out: JSON.stringify(JSON.parse(line).data), stderr };
  } finally {
    pi.kill("SIGKILL");
  }
}

describe.skipIf(!support.ok)("pi's default sandbox", () => {
  it("pi with no --sandbox runs in the sandbox where bwrap works; --sandbox off runs without", async () => {
    const boxed = await piBash(process.env, "echo mode=${PI_ORCH_SANDBOXED:-none}");
    expect(boxed.out).toContain("mode=on");
    expect(boxed.stderr).not.toContain("running without a sandbox");
    const plain = await piBash(process.env, "echo mode=${PI_ORCH_SANDBOXED:-none}", ["--sandbox", "off"]);
    expect(plain.out).toContain("mode=none");
    expect(plain.stderr).not.toContain("running without a sandbox");
  }, 60_000);
});

describe.skipIf(!support.ok)("pi's write outside the box", () => {
  it("is refused with the --sandbox-write flag that would open its folder; with that flag it is written", async () => {
    const project = mkdtempSync(join(tmpdir(), "pi-orch-sbx-denied-"));
    // Outside /tmp, the project and the caches: read-only in the box.
    const outside = mkdtempSync("/var/tmp/pi-orch-sbx-outside-");
    made.push(project, outside);
    const { PI_ORCH_SANDBOX: _unset, ...env } = process.env;
    const write = (extra: string[]) =>
      spawnSync(
        process.execPath,
        [PI_BIN, "-p", "--provider", "faux", "--no-session", ...extra, `write ${outside}/n.txt with "hi"`],
        { cwd: project, env, encoding: "utf8", timeout: 30_000 },
      );
    const refused = write([]);
    expect(refused.stdout).toContain(`the sandbox (--sandbox on) keeps ${outside} read-only`);
    expect(refused.stdout).toContain(`--sandbox-write ${outside}`);
    expect(existsSync(join(outside, "n.txt"))).toBe(false);
    const allowed = write(["--sandbox-write", outside]);
    expect(allowed.stdout).toContain("Successfully wrote");
    expect(readFileSync(join(outside, "n.txt"), "utf8").trim()).toBe("hi");
  }, 60_000);
});

describe.skipIf(!support.ok)("the model's bash writing outside the box", () => {
  it("gets the shell's error and a note naming the sandbox and --sandbox-write", async () => {
    const project = mkdtempSync(join(tmpdir(), "pi-orch-sbx-bash-denied-"));
    const outside = mkdtempSync("/var/tmp/pi-orch-sbx-bash-outside-");
    made.push(project, outside);
    const { PI_ORCH_SANDBOX: _unset, ...env } = process.env;
    const run = (extra: string[]) =>
      spawnSync(
        process.execPath,
        [
          PI_BIN,
          "-p",
          "--provider",
          "faux",
          "--no-session",
          "--mode",
          "json",
          ...extra,
          `run \`touch ${outside}/n.txt\``,
        ],
        { cwd: project, env, encoding: "utf8", timeout: 30_000 },
      );
    const refused = run([]);
    expect(refused.stdout).toContain("Read-only file system");
    expect(refused.stdout).toContain("the sandbox (--sandbox on) keeps everything but the project");
    expect(refused.stdout).toContain("--sandbox-write DIR");
    expect(existsSync(join(outside, "n.txt"))).toBe(false);
    const allowed = run(["--sandbox-write", outside]);
    expect(allowed.stdout).not.toContain("Read-only file system");
    expect(existsSync(join(outside, "n.txt"))).toBe(true);
  }, 60_000);
});

describe.skipIf(!support.ok)("pi in the sandbox with --session-dir", () => {
  it("still reads the agent directory's models.json (a session folder beside it hid it)", async () => {
    const root = mkdtempSync(join(tmpdir(), "pi-orch-sbx-sessiondir-"));
    made.push(root);
    const home = join(root, "home");
    const project = join(root, "project");
    mkdirSync(home);
    mkdirSync(project);
    writeFileSync(
      join(home, "models.json"),
      JSON.stringify({
        providers: {
          mock: { baseUrl: "http://127.0.0.1:9/v1", api: "openai-completions", apiKey: "k", models: [{ id: "m" }] },
        },
      }),
    );
    const { PI_ORCH_SANDBOX: _unset, ...env } = process.env;
    for (const extra of [[], ["--home", home]]) {
      const r = spawnSync(
        process.execPath,
        [PI_BIN, "--mode", "rpc", "--session-dir", join(root, "sessions"), "--provider", "mock", ...extra],
        { cwd: project, env: { ...env, PI_ORCH_HOME: home }, input: '{"type":"get_state"}\n', encoding: "utf8" },
      );
      const answer = r.stdout.split("\n").find((l) => l.includes('"get_state"'));
      expect(answer, `${extra.join(" ")}\n${r.stderr}`).toBeDefined();
      expect(JSON.parse(answer!).data.model).toMatchObject({ provider: "mock", id: "m" });
      expect(JSON.parse(answer!).data.sessionFile).toContain(join(root, "sessions"));
    }
  }, 60_000);
});

/** Start `pi --sandbox on` on `node` with `args`; its stdout, its stderr, its exit. */
function startSandboxedPi(node: string, args: string[]) {
  const project = mkdtempSync(join(tmpdir(), "pi-orch-sbx-waiter-"));
  made.push(project);
  const { PI_ORCH_SANDBOX: _unset, ...env } = process.env;
  const pi = spawn(node, [PI_BIN, "--mode", "rpc", "--provider", "faux", "--no-session", "--sandbox", "on", ...args], {
    cwd: project,
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const io = { out: "", err: "" };
  pi.stdout!.on("data", (c: Buffer) => (io.out += c.toString()));
  pi.stderr!.on("data", (c: Buffer) => (io.err += c.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null }>((r) =>
    pi.once("exit", (code, signal) => r({ code, signal })),
  );
  return { pi, io, exited };
}

/** The pids below `pid`, all generations. */
function treeOf(pid: number): number[] {
  const kids: number[] = [];
  for (const entry of readdirSync("/proc").filter((e) => /^\d+$/.test(e))) {
    if (readProcStat(Number(entry))?.ppid === pid) kids.push(Number(entry));
  }
  return [...kids, ...kids.flatMap(treeOf)];
}

describe.skipIf(!support.ok)("what waits for a sandboxed pi (no supervisor)", () => {
  const nodes = [
    // Node 20 has no process.execve: the launcher's node waits, as it always did.
    { name: "Node 20: the launcher's node", node: process.execPath, waiter: /\/node$/ },
    // Node 22.15 and later: a perl waiter takes the launcher's place.
    { name: "Node 22: a perl waiter in node's place", node: NODE22, waiter: /\/perl[\d.]*$/ },
  ];
  for (const { name, node, waiter } of nodes) {
    it.skipIf(!existsSync(node))(
      `${name}: SIGTERM reaches pi, which ends cleanly; nothing is left`,
      async () => {
        const { pi, io, exited } = startSandboxedPi(node, []);
        try {
          pi.stdin!.write(`${JSON.stringify({ id: "s", type: "get_state" })}\n`);
          await until(() => io.out.includes('"id":"s"'), 20_000, "the get_state answer");
          expect(readlinkSync(`/proc/${pi.pid}/exe`)).toMatch(waiter);
          const tree = treeOf(pi.pid!);
          expect(tree.length, "bwrap, its init and pi").toBeGreaterThanOrEqual(3);
          pi.kill("SIGTERM");
          const end = await exited;
          // pi's own clean end (worker/modes/rpc.ts), not bubblewrap killed under it.
          expect(io.err).toContain("pi: shutting down (SIGTERM)");
          expect(end).toEqual({ code: 0, signal: null });
          expect(await waitAllGone(tree, 10_000)).toEqual([]);
        } finally {
          pi.kill("SIGKILL");
        }
      },
      60_000,
    );
  }

  it.skipIf(!existsSync(NODE22))(
    "Node 22: a perl that cannot be run leaves the node waiting, and pi runs",
    async () => {
      const bin = mkdtempSync(join(tmpdir(), "pi-orch-sbx-badperl-"));
      made.push(bin);
      // Found on PATH, refused by exec (no execute bit): the launcher's node waits as on Node 20.
      writeFileSync(join(bin, "perl"), "#!/bin/sh\n", { mode: 0o644 });
      const saved = process.env.PATH;
      process.env.PATH = `${bin}:${saved}`;
      let started: ReturnType<typeof startSandboxedPi>;
      try {
        started = startSandboxedPi(NODE22, []);
      } finally {
        process.env.PATH = saved;
      }
      const { pi, io, exited } = started;
      try {
        pi.stdin!.write(`${JSON.stringify({ id: "s", type: "get_state" })}\n`);
        await until(() => io.out.includes('"id":"s"'), 20_000, "the get_state answer");
        expect(readlinkSync(`/proc/${pi.pid}/exe`)).toBe(NODE22);
        pi.stdin!.end();
        expect(await exited).toEqual({ code: 0, signal: null });
      } finally {
        pi.kill("SIGKILL");
      }
    },
    60_000,
  );

  it.skipIf(!existsSync(NODE22))(
    "Node 22: the waiter ends with pi's exit code and its signal",
    async () => {
      // A usage error of the sandboxed pi: exit 2 through bwrap and the waiter.
      const bad = startSandboxedPi(NODE22, ["--no-such-flag"]);
      expect(await bad.exited).toEqual({ code: 2, signal: null });
      expect(bad.io.err).toContain("--no-such-flag");
      // pi killed inside the box: the waiter ends of bwrap's status, as the node launcher does.
      const killed = startSandboxedPi(NODE22, []);
      try {
        killed.pi.stdin!.write(`${JSON.stringify({ id: "s", type: "get_state" })}\n`);
        await until(() => killed.io.out.includes('"id":"s"'), 20_000, "the get_state answer");
        const tree = treeOf(killed.pi.pid!);
        const inner = tree.filter((pid) => readlinkSync(`/proc/${pid}/exe`) === NODE22);
        expect(inner).toHaveLength(1);
        process.kill(inner[0]!, "SIGKILL");
        const end = await killed.exited;
        expect(end.code === 137 || end.signal === "SIGKILL", JSON.stringify(end)).toBe(true);
        expect(await waitAllGone(tree, 10_000)).toEqual([]);
      } finally {
        killed.pi.kill("SIGKILL");
      }
    },
    60_000,
  );
});

describe("where bwrap is missing", () => {
  it("pi with no --sandbox runs unboxed and says why", async () => {
    const bin = mkdtempSync(join(tmpdir(), "pi-orch-nobwrap-pi-"));
    made.push(bin);
    for (const tool of ["sh", "bash", "echo", "env"]) symlinkSync(`/bin/${tool}`, join(bin, tool));
    const said = await piBash({ ...process.env, PATH: bin }, "echo mode=${PI_ORCH_SANDBOXED:-none}");
    expect(said.out).toContain("mode=none");
    expect(said.stderr).toContain("pi: running without a sandbox: bubblewrap (bwrap) is not installed");
    expect(said.stderr).toContain("--sandbox off");
    // Nor perl there: its commands run without the reaper, and pi names what escapes then.
    expect(said.stderr).toContain("pi: commands run without a reaper: perl is not installed");
    expect(said.stderr).toContain("env -i setsid");
  }, 60_000);

  it("spawn --sandbox on is refused with what to do; the default runs unboxed and says so once", async () => {
    // A PATH with node and the shell's basics but no bwrap.
    const bin = mkdtempSync(join(tmpdir(), "pi-orch-nobwrap-"));
    made.push(bin);
    for (const tool of ["sh", "bash", "ls", "cat", "env"]) symlinkSync(`/bin/${tool}`, join(bin, tool));
    symlinkSync(process.execPath, join(bin, "node"));
    world = new World({ PATH: bin, PI_ORCH_SANDBOX: "" });
    const serve = await world.serve();
    const refused = await world.cli(["spawn", "--name", "boxed", "--provider", "faux", "--sandbox", "strict"]);
    expect(refused.code, "a flag this machine cannot honour: a usage error, as --worktree outside a repository").toBe(
      2,
    );
    expect(refused.stderr).toContain("--sandbox strict cannot run: bubblewrap (bwrap) is not installed");
    expect(refused.stderr).toContain("apt install bubblewrap");
    expect(refused.stderr).toContain("--sandbox off");
    const spawned = await world.ok(["spawn", "--name", "plain", "--provider", "faux"]);
    expect(spawned).toContain("no sandbox");
    await world.ok(["spawn", "--name", "plain2", "--provider", "faux"]);
    const log = world.serveOutput.get(serve) ?? "";
    expect(log.match(/agents run without a sandbox: bubblewrap \(bwrap\) is not installed/g)).toHaveLength(1);
    expect(serve.exitCode).toBeNull();
  }, 60_000);
});
