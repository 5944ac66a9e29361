/**
 * Our `pi` against pi 1.6.0's command line. The flag lists of both `pi --help`s, each
 * parsed from the running process, are diffed exactly: the same flags, aliases and kinds of
 * value, but for the flags only ours has, each listed below with its reason. Both are then started over
 * RPC with every 1.6.0 flag at once, and the flags 1.6.0 added since 0.73.1 are checked
 * one by one for what they do, on both, where RPC shows it (get_state, the session file,
 * the tools a model request declares).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { PI_BIN, RpcWorker, tempDir } from "../support/rpc-worker.js";
import { NODE22, PI16_CLI, pi16Installed as installed } from "../support/upstream-pi16.js";

type Impl = "ours" | "pi 1.6.0";
const BIN: Record<Impl, string[]> = { ours: [process.execPath, PI_BIN], "pi 1.6.0": [NODE22, PI16_CLI] };

/**
 * 1.6.0 flags ours does not have, each with why. Empty is the goal: every entry is a
 * flag a pi user's script cannot pass to ours.
 */
const LEFT_OUT: Record<string, string> = {};

/** Flags of ours that 1.6.0 does not have, each with why (no pi script passes them; pi-orch does). */
const OURS_ONLY: Record<string, string> = {
  "--faux-script": "replays scripted replies with the faux provider: offline demos and tests without a model server",
  "--compaction-reserve-tokens": "pi-orch spawn sets compaction per agent; pi has only the compaction settings",
  "--compaction-keep-tokens": "as --compaction-reserve-tokens",
  "--home": "the agent directory for one worker of a fleet, where pi has only PI_CODING_AGENT_DIR",
  "--retry-delay-ms": "pi-orch spawn sets the retry delay per agent; pi has only the retry settings",
  "--max-line-bytes": "the longest RPC line the worker reads, a limit pi does not have (FAULTS.md)",
  "--bash-inherit-keys": "our tool commands do not see the provider keys unless asked; pi's always do",
  "--trust": "records a project as trusted without pi's terminal prompt, which a headless worker cannot show",
  "--sandbox": "runs pi inside a bubblewrap sandbox (README: The sandbox); pi has no sandbox of its own",
  "--sandbox-write": "one more folder the --sandbox lets pi write to",
};

/*
 * Deliberate differences in what a shared flag does (not tested as equal):
 * - `--provider P` without `--model`: 1.6.0 exits 1 ("--provider requires --model"); ours
 *   starts P's default model, which `pi-orch spawn --provider P` and every faux demo rely on.
 * - usage errors exit 2 on ours (README: "2 usage"), 1 on 1.6.0.
 */

/** Tools of 1.6.0's built-in extensions (and of Windows): not these flags' business. */
const PI16_ONLY_TOOLS = ["codemode", "tool_search", "powershell"];

const { servers, dirs } = useOracleFixture();
/** Each side's own mock model server, so the two can run at once. */
const serverOf = (impl: Impl) => servers[impl === "ours" ? "ours" : "upstream"];
const IMPLS = ["ours", "pi 1.6.0"] as const;

/** A flag of a `--help`: its names (long first) and whether it takes a value. */
interface Flag {
  names: string[];
  value?: "required" | "optional";
}

/**
 * The flags of a `--help` text: lines `  --long[, -x]... [<value>|[value]]  description`,
 * as pi 1.6.0 writes them and ours does (commander with pi's option terms). Pure.
 */
function parseHelpFlags(help: string): Flag[] {
  const flags: Flag[] = [];
  for (const line of help.split("\n")) {
    const m = /^ {2}(--[a-z][a-z-]*)((?:, -{1,2}[a-z]+)*)(?: (<[^>]+>|\[[^\]]+\]))?(?: |$)/.exec(line);
    if (!m) continue;
    const aliases = m[2]!
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    flags.push({
      names: [m[1]!, ...aliases],
      ...(m[3] ? { value: m[3].startsWith("<") ? ("required" as const) : ("optional" as const) } : {}),
    });
  }
  return flags;
}

