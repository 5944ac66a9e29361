/**
 * pi's examples that build tools from the built-in factories with `operations` and
 * `spawnHook` (bash-spawn-hook.ts, ssh.ts), loaded unchanged, driven over RPC with the
 * mock model server (the real OpenAI SDK calls it), on our worker and on upstream pi
 * 0.73.1 with the same script: both must end the same way. ssh.ts runs against a real
 * sshd on 127.0.0.1 started by the test (skipped with the reason when sshd is missing).
 * Skipped when test/upstream is not installed (npm test's pretest installs it).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startMockModelServer, type MockModelServer } from "../support/mock-model-server.js";
import { RpcWorker, killAllWorkers, tempDir } from "../support/rpc-worker.js";
import { startOracle, upstreamInstalled as installed, type Implementation, type TempDir } from "../support/upstream-oracle.js";
import { SshServer, sshMissing } from "../support/sshd.js";

const noSsh = sshMissing();

type Line = Record<string, any>;

let server: MockModelServer;
let sshd: SshServer | undefined;
let dirs: TempDir[] = [];

beforeEach(async () => {
  server = await startMockModelServer();
});

afterEach(async () => {
  await killAllWorkers();
  await server.close();
  await sshd?.stop();
  sshd = undefined;
  for (const d of dirs.splice(0)) d.cleanup();
});

function dir(prefix: string): string {
  const d = tempDir(prefix);
  dirs.push(d);
  return d.path;
}

/** One implementation's worker in a fresh project on the mock model, with the examples loaded. */
function start(impl: Implementation, examples: string[], extra: { args?: string[]; env?: NodeJS.ProcessEnv } = {}): { w: RpcWorker; project: string; home: string } {
  return startOracle(impl, server, dirs, { examples, ...extra });
}

async function run(w: RpcWorker, message: string): Promise<Line> {
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message }, 30_000)).toMatchObject({ success: true });
  return w.event("agent_end", 30_000, from);
}

/** The text of each tool result of a run, in call order. */
const toolTexts = (end: Line): string[] =>
  end.messages.filter((m: Line) => m.role === "toolResult").map((m: Line) => m.content.map((c: Line) => c.text ?? "").join(""));

describe.skipIf(!installed)("built-in tool factories with pi's options: our worker and upstream pi end the same way", () => {
  it.each<Implementation>(["ours", "upstream"])("bash-spawn-hook on %s: the hook's command prefix and environment reach the shell", async (impl) => {
    // The hook prepends `source ~/.profile`: a HOME of the test's with a .profile that says it ran.
    const userHome = dir(`pi-ops-${impl}-user-`);
    writeFileSync(join(userHome, ".profile"), "export FROM_PROFILE=sourced\n");
    const { w } = start(impl, ["bash-spawn-hook"], { env: { HOME: userHome } });
    server.enqueue({ toolCalls: [{ id: "call_1", name: "bash", arguments: { command: 'echo "hook=$PI_SPAWN_HOOK profile=$FROM_PROFILE"' } }] }, { text: "done" });
    const end = await run(w, "show the environment");
    expect(toolTexts(end)).toEqual(["hook=1 profile=sourced\n"]);
    expect(end.messages.find((m: Line) => m.role === "toolResult").isError).toBe(false);
  });
});

