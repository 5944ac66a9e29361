/**
 * Secrets never in a worker's argv (issue 16): an `--api-key` given to `spawn` (in its
 * extra arguments or inside a custom worker command) is moved by the supervisor into the
 * environment, where `ps` and /proc/PID/cmdline of other users cannot read it, and the
 * worker still authenticates: the mock model server sees the key in the request header.
 * Tried with our `pi` and with upstream pi 0.73.1 as the custom worker command.
 */
import { afterEach, describe, expect, it } from "vitest";
import { readFileSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { IpcClient } from "../../ipc/client.js";
import { runSupervisorServer, type RunningServer } from "../../cli/serve/supervisor-server.js";
import { startMockModelServer, type MockModelServer } from "../support/mock-model-server.js";
import { PI_BIN } from "../support/rpc-worker.js";
import { TestEnv } from "../supervisor/harness.js";
import { figures, killPids, until } from "./support.js";

/** pi 0.73.1's CLI: it runs on this Node (1.6.0 needs Node 22), which the argv probe below wraps. */
const UPSTREAM_CLI = resolve(import.meta.dirname, "../upstream/node_modules/@mariozechner/pi-coding-agent/dist/cli.js");

const env = new TestEnv();
const servers: RunningServer[] = [];
const clients: IpcClient[] = [];
const mocks: MockModelServer[] = [];
const pids = new Set<number>();
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  await Promise.allSettled(servers.splice(0).map((s) => s.close()));
  await Promise.allSettled(mocks.splice(0).map((s) => s.close()));
  killPids(pids);
  pids.clear();
  await env.cleanup();
});

const TIMINGS = { pingIntervalMs: 200, pingDeadlineMs: 5_000, stopGraceMs: 1_000, killGraceMs: 500 };

/** What a worker's argv and environment show, read from /proc as `ps` does. */
function procView(pid: number): { cmdline: string; environ: string } {
  return {
    cmdline: readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" "),
    environ: readFileSync(`/proc/${pid}/environ`, "utf8"),
  };
}

describe("fault: secrets on the command line", () => {
  it.each([
    { impl: "ours" as const, key: "sk-argv-SECRET-ours-5d1e" },
    { impl: "upstream" as const, key: "sk-argv-SECRET-upstream-9a2c" },
  ])(
    "$impl: --api-key reaches the worker without its argv (ours: nor its environment)",
    async ({ impl, key }) => {
      const mock = await startMockModelServer();
      mocks.push(mock);
      const home = env.home();
      const agentDir = join(home, "upstream-agent");
      mkdirSync(agentDir, { recursive: true });
      // Ours: a models.json provider on the mock. Upstream: its built-in openai provider pointed at the mock.
      writeFileSync(
        join(home, "models.json"),
        JSON.stringify({
          providers: {
            mock: {
              baseUrl: `${mock.url}/v1`,
              api: "openai-completions",
              apiKey: "MOCK_KEY_UNSET",
              models: [{ id: "mock-1" }],
            },
          },
        }),
      );
      writeFileSync(
        join(agentDir, "models.json"),
        JSON.stringify({ providers: { openai: { baseUrl: `${mock.url}/v1` } } }),
      );
      const argvProbe = join(home, "argv-probe.mjs");
      const argvOut = join(home, "argv.json");
      writeFileSync(
        argvProbe,
        `import { writeFileSync } from "node:fs";\nimport { pathToFileURL } from "node:url";\nwriteFileSync(process.env.ARGV_OUT, JSON.stringify(process.argv));\nprocess.argv.splice(1, 1);\nawait import(pathToFileURL(process.argv[1]).href);\n`,
      );
      const server = await runSupervisorServer({
        home,
        handleSignals: false,
        defaultWorkerCommand: [process.execPath, PI_BIN, "--mode", "rpc"],
        timings: TIMINGS,
      });
      servers.push(server);
      const client = await IpcClient.connect({ socketPath: server.socketPath });
      clients.push(client);
      mock.enqueue({ text: "authenticated" });
      const spawned =
        impl === "ours"
          ? await client.spawn({
              name: "k",
              cwd: home,
              provider: "mock",
              model: "mock-1",
              extraArgs: ["--no-session", "--api-key", key],
            })
          : await client.spawn({
              name: "k",
              cwd: home,
              // Through a wrapper that saves the argv it was given: upstream pi sets its process
              // title, which overwrites /proc/PID/cmdline, so that alone would show nothing.
              workerCommand: [
                process.execPath,
                argvProbe,
                UPSTREAM_CLI,
                "--mode",
                "rpc",
                "--no-session",
                "--provider",
                "openai",
                "--model",
                "gpt-4o-mini",
                `--api-key=${key}`,
              ],
              env: { PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", ARGV_OUT: argvOut },
            });
      pids.add(spawned.pid!);
      const view = procView(spawned.pid!);
      const seen: string[] = [];
      await client.subscribe({}, (m) => seen.push(JSON.stringify(m)));
      const ack = await client.rpc("k", { type: "prompt", message: "hi" });
      expect(ack.success).toBe(true);
      await until(() => seen.some((s) => s.includes('"agent_end"')), 20_000, "the run ended");
      const auth = mock.requests.map((r) => String(r.headers.authorization ?? ""));
      const reply = await client.rpc("k", { type: "get_messages" });
      figures(`argv-secrets-${impl}`, {
        key_in_cmdline: view.cmdline.includes(key),
        key_in_environ: view.environ.includes(key),
        requests: mock.requests.length,
        header_has_key: auth.some((a) => a === `Bearer ${key}`),
      });
      // Ours keeps its argv in cmdline; for upstream, the argv its wrapper was started with.
      const argv = impl === "ours" ? view.cmdline : (JSON.parse(readFileSync(argvOut, "utf8")) as string[]).join(" ");
      expect(argv).toContain("--mode rpc");
      expect(argv).not.toContain(key);
      expect(argv).not.toContain("--api-key");
      // Ours takes it on the supervisor's private pipe (fd 3, read once and closed): not in its
      // environ either. A custom command (upstream) reads keys from its environment, so it is there.
      if (impl === "ours") {
        expect(view.environ).not.toContain(key);
        expect(view.environ).not.toContain("PI_API_KEY=");
      } else expect(view.environ).toContain(`OPENAI_API_KEY=${key}`);
      expect(auth).toEqual([`Bearer ${key}`]);
      // agents.json records the command line without the key; keys.json (0600) keeps it.
      const registry = readFileSync(join(home, "agents.json"), "utf8");
      expect(registry).not.toContain(key);
      expect(registry).not.toContain("--api-key");
      expect(readFileSync(join(home, "keys.json"), "utf8")).toContain(key);
      expect(statSync(join(home, "keys.json")).mode & 0o777).toBe(0o600);
      expect(JSON.stringify(reply)).toContain("authenticated");
    },
    60_000,
  );

  it("refuses a key in a custom command whose provider it cannot tell, instead of putting it in argv", async () => {
    const home = env.home();
    const server = await runSupervisorServer({ home, handleSignals: false, timings: TIMINGS });
    servers.push(server);
    const client = await IpcClient.connect({ socketPath: server.socketPath });
    clients.push(client);
    const err = await client
      .spawn({ name: "k", cwd: home, workerCommand: ["pi", "--mode", "rpc", "--api-key", "sk-x"] })
      .catch((e: Error & { code?: string }) => e);
    expect(err).toMatchObject({
      code: "invalid",
      message: expect.stringMatching(/names no provider.*environment pi-orch serve runs with/),
    });
    expect(await client.list()).toEqual([]);
  });
});