/** A clean agent directory, project and HOME; `models.json` has provider `mock` on `server` (ours unless given). */
function setup(server = servers.ours): { root: string; agentDir: string; cwd: string } {
  const dir = tempDir("pi16-cli-flags-");
  dirs.push(dir);
  const agentDir = join(dir.path, "agent");
  const cwd = join(dir.path, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  writeFileSync(
    join(agentDir, "models.json"),
    JSON.stringify({
      providers: {
        mock: {
          baseUrl: `${server.url}/v1`,
          api: "openai-completions",
          apiKey: "mock-key",
          models: [{ id: "mock-1", reasoning: true, contextWindow: 128000, maxTokens: 4096 }],
        },
      },
    }),
  );
  return { root: dir.path, agentDir, cwd };
}

/** The environment both read their agent directory from, and nothing of the caller's. */
function envOf(s: ReturnType<typeof setup>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: s.root, PI_CODING_AGENT_DIR: s.agentDir, PI_OFFLINE: "1", NO_COLOR: "1" };
}

function helpOf(impl: Impl, s: ReturnType<typeof setup>): string {
  const [cmd, ...pre] = BIN[impl];
  const run = spawnSync(cmd!, [...pre, "--help"], { cwd: s.cwd, env: envOf(s), encoding: "utf8" });
  expect(run.status, `${impl} --help\n${run.stderr}`).toBe(0);
  return run.stdout;
}

/** `impl --mode rpc --model mock/mock-1 ARGS` in the setup's folders. */
function start(impl: Impl, s: ReturnType<typeof setup>, args: string[]): RpcWorker {
  return new RpcWorker(["--mode", "rpc", "--model", "mock/mock-1", ...args], {
    cwd: s.cwd,
    env: { ...envOf(s), PI_ORCH_HOME: undefined },
    bin: BIN[impl],
  });
}

/** What get_state says, without the model (the catalogues' defaults differ: maxTokens, cost). */
async function stateOf(w: RpcWorker): Promise<Record<string, unknown>> {
  const state = await w.request({ type: "get_state" });
  expect(state.success, w.stderr.join("")).toBe(true);
  const { model, ...rest } = state.data as Record<string, unknown>;
  return { ...rest, model: `${(model as { provider: string }).provider}/${(model as { id: string }).id}` };
}

/** The keys of `value` that are in `keys`. */
function pick(value: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([k]) => keys.includes(k)));
}

/** A value each value-taking 1.6.0 flag accepts on both (real files where 1.6.0 loads them). */
function valueFor(flag: string, s: ReturnType<typeof setup>): string {
  const file = (name: string, text: string) => {
    const path = join(s.root, name);
    writeFileSync(path, text);
    return path;
  };
  switch (flag) {
    case "--provider":
      return "mock";
    case "--model":
      return "mock-1";
    case "--api-key":
      return "mock-key";
    case "--mode":
      return "rpc";
    case "--models":
      return "mock/*";
    case "--thinking":
      return "low";
    case "--tools":
      return "read,bash";
    case "--exclude-tools":
      return "grep";
    case "--session-dir":
      return join(s.root, "sessions");
    case "--session-id":
      return "flags-1";
    case "--name":
      return "all the flags";
    case "--extension":
      return file("ext.ts", "export default function () {}\n");
    case "--skill":
      mkdirSync(join(s.root, "skills/one"), { recursive: true });
      file("skills/one/SKILL.md", "---\nname: one\ndescription: a skill\n---\nDo one thing.\n");
      return join(s.root, "skills");
    case "--prompt-template":
      return file("hello.md", "Say hello.\n");
    case "--theme":
      mkdirSync(join(s.root, "themes"), { recursive: true });
      return join(s.root, "themes");
    case "--use-theme":
      return "dark";
    case "--tui-mode":
      return "regular";
    default:
      return "x";
  }
}

/** Three extension tools, and a command that asks for every tool back and reports what it got. */
const TOOLS_EXTENSION = `import { Type } from "typebox";
export default function (pi) {
  for (const name of ["deploy_prod", "deploy_dry", "notes"]) {
    pi.registerTool({ name, label: name, description: "the " + name + " tool", parameters: Type.Object({}),
      execute: async () => ({ content: [{ type: "text", text: name }] }) });
  }
  pi.registerCommand("all-tools", { handler: async (_args, ctx) => {
    pi.setActiveTools(["read", "bash", "grep", "deploy_prod", "deploy_dry", "notes"]);
    ctx.ui.notify(JSON.stringify({ all: pi.getAllTools().map((t) => t.name).sort(), active: [...pi.getActiveTools()].sort() }), "info");
  } });
}
`;