describe.skipIf(!installed || noSsh !== null)(`ssh.ts over a real sshd${noSsh ? ` (skipped: ${noSsh})` : ""}`, () => {
  /**
   * ssh.ts runs `ssh REMOTE CMD`. A `ssh` first on the worker's PATH execs the real
   * client with the test's config (host alias, port, throw-away key), as a user's
   * ~/.ssh/config would, which ssh reads from the passwd home, not $HOME.
   */
  function sshOnPath(server: SshServer): { PATH: string } {
    const bin = dir("pi-ops-sshbin-");
    const config = join(bin, "config");
    writeFileSync(
      config,
      [
        "Host pi-remote",
        "  HostName 127.0.0.1",
        `  Port ${server.port}`,
        `  User ${userInfo().username}`,
        `  IdentityFile ${server.userKey}`,
        "  IdentitiesOnly yes",
        "  StrictHostKeyChecking no",
        "  UserKnownHostsFile /dev/null",
        "  BatchMode yes",
        "  LogLevel ERROR",
      ].join("\n") + "\n",
    );
    const real = (process.env.PATH ?? "").split(delimiter).map((d) => join(d, "ssh")).find((p) => existsSync(p))!;
    writeFileSync(join(bin, "ssh"), `#!/bin/sh\nexec ${real} -F ${config} "$@"\n`);
    chmodSync(join(bin, "ssh"), 0o755);
    return { PATH: `${bin}${delimiter}${process.env.PATH ?? ""}` };
  }

  it.each<Implementation>(["ours", "upstream"])("on %s: write, read, edit and bash run on the remote; the system prompt names the remote folder", async (impl) => {
    sshd = await SshServer.start();
    const remote = dir(`pi-ops-${impl}-remote-`);
    const { w, project } = start(impl, ["ssh"], { args: ["--ssh", `pi-remote:${remote}`], env: sshOnPath(sshd) });
    server.enqueue(
      { toolCalls: [{ id: "call_1", name: "write", arguments: { path: "notes/hello.txt", content: "hello from afar\n" } }] },
      { toolCalls: [{ id: "call_2", name: "edit", arguments: { path: "notes/hello.txt", edits: [{ oldText: "afar", newText: "the remote" }] } }] },
      { toolCalls: [{ id: "call_3", name: "read", arguments: { path: "notes/hello.txt" } }] },
      { toolCalls: [{ id: "call_4", name: "bash", arguments: { command: "pwd; ls notes" } }] },
      { text: "done" },
    );
    const end = await run(w, "work remotely");
    const [write, edit, read, bash] = toolTexts(end);
    expect(write).toContain("notes/hello.txt");
    // The tools' own wording differs (ours shows the diff); what they did must not.
    expect(edit).toContain("notes/hello.txt");
    expect(read.trimEnd()).toBe("hello from the remote");
    expect(bash).toBe(`${remote}\nhello.txt\n`);
    expect(end.messages.filter((m: Line) => m.role === "toolResult").map((m: Line) => m.isError)).toEqual([false, false, false, false]);
    // The files are on the remote side only.
    expect(readFileSync(join(remote, "notes/hello.txt"), "utf8")).toBe("hello from the remote\n");
    expect(existsSync(join(project, "notes"))).toBe(false);
    // before_agent_start replaced the working directory line of the system prompt.
    const system = (server.requests[0].body as Line).messages[0];
    expect(system.role).toBe("system");
    expect(system.content).toContain(`Current working directory: ${remote} (via SSH: pi-remote)`);
  });

  it("on ours: the RPC bash command (the TUI's !cmd) goes through the user_bash operations to the remote", async () => {
    // pi runs user_bash for the interactive `!cmd` only; our worker runs it for the RPC `bash` command, which the TUI's `!cmd` sends.
    sshd = await SshServer.start();
    const remote = dir("pi-ops-ours-remote-");
    writeFileSync(join(remote, "far.txt"), "x");
    mkdirSync(join(remote, "sub"));
    const { w } = start("ours", ["ssh"], { args: ["--ssh", `pi-remote:${remote}`], env: sshOnPath(sshd) });
    const r = await w.request({ type: "bash", command: "pwd; ls" }, 30_000);
    expect(r).toMatchObject({ success: true, data: { output: `${remote}\nfar.txt\nsub\n`, exitCode: 0, cancelled: false } });
  });
});

describe.skipIf(!installed)("tool executionMode: our worker and upstream pi order a batch the same way", () => {
  /** An extension with a parallel tool and, when asked, a sequential one. */
  function modeExtension(sequential: boolean): string {
    const file = join(dir("pi-ops-ext-"), "modes.ts");
    writeFileSync(
      file,
      [
        'import { Type } from "typebox";',
        "export default function (pi: any) {",
        '  const tool = (name: string, executionMode?: string) => pi.registerTool({',
        '    name, label: name, description: name, parameters: Type.Object({}),',
        "    ...(executionMode ? { executionMode } : {}),",
        '    async execute() { return { content: [{ type: "text", text: name }], details: {} }; },',
        "  });",
        '  tool("fast");',
        `  tool("careful", ${sequential ? '"sequential"' : "undefined"});`,
        "}",
      ].join("\n"),
    );
    return file;
  }

  const order = (w: RpcWorker, from: number): string[] =>
    w.received
      .slice(from)
      .filter((l) => l.type === "tool_execution_start" || l.type === "tool_execution_end" || (l.type === "message_end" && l.message.role === "toolResult"))
      .map((l) => `${l.type === "message_end" ? "result" : l.type.slice("tool_execution_".length)}:${l.toolName ?? l.message.toolName}`);

  it.each<[Implementation, boolean]>([
    ["ours", true],
    ["upstream", true],
    ["ours", false],
    ["upstream", false],
  ])("on %s (a sequential tool in the batch: %s)", async (impl, sequential) => {
    const { w } = start(impl, [], { args: ["-e", modeExtension(sequential)] });
    server.enqueue({ toolCalls: [{ id: "call_1", name: "fast", arguments: {} }, { id: "call_2", name: "careful", arguments: {} }] }, { text: "done" });
    const from = w.received.length;
    await run(w, "both");
    expect(order(w, from)).toEqual(
      sequential
        ? ["start:fast", "end:fast", "result:fast", "start:careful", "end:careful", "result:careful"]
        : ["start:fast", "start:careful", "end:fast", "end:careful", "result:fast", "result:careful"],
    );
  });
});

