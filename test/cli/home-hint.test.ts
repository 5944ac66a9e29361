/**
 * Hints that name a pi-orch command repeat the `--home` the user gave, so following one
 * reaches the same supervisor rather than the default home's; a home from PI_ORCH_HOME
 * needs nothing, the shell reading the hint has it too.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { reconnectHint } from "../../cli/commands/tui.js";
import { IpcClient, IpcClientError } from "../../ipc/client.js";
import { socketPath } from "../../ipc/server.js";
import { piOrchCommand } from "../../shared/cli-hint.js";
import { BIN } from "../support/orch-cli.js";

const dirs: string[] = [];
const servers: Server[] = [];
const clients: IpcClient[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function home(): string {
  const dir = mkdtempSync(join(tmpdir(), "po-hint-"));
  dirs.push(dir);
  return dir;
}

describe("piOrchCommand", () => {
  it.each([
    { args: "serve", flag: undefined, want: "pi-orch serve" },
    { args: "list", flag: "/tmp/h", want: "pi-orch --home /tmp/h list" },
    { args: "serve", flag: "/tmp/my home", want: "pi-orch --home '/tmp/my home' serve" },
    { args: "list", flag: "/tmp/it's", want: "pi-orch --home '/tmp/it'\\''s' list" },
  ])("$want", ({ args, flag, want }) => {
    expect(piOrchCommand(args, flag)).toBe(want);
  });

  it.each([
    { flag: undefined, want: "pi-orch serve, or any pi-orch command, starts one" },
    { flag: "/tmp/h", want: "pi-orch --home /tmp/h serve, or any pi-orch command with that --home, starts one" },
  ])("the TUI's reconnect hint: $want", ({ flag, want }) => {
    expect(reconnectHint(flag)).toBe(want);
  });
});

describe("the IPC client's hints", () => {
  it("say --home when no supervisor runs there", async () => {
    const dir = home();
    const err = await IpcClient.connect({ home: dir, homeFlag: dir }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(IpcClientError);
    expect((err as IpcClientError).message).toMatch(new RegExp(`start one with pi-orch --home ${dir} serve$`));
  });

  it("say --home when a supervisor there does not answer", async () => {
    const dir = home();
    const server = createServer((socket) => sockets.push(socket)); // accepts, never answers
    servers.push(server);
    await new Promise<void>((r) => server.listen(socketPath(dir), r));
    for (const homeFlag of [dir, undefined]) {
      const client = await IpcClient.connect({ home: dir, homeFlag, requestTimeoutMs: 100 });
      clients.push(client);
      const err = await client.list().then(
        () => null,
        (e: IpcClientError) => e,
      );
      expect(err?.code).toBe("timeout");
      expect(err?.message).toContain(
        `check whether it answers at all (${homeFlag ? `pi-orch --home ${dir} list` : "pi-orch list"})`,
      );
    }
  });
});

describe("pi-orch --no-autostart with no supervisor", () => {
  const run = (args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args], {
        env: { ...process.env, NO_COLOR: "1", ...env },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
      child.on("exit", (code) => resolve({ code, stderr }));
    });

  it("names --home when the home came from the flag, and nothing more from PI_ORCH_HOME", async () => {
    const dir = home();
    const flagged = await run(["--home", dir, "--no-autostart", "list"], { PI_ORCH_HOME: "" });
    expect(flagged.code).toBe(1);
    expect(flagged.stderr).toContain(`start one with: pi-orch --home ${dir} serve (or drop --no-autostart)`);
    const fromEnv = await run(["--no-autostart", "list"], { PI_ORCH_HOME: dir });
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.stderr).toContain(
      `no supervisor is running for ${dir}; start one with: pi-orch serve (or drop --no-autostart)`,
    );
  });
});

describe("next-step hints of list and spawn under --home", () => {
  const out = (args: string[]): Promise<{ code: number | null; stdout: string }> =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args], {
        env: { ...process.env, NO_COLOR: "1", PI_ORCH_HOME: "", PI_ORCH_SANDBOX: "off" },
        stdio: ["ignore", "pipe", "ignore"],
      });
      let stdout = "";
      child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
      child.on("exit", (code) => resolve({ code, stdout }));
    });

  it("repeat the --home, so following them reaches this supervisor", async () => {
    const dir = home();
    try {
      const empty = await out(["--home", dir, "list"]);
      expect(empty.stdout).toContain(`no agents yet; start one with: pi-orch --home ${dir} spawn --prompt "..."`);
      const spawned = await out(["--home", dir, "spawn", "--name", "hinted", "--provider", "faux"]);
      expect(spawned.code).toBe(0);
      expect(spawned.stdout).toContain(`follow it: pi-orch --home ${dir} attach hinted`);
    } finally {
      await out(["--home", dir, "--no-autostart", "shutdown"]);
    }
  });
});