/**
 * The tools `impl` started with ARGS (and the extension above) has: those the first model
 * request declares, what the extension's `getAllTools` / `getActiveTools` say after it asked
 * for every tool back, those the next request declares, and what it wrote on stderr.
 */
async function toolsWith(impl: Impl, args: string[]): Promise<Record<string, unknown>> {
  const server = serverOf(impl);
  const s = setup(server);
  const ext = join(s.root, "tools.ts");
  writeFileSync(ext, TOOLS_EXTENSION);
  const declared = async (w: RpcWorker): Promise<string[]> => {
    const before = server.requests.length;
    server.enqueue({ text: "ok" });
    expect((await w.request({ type: "prompt", message: "which tools?" })).success).toBe(true);
    await w.event("agent_end", 20_000, w.received.length - 1);
    await server.waitForRequests(before + 1);
    return (server.requests[before]!.body.tools ?? [])
      .map((t: { function: { name: string } }) => t.function.name)
      .sort();
  };
  const w = start(impl, s, ["--no-session", "-e", ext, ...args]);
  const atStart = await declared(w);
  const from = w.received.length;
  expect((await w.request({ type: "prompt", message: "/all-tools" })).success).toBe(true);
  const notice = await w.waitFor((l) => l.type === "extension_ui_request" && l.method === "notify", 20_000, from);
  const afterAsking = await declared(w);
  w.closeStdin();
  await w.exited;
  const reported = JSON.parse(notice.message) as { all: string[]; active: string[] };
  reported.all = reported.all.filter((t) => !PI16_ONLY_TOOLS.includes(t));
  return { atStart, extension: reported, afterAsking, warned: /tool/i.test(w.stderr.join("")) };
}

// Flags that end the process, pick the session, or read a prompt are checked on their own.
const SEPARATE = new Set([
  "--help",
  "--version",
  "--export",
  "--list-models",
  "--print",
  "--session",
  "--fork",
  "--continue",
  "--resume",
  "--no-session",
  "--mode",
]);