describe.skipIf(!installed)("tools built from the module's helpers: our worker and upstream pi give the same results", () => {
  /** Run `replies` with the examples on one implementation, with `setup` filling the project first; the run's tool results. */
  async function results(impl: Implementation, examples: string[], setup: (project: string) => void, replies: Parameters<MockModelServer["enqueue"]>): Promise<{ end: Line; home: string; project: string }> {
    server.requests.length = 0;
    const { w, home, project } = start(impl, examples);
    setup(project);
    server.enqueue(...replies);
    const end = await run(w, "go");
    return { end, home, project };
  }

  it("truncated-tool: rg's output cut by truncateHead with the same notice, the full output in the temp file", async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `needle line ${i + 1}`).join("\n") + "\n";
    const texts: string[] = [];
    for (const impl of ["ours", "upstream"] as const) {
      const { end } = await results(impl, ["truncated-tool"], (p) => writeFileSync(join(p, "hay.txt"), lines), [
        { toolCalls: [{ id: "call_1", name: "rg", arguments: { pattern: "needle" } }] },
        { text: "done" },
      ]);
      const result = end.messages.find((m: Line) => m.role === "toolResult");
      const full = result.details.fullOutputPath as string;
      dirs.push({ path: full, cleanup: () => rmSync(dirname(full), { recursive: true, force: true }) });
      const saved = readFileSync(full, "utf8").trimEnd().split("\n");
      expect(saved).toHaveLength(3000);
      expect(saved.at(-1)).toMatch(/hay\.txt:3000:needle line 3000$/);
        texts.push(toolTexts(end)[0].replace(full, "FULL"));
    }
    // The same lines are kept, with the same notice; both count the empty string after
    // the final newline as a line (3001 of 3001, 1332 omitted), as pi's truncateHead does.
    const [ours, upstream] = texts.map((t) => t.split("\n\n[Output truncated: "));
    expect(ours[0]).toBe(upstream[0]);
    expect(ours[0].split("\n")).toHaveLength(1669);
    expect(upstream[1]).toBe("showing 1669 of 3001 lines (50.0KB of 91.6KB). 1332 lines (41.6KB) omitted. Full output saved to: FULL]");
    expect(ours[1]).toBe(upstream[1]);
  });

  it("tool-override: the overriding read blocks .env, reads other files, and logs both under getAgentDir()", async () => {
    const texts: string[][] = [];
    for (const impl of ["ours", "upstream"] as const) {
      const { end, home } = await results(
        impl,
        ["tool-override"],
        (p) => {
          writeFileSync(join(p, ".env"), "SECRET=1\n");
          writeFileSync(join(p, "notes.txt"), "one\ntwo\n");
        },
        [{ toolCalls: [{ id: "call_1", name: "read", arguments: { path: ".env" } }, { id: "call_2", name: "read", arguments: { path: "notes.txt" } }] }, { text: "done" }],
      );
      texts.push(toolTexts(end));
      const log = readFileSync(join(home, "read-access.log"), "utf8");
      expect(log).toMatch(/BLOCKED: .*\/\.env \(matches blocked pattern\)/);
      expect(log).toMatch(/ALLOWED: .*\/notes\.txt/);
    }
    expect(texts[0][0]).toContain('Access denied: ".env" matches a blocked pattern');
    expect(texts[0][1]).toBe("one\ntwo\n");
    expect(texts[0]).toEqual(texts[1]);
  });
});