describe.skipIf(!installed)("pi 1.6.0's command line", () => {
  it("our --help lists exactly 1.6.0's flags, aliases and kinds of value, and the flags only ours has", () => {
    const s = setup();
    const theirs = parseHelpFlags(helpOf("pi 1.6.0", s));
    const ours = parseHelpFlags(helpOf("ours", s));
    expect(theirs.length, "1.6.0's help parsed").toBeGreaterThan(40);
    const describe = (flags: Flag[], leave: Record<string, string>) =>
      flags
        .filter((f) => !(f.names[0]! in leave))
        .map((f) => `${f.names.join(", ")}${f.value ? ` (${f.value})` : ""}`)
        .sort();
    for (const long of Object.keys(LEFT_OUT))
      expect(
        ours.some((f) => f.names[0] === long),
        `${long} is ours now: take it off LEFT_OUT`,
      ).toBe(false);
    for (const long of Object.keys(OURS_ONLY)) {
      expect(
        ours.some((f) => f.names[0] === long),
        `${long} is no flag of ours: take it off OURS_ONLY`,
      ).toBe(true);
      expect(
        theirs.some((f) => f.names[0] === long),
        `${long} is 1.6.0's too: take it off OURS_ONLY`,
      ).toBe(false);
    }
    expect(describe(ours, OURS_ONLY)).toEqual(describe(theirs, LEFT_OUT));
  });

  it("--list-models with both providers' keys prints 1.6.0's table line for line (its catalogue), and --provider P starts 1.6.0's default model of P", async () => {
    const s = setup();
    const table = (impl: Impl) => {
      const [cmd, ...pre] = BIN[impl];
      const r = spawnSync(cmd!, [...pre, "--list-models"], {
        cwd: s.cwd,
        env: { ...envOf(s), ANTHROPIC_API_KEY: "a", OPENAI_API_KEY: "o" },
        encoding: "utf8",
      });
      expect(r.status, `${impl} --list-models\n${r.stderr}`).toBe(0);
      // 1.6.0, its stdin not a terminal, prints the table to stderr; ours to stdout.
      return (r.stdout + r.stderr).trimEnd().split("\n");
    };
    const theirs = table("pi 1.6.0");
    expect(theirs.length).toBeGreaterThan(60);
    expect(table("ours")).toEqual(theirs);
    for (const [provider, key] of [
      ["anthropic", "ANTHROPIC_API_KEY"],
      ["openai", "OPENAI_API_KEY"],
    ] as const) {
      const models: string[] = [];
      for (const impl of ["ours", "pi 1.6.0"] as const) {
        // No --provider (1.6.0 refuses it without --model): the one key set picks the provider.
        const w = new RpcWorker(["--mode", "rpc", "--no-session"], {
          cwd: s.cwd,
          env: { ...envOf(s), PI_ORCH_HOME: undefined, [key]: "k" },
          bin: BIN[impl],
        });
        try {
          const state = await w.request({ type: "get_state" });
          expect(state.success, w.stderr.join("")).toBe(true);
          const model = (state.data as { model?: { provider: string; id: string } }).model;
          models.push(`${model?.provider}/${model?.id}`);
        } finally {
          w.kill();
        }
      }
      expect(models[0]!.startsWith(`${provider}/`), models[0]).toBe(true);
      expect(models[0], provider).toBe(models[1]);
    }
  });

  it("both start with every flag 1.6.0 documents (long names, then aliases) and agree on the state", async () => {
    const s = setup();
    const flags = parseHelpFlags(helpOf("pi 1.6.0", s)).filter(
      (f) => !SEPARATE.has(f.names[0]!) && !(f.names[0]! in LEFT_OUT),
    );
    for (const alias of [false, true]) {
      const args: string[] = [];
      for (const flag of flags) {
        args.push(alias && flag.names[1] ? flag.names[1] : flag.names[0]!);
        if (flag.value === "required") args.push(valueFor(flag.names[0]!, s));
      }
      args.push("--no-session");
      const seen: Partial<Record<Impl, unknown>> = {};
      for (const impl of ["ours", "pi 1.6.0"] as const) {
        const w = start(impl, s, args);
        const state = await stateOf(w);
        seen[impl] = { thinkingLevel: state.thinkingLevel, sessionName: state.sessionName, model: state.model };
        w.closeStdin();
        expect((await w.exited).code, `${impl} ${args.join(" ")}\n${w.stderr.join("")}`).toBe(0);
      }
      expect(seen.ours, args.join(" ")).toEqual(seen["pi 1.6.0"]);
    }
  }, 60_000);

  it("--tui-mode takes fullscreen or regular; --use-theme, --no-mcp change nothing over RPC; an unknown --thinking is a warning, bad values of the others usage errors", async () => {
    const s = setup();
    for (const args of [["--tui-mode", "fullscreen"], ["--use-theme", "light"], ["--no-mcp"]]) {
      const seen: Partial<Record<Impl, Record<string, unknown>>> = {};
      for (const impl of ["ours", "pi 1.6.0"] as const) {
        const w = start(impl, s, [...args, "--no-session"]);
        const { sessionId: _id, ...state } = await stateOf(w);
        seen[impl] = state;
        w.closeStdin();
        expect((await w.exited).code, impl).toBe(0);
      }
      // What 1.6.0 answers (ours answers more: cwd, tools, openDialogs).
      expect(pick(seen.ours!, Object.keys(seen["pi 1.6.0"]!)), args.join(" ")).toEqual(seen["pi 1.6.0"]);
    }
    // An unknown thinking level is a warning on both, and the default level stays.
    for (const impl of ["ours", "pi 1.6.0"] as const) {
      const w = start(impl, s, ["--thinking", "bogus", "--no-session"]);
      expect((await stateOf(w)).thinkingLevel, impl).toBe("medium");
      w.closeStdin();
      expect((await w.exited).code, impl).toBe(0);
      expect(w.stderr.join(""), impl).toMatch(/"bogus"/);
    }
    // 1.6.0 exits 1 on a usage error, ours 2 (as for every usage error of ours).
    for (const args of [["--tui-mode", "bogus"], ["--tui-mode"], ["--use-theme"]]) {
      for (const impl of ["ours", "pi 1.6.0"] as const) {
        const [cmd, ...pre] = BIN[impl];
        const r = spawnSync(cmd!, [...pre, "--mode", "rpc", "--no-session", ...args], {
          cwd: s.cwd,
          env: envOf(s),
          input: "",
          encoding: "utf8",
        });
        expect(r.status, `${impl} ${args.join(" ")}: ${r.stderr}`).toBe(impl === "ours" ? 2 : 1);
      }
    }
  }, 60_000);

  it("--name / -n names the session at start, trimmed: get_state and a session_info entry, as 1.6.0; a blank one is refused", async () => {
    const seen: Partial<Record<Impl, unknown>> = {};
    // The sides at once, each in its own folders and on its own mock model server.
    const side = async (impl: Impl) => {
      const server = serverOf(impl);
      const s = setup(server);
      const sessions = join(s.root, "sessions");
      const first = start(impl, s, ["-n", "  Refactor auth  ", "--session-dir", sessions]);
      const state = await stateOf(first);
      // pi writes the file with its first answer: have one.
      server.enqueue({ text: "hello" });
      expect((await first.request({ type: "prompt", message: "hi" })).success).toBe(true);
      await first.event("agent_end");
      first.closeStdin();
      await first.exited;
      // Resumed with another name: one more session_info entry, the new name in force.
      const again = start(impl, s, ["--session", state.sessionFile as string, "--name", "Second"]);
      const resumed = await stateOf(again);
      again.closeStdin();
      await again.exited;
      const names = readFileSync(state.sessionFile as string, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
        .filter((e) => e.type === "session_info")
        .map((e) => e.name);
      const blank = spawnSync(BIN[impl][0]!, [...BIN[impl].slice(1), "--mode", "rpc", "--name", "   "], {
        cwd: s.cwd,
        env: envOf(s),
        input: "",
        encoding: "utf8",
      });
      expect(blank.stderr, impl).toMatch(/--name requires a non-empty value/);
      expect(blank.status, impl).toBe(impl === "ours" ? 2 : 1);
      seen[impl] = { atStart: state.sessionName, resumed: resumed.sessionName, names };
    };
    await Promise.all(IMPLS.map(side));
    expect(seen["pi 1.6.0"]).toEqual({
      atStart: "Refactor auth",
      resumed: "Second",
      names: ["Refactor auth", "Second"],
    });
    expect(seen.ours).toEqual(seen["pi 1.6.0"]);
  }, 60_000);

  it("--session-id opens this project's session with that id or creates it, forks under it, names the in-memory one, as 1.6.0", async () => {
    const seen: Partial<Record<Impl, unknown>> = {};
    // The sides at once, each in its own folders and on its own mock model server.
    const side = async (impl: Impl) => {
      const server = serverOf(impl);
      const s = setup(server);
      const dir = ["--session-dir", join(s.root, "sessions")];
      const run = async (args: string[], prompt: boolean) => {
        const w = start(impl, s, args);
        const state = await stateOf(w);
        if (prompt) {
          // pi writes the file with its first answer: have one.
          server.enqueue({ text: "noted" });
          expect((await w.request({ type: "prompt", message: "remember this" })).success).toBe(true);
          await w.event("agent_end");
        }
        w.closeStdin();
        const { code } = await w.exited;
        const warned = /job-42/.test(w.stderr.join(""));
        return {
          id: state.sessionId,
          file: state.sessionFile as string | undefined,
          // Whether the conversation came back, not how many messages: 1.6.0 counts one more of its own.
          resumed: (state.messageCount as number) > 0,
          code,
          warned,
        };
      };
      const created = await run(["--session-id", "job-42", ...dir], true);
      const reopened = await run(["--session-id", "job-42", ...dir], false);
      const forked = await run(["--fork", created.file!, "--session-id", "job-43", ...dir], false);
      const ephemeral = await run(["--no-session", "--session-id", "eph.1"], false);
      const refused = (args: string[]) => {
        const r = spawnSync(
          BIN[impl][0]!,
          [...BIN[impl].slice(1), "--mode", "rpc", "--model", "mock/mock-1", ...args],
          {
            cwd: s.cwd,
            env: envOf(s),
            input: "",
            encoding: "utf8",
          },
        );
        return r.status === (impl === "ours" ? 2 : 1);
      };
      seen[impl] = {
        created: { ...created, file: created.file?.endsWith("_job-42.jsonl") },
        reopened: { ...reopened, file: reopened.file === created.file },
        forked: { ...forked, file: forked.file !== created.file && forked.file?.endsWith("_job-43.jsonl") },
        ephemeral,
        refused: {
          badId: refused(["--session-id", "bad/id", ...dir]),
          withContinue: refused(["--session-id", "job-42", "--continue", ...dir]),
          forkOntoExisting: refused(["--fork", created.file!, "--session-id", "job-42", ...dir]),
        },
      };
    };
    await Promise.all(IMPLS.map(side));
    expect(seen["pi 1.6.0"]).toEqual({
      created: { id: "job-42", file: true, resumed: false, code: 0, warned: true },
      reopened: { id: "job-42", file: true, resumed: true, code: 0, warned: false },
      forked: { id: "job-43", file: true, resumed: true, code: 0, warned: false },
      ephemeral: { id: "eph.1", file: undefined, resumed: false, code: 0, warned: false },
      refused: { badId: true, withContinue: true, forkOntoExisting: true },
    });
    expect(seen.ours).toEqual(seen["pi 1.6.0"]);
  }, 90_000);

  it("--exclude-tools / -xt leaves tools out by name or pattern, built-in and extension ones, whatever --tools or an extension asks, as 1.6.0", async () => {
    // Changes to the default set (an allow-list would also narrow what pi registers).
    const args = ["-t", "+grep", "-xt", "bash,deploy_*"];
    const [ours, theirs] = await Promise.all(IMPLS.map((impl) => toolsWith(impl, args)));
    const seen = { ours, "pi 1.6.0": theirs };
    expect(seen["pi 1.6.0"]).toEqual({
      atStart: ["edit", "grep", "notes", "read", "write"],
      extension: { all: ["edit", "find", "grep", "ls", "notes", "read", "write"], active: ["grep", "notes", "read"] },
      afterAsking: ["grep", "notes", "read"],
      warned: false,
    });
    expect(seen.ours).toEqual(seen["pi 1.6.0"]);
  }, 90_000);

  it("--tools / -t is the only set of tools there is (names, * patterns), or +name/-name changes the defaults; --no-tools / -nt leaves none, --no-builtin-tools / -nbt no built-in active, as 1.6.0", async () => {
    const cases: [string, string[]][] = [
      ["an allow-list with a pattern", ["-t", "read,deploy_*"]],
      ["an allow-list naming an unknown tool", ["--tools", "read,teleport"]],
      ["modifiers", ["--tools", "+grep,-write"]],
      ["--no-tools", ["--no-tools"]],
      ["-nt with modifiers", ["-nt", "-t", "+grep,+notes"]],
      ["--no-builtin-tools", ["--no-builtin-tools"]],
      ["-nbt with modifiers", ["-nbt", "--tools", "+ls"]],
    ];
    const seen: Partial<Record<Impl, Record<string, unknown>>> = {};
    // The sides at once (each on its own mock model server), the cases of a side in turn.
    await Promise.all(
      IMPLS.map(async (impl) => {
        const results: Record<string, unknown> = {};
        for (const [name, args] of cases) results[name] = await toolsWith(impl, args);
        seen[impl] = results;
      }),
    );
    const all = ["bash", "deploy_dry", "deploy_prod", "edit", "find", "grep", "ls", "notes", "read", "write"];
    const everyAsked = ["bash", "deploy_dry", "deploy_prod", "grep", "notes", "read"];
    expect(seen["pi 1.6.0"]).toEqual({
      "an allow-list with a pattern": {
        atStart: ["deploy_dry", "deploy_prod", "read"],
        extension: { all: ["deploy_dry", "deploy_prod", "read"], active: ["deploy_dry", "deploy_prod", "read"] },
        afterAsking: ["deploy_dry", "deploy_prod", "read"],
        warned: false,
      },
      "an allow-list naming an unknown tool": {
        atStart: ["read"],
        extension: { all: ["read"], active: ["read"] },
        afterAsking: ["read"],
        warned: false,
      },
      modifiers: {
        atStart: ["bash", "deploy_dry", "deploy_prod", "edit", "grep", "notes", "read"],
        extension: { all, active: everyAsked },
        afterAsking: everyAsked,
        warned: false,
      },
      "--no-tools": { atStart: [], extension: { all: [], active: [] }, afterAsking: [], warned: false },
      "-nt with modifiers": {
        atStart: ["grep", "notes"],
        extension: { all: ["grep", "notes"], active: ["grep", "notes"] },
        afterAsking: ["grep", "notes"],
        warned: false,
      },
      "--no-builtin-tools": {
        atStart: ["deploy_dry", "deploy_prod", "notes"],
        extension: { all, active: everyAsked },
        afterAsking: everyAsked,
        warned: false,
      },
      "-nbt with modifiers": {
        atStart: ["deploy_dry", "deploy_prod", "ls", "notes"],
        extension: { all, active: everyAsked },
        afterAsking: everyAsked,
        warned: false,
      },
    });
    expect(seen.ours).toEqual(seen["pi 1.6.0"]);

    // A list mixing names and modifiers, or a modifier with a pattern: a usage error, in pi's words.
    const s = setup();
    for (const [value, message] of [
      ["read,+grep", "--tools: tool names cannot be mixed with +name or -name entries"],
      ["+gr*", "--tools: +name and -name entries take exact tool names, not patterns: +gr*"],
    ]) {
      for (const impl of ["ours", "pi 1.6.0"] as const) {
        const [cmd, ...pre] = BIN[impl];
        const r = spawnSync(cmd!, [...pre, "--mode", "rpc", "--no-session", "--tools", value!], {
          cwd: s.cwd,
          env: envOf(s),
          input: "",
          encoding: "utf8",
        });
        expect(r.stderr, impl).toContain(message);
        expect(r.status, impl).toBe(impl === "ours" ? 2 : 1);
      }
    }
  }, 180_000);

  it("--approve / -a and --no-approve / -na trust the project or not for this run, over trust.json, recording nothing, as 1.6.0", async () => {
    // The project's settings ask for thinking "high": in force only when the project is trusted.
    const extension = `export default function (pi) {
  pi.registerCommand("trust-state", { handler: async (_args, ctx) => ctx.ui.notify(String(ctx.isProjectTrusted()), "info") });
}
`;
    const cases: [string, { settings: boolean; recorded?: "project" | "parent"; decision?: boolean }, string[]][] = [
      ["nothing to trust", { settings: false }, []],
      ["project settings, no decision", { settings: true }, []],
      ["--approve", { settings: true }, ["--approve"]],
      ["recorded trusted", { settings: true, recorded: "project", decision: true }, []],
      ["recorded trusted, --no-approve", { settings: true, recorded: "project", decision: true }, ["--no-approve"]],
      ["recorded untrusted, -a", { settings: true, recorded: "project", decision: false }, ["-a"]],
      ["a parent folder recorded trusted", { settings: true, recorded: "parent", decision: true }, []],
    ];
    const seen: Partial<Record<Impl, Record<string, unknown>>> = {};
    // The sides at once, each case in its own folders on its side's mock model server.
    const side = async (impl: Impl) => {
      const results: Record<string, unknown> = {};
      for (const [name, project, args] of cases) {
        const s = setup(serverOf(impl));
        const ext = join(s.root, "trust-state.ts");
        writeFileSync(ext, extension);
        if (project.settings) {
          mkdirSync(join(s.cwd, ".pi"));
          writeFileSync(join(s.cwd, ".pi", "settings.json"), JSON.stringify({ defaultThinkingLevel: "high" }));
        }
        const trustFile = join(s.agentDir, "trust.json");
        const before = project.recorded
          ? JSON.stringify({ [realpathSync(project.recorded === "project" ? s.cwd : s.root)]: project.decision })
          : undefined;
        if (before) writeFileSync(trustFile, before);
        const w = start(impl, s, ["--no-session", "-e", ext, ...args]);
        const state = await stateOf(w);
        const from = w.received.length;
        expect((await w.request({ type: "prompt", message: "/trust-state" })).success).toBe(true);
        const notice = await w.waitFor((l) => l.type === "extension_ui_request" && l.method === "notify", 20_000, from);
        w.closeStdin();
        await w.exited;
        const after = existsSync(trustFile) ? readFileSync(trustFile, "utf8") : undefined;
        results[name] = {
          trusted: notice.message,
          thinking: state.thinkingLevel,
          recordedNothing: after === undefined ? before === undefined : JSON.stringify(JSON.parse(after)) === before,
        };
      }
      seen[impl] = results;
    };
    await Promise.all(IMPLS.map(side));
    const yes = { trusted: "true", thinking: "high", recordedNothing: true };
    const no = { trusted: "false", thinking: "medium", recordedNothing: true };
    expect(seen["pi 1.6.0"]).toEqual({
      "nothing to trust": { ...yes, thinking: "medium" },
      "project settings, no decision": no,
      "--approve": yes,
      "recorded trusted": yes,
      "recorded trusted, --no-approve": no,
      "recorded untrusted, -a": yes,
      "a parent folder recorded trusted": yes,
    });
    expect(seen.ours).toEqual(seen["pi 1.6.0"]);
  }, 180_000);
});
