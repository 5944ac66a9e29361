/**
 * Our `pi` accepts every flag the upstream pi 0.73.1 documents: the list is read from
 * the upstream `pi --help` itself, so a flag pi adds shows up here. Flags that only
 * concern pi's terminal are accepted and ignored; the ones that apply are checked for
 * what they do (--version, --list-models, --export, --session PATH of a new file,
 * an unknown --tools name).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PI_BIN, RpcWorker, killAllWorkers, tempDir } from "../support/rpc-worker.js";

const UPSTREAM = resolve(import.meta.dirname, "../upstream/node_modules/@mariozechner/pi-coding-agent/dist/cli.js");
const installed = existsSync(UPSTREAM);
const dirs: { cleanup: () => void }[] = [];
afterEach(async () => {
  await killAllWorkers();
  for (const d of dirs.splice(0)) d.cleanup();
});

interface Flag {
  names: string[];
  value?: "required" | "optional";
}

/** The flags in pi's `--help` (`  --tools, -t <tools>   ...`). */
function upstreamFlags(home: string): Flag[] {
  const run = spawnSync(process.execPath, [UPSTREAM, "--help"], {
    env: { PATH: process.env.PATH, HOME: home, PI_CODING_AGENT_DIR: home, PI_OFFLINE: "1" },
    encoding: "utf8",
  });
  const help = run.stdout + run.stderr;
  const flags: Flag[] = [];
  for (const line of help.split("\n")) {
    const m = /^ {2}(--[a-z][a-z-]*)((?:, -[a-z]+)*)(?: (<[^>]+>|\[[^\]]+\]))?(?: |$)/.exec(line);
    if (!m) continue;
    const names = [
      m[1]!,
      ...m[2]!
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    ];
    flags.push({
      names,
      ...(m[3] ? { value: m[3].startsWith("<") ? ("required" as const) : ("optional" as const) } : {}),
    });
  }
  return flags;
}

function setup(): { root: string; home: string; cwd: string; env: NodeJS.ProcessEnv } {
  const dir = tempDir("pi-cli-flags-");
  dirs.push(dir);
  const home = join(dir.path, "home");
  const cwd = join(dir.path, "project");
  mkdirSync(home, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  return { root: dir.path, home, cwd, env: { PI_ORCH_HOME: home, HOME: dir.path } };
}

/** A value that fits each value-taking flag. */
function valueFor(flag: string, s: ReturnType<typeof setup>): string {
  switch (flag) {
    case "--provider":
      return "faux";
    case "--model":
      return "faux-1";
    case "--mode":
      return "rpc";
    case "--models":
      return "faux/*";
    case "--thinking":
      return "low";
    case "--tools":
      return "read,bash";
    case "--session-dir":
      return join(s.root, "sessions");
    case "--extension":
    case "--skill":
    case "--prompt-template":
    case "--theme":
      return join(s.root, "nothing-here");
    default:
      return "x";
  }
}

/** `pi --list-models ARGS` of `bin` (ours or upstream) in a clean environment; it must exit 0. Its table's lines. */
function listModels(s: ReturnType<typeof setup>, bin: string, env: NodeJS.ProcessEnv, args: string[]): string[] {
  const clean = { PATH: process.env.PATH, HOME: s.root, PI_OFFLINE: "1", NO_COLOR: "1" };
  const r = spawnSync(process.execPath, [bin, "--list-models", ...args], {
    cwd: s.cwd,
    env: { ...clean, ...env },
    encoding: "utf8",
  });
  expect(r.status, `${bin} --list-models ${args.join(" ")}\n${r.stderr}`).toBe(0);
  // Upstream pi, its stdin not a terminal, prints the table to stderr (its stdout
  // guard for print mode); ours keeps it on stdout, where a script reads it.
  return (bin === UPSTREAM ? r.stdout + r.stderr : r.stdout).trimEnd().split("\n");
}

/** The providers of a --list-models table but our faux (listed while it is the model in use, which upstream has not). */
const providers = (lines: string[]) =>
  [...new Set(lines.slice(1).map((l) => l.split(/\s+/)[0]!))].filter((p) => p !== "faux").sort();

// Flags that end the process or pick the session are checked one by one below.
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
]);

describe.skipIf(!installed)("pi's command line", () => {
  it("starts with every flag pi 0.73.1 documents (long names and short aliases), refusing none", async () => {
    const s = setup();
    const flags = upstreamFlags(s.root);
    expect(flags.length).toBeGreaterThan(30);
    for (const alias of [false, true]) {
      const args: string[] = [];
      for (const flag of flags) {
        if (SEPARATE.has(flag.names[0]!)) continue;
        const name = alias && flag.names[1] ? flag.names[1] : flag.names[0]!;
        args.push(name);
        if (flag.value === "required") args.push(valueFor(flag.names[0]!, s));
      }
      args.push("--mode", "rpc", "--no-session");
      const w = new RpcWorker(args, { cwd: s.cwd, env: s.env });
      const state = await w.request({ type: "get_state" });
      expect(state.success, `pi ${args.join(" ")}\n${w.stderr.join("")}`).toBe(true);
      expect(state.data.thinkingLevel).toBe("off");
      w.closeStdin();
      expect((await w.exited).code).toBe(0);
    }
  }, 60_000);

  it("answers --version, --help, --list-models [search] and exits 0", () => {
    const s = setup();
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [PI_BIN, ...args], {
        cwd: s.cwd,
        env: { ...process.env, ...s.env },
        encoding: "utf8",
      });
    expect(run("--version").stdout).toMatch(/^\d+\.\d+\.\d+/);
    expect(run("-v").status).toBe(0);
    const help = run("--help");
    expect(help.status).toBe(0);
    const documented = upstreamFlags(s.root);
    expect(documented.length).toBeGreaterThan(30);
    for (const flag of documented) expect(help.stdout, flag.names[0]).toContain(flag.names[0]!);
    writeFileSync(
      join(s.home, "models.json"),
      JSON.stringify({
        providers: {
          mock: {
            baseUrl: "http://127.0.0.1:9/v1",
            api: "openai-completions",
            apiKey: "k",
            models: [{ id: "mock-1", reasoning: true, contextWindow: 128000, maxTokens: 4096 }],
          },
        },
      }),
    );
    const list = run("--list-models");
    expect(list.status).toBe(0);
    expect(list.stdout.split("\n")[0]).toMatch(/^provider\s+model\s+context\s+max-out\s+thinking\s+images$/);
    expect(list.stdout).toMatch(/mock\s+mock-1\s+128K\s+4\.1K\s+yes\s+no/);
    expect(list.stdout).not.toContain("anthropic");
    expect(run("--list-models", "zzz").stdout).toBe('No models matching "zzz"\n');
  });

  it("--list-models lists the providers upstream pi lists for the same keys: an empty variable is no key, --api-key is its model's provider's only", () => {
    const s = setup();
    writeFileSync(
      join(s.home, "models.json"),
      JSON.stringify({
        providers: {
          lit: {
            baseUrl: "http://127.0.0.1:9/v1",
            api: "openai-completions",
            apiKey: "sk-literal",
            models: [{ id: "m2" }, { id: "a-first", contextWindow: 1047576, maxTokens: 512 }],
          },
          envkey: {
            baseUrl: "http://127.0.0.1:9/v1",
            api: "openai-completions",
            apiKey: "MY_PROXY_KEY_UNSET",
            models: [{ id: "m1", reasoning: true }],
          },
        },
      }),
    );
    const list = (bin: string, env: NodeJS.ProcessEnv, args: string[]) => listModels(s, bin, env, args);
    // Cells, not padding: the widths follow the longest id, and the catalogues differ.
    const custom = (lines: string[]) =>
      lines.filter((l) => /^(lit|envkey)\s/.test(l)).map((l) => l.trim().split(/\s+/));
    const cases: [string, NodeJS.ProcessEnv, string[], string[]][] = [
      ["no keys", {}, [], ["envkey", "lit"]],
      ["an empty OPENAI_API_KEY", { OPENAI_API_KEY: "" }, [], ["envkey", "lit"]],
      ["OPENAI_API_KEY set", { OPENAI_API_KEY: "sk-test" }, [], ["envkey", "lit", "openai"]],
      ["--api-key for openai's model", {}, ["--model", "openai/gpt-4o", "--api-key", "k"], ["envkey", "lit", "openai"]],
      [
        "--api-key for openai, anthropic's own key",
        { ANTHROPIC_API_KEY: "a" },
        ["--model", "openai/gpt-4o", "--api-key", "k"],
        ["anthropic", "envkey", "lit", "openai"],
      ],
    ];
    for (const [name, env, args, expected] of cases) {
      const theirs = list(UPSTREAM, { ...env, PI_CODING_AGENT_DIR: s.home }, args);
      const ours = list(PI_BIN, { ...env, PI_ORCH_HOME: s.home }, args);
      expect(providers(theirs), `upstream, ${name}`).toEqual(expected);
      expect(providers(ours), name).toEqual(expected);
      // The same rows, in pi's order (provider, then id) and number format (1.0M, 16.4K).
      expect(custom(ours), name).toEqual(custom(theirs));
      const rows = ours.slice(1).map((l) => l.split(/\s+/).slice(0, 2).join("/"));
      expect(rows, name).toEqual(
        [...rows].sort(
          (a, b) =>
            a.split("/")[0]!.localeCompare(b.split("/")[0]!) || a.split("/")[1]!.localeCompare(b.split("/")[1]!),
        ),
      );
    }
    // pi's search: every word's letters in order, in "provider id".
    for (const search of ["lit m", "ekm1", "zzz"]) {
      expect(list(PI_BIN, { PI_ORCH_HOME: s.home }, [search]), search).toEqual(
        list(UPSTREAM, { PI_CODING_AGENT_DIR: s.home }, [search]),
      );
    }
  }, 60_000);

  it("--list-models lists the providers extensions register (pi.registerProvider), as upstream pi does", () => {
    const s = setup();
    // pi's own examples (a streamSimple provider with OAuth and a key variable; one with a key
    // variable and six models) and one of ours: a key variable that is unset still counts, as
    // in models.json; a provider that replaces a built-in one's models.
    const local = join(s.root, "providers.ts");
    writeFileSync(
      local,
      `export default function (pi) {
        const model = (id, extra = {}) => ({ id, name: id, reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 32000, maxTokens: 1000, ...extra });
        pi.registerProvider("ext-env", { baseUrl: "http://127.0.0.1:9/v1", api: "openai-completions", apiKey: "EXT_KEY_UNSET", models: [model("e-2"), model("e-1", { reasoning: true, input: ["text", "image"], contextWindow: 1047576 })] });
        pi.registerProvider("openai", { baseUrl: "http://127.0.0.1:9/v1", api: "openai-completions", apiKey: "EXT_OPENAI_KEY", models: [model("proxy-gpt")] });
      }\n`,
    );
    const extensions = ["custom-provider-anthropic", "custom-provider-gitlab-duo"].flatMap((name) => [
      "-e",
      join(resolve(UPSTREAM, "../../examples/extensions"), name),
    ]);
    const cases: [string, string[], string[]][] = [
      ["pi's examples", extensions, ["custom-anthropic", "gitlab-duo"]],
      ["a local extension", ["-e", local], ["ext-env", "openai"]],
      // The search is --list-models' own value, so it comes first.
      ["all three, and a search", ["opus", ...extensions, "-e", local], ["custom-anthropic", "gitlab-duo"]],
      // The start model does not matter to the list: neither pi fails on one it cannot resolve.
      [
        "--provider of an extension",
        ["--provider", "custom-anthropic", ...extensions],
        ["custom-anthropic", "gitlab-duo"],
      ],
      ["--model of an extension", ["--model", "ext-env/e-1", "-e", local], ["ext-env", "openai"]],
      ["--provider that nothing registers", ["--provider", "nosuch", "-e", local], ["ext-env", "openai"]],
    ];
    const cells = (lines: string[]) =>
      lines.filter((l) => !/^(faux|provider)\s/.test(l)).map((l) => l.trim().split(/\s+/));
    for (const [name, args, expected] of cases) {
      const theirs = listModels(s, UPSTREAM, { PI_CODING_AGENT_DIR: s.home }, args);
      const ours = listModels(s, PI_BIN, { PI_ORCH_HOME: s.home }, args);
      expect(providers(theirs), `upstream, ${name}`).toEqual(expected);
      expect(providers(ours), name).toEqual(expected);
      // The same rows in the same order, cell by cell (the widths follow the longest id).
      expect(cells(ours), name).toEqual(cells(theirs));
    }
  }, 90_000);

  it("--session PATH of a file that does not exist yet starts a new session there; --export writes its HTML", async () => {
    const s = setup();
    const path = join(s.root, "new", "mine.jsonl");
    mkdirSync(join(s.root, "new"));
    const w = new RpcWorker(["--mode", "rpc", "--provider", "faux", "--session", path], { cwd: s.cwd, env: s.env });
    const state = await w.request({ type: "get_state" });
    expect(state.data.sessionFile).toBe(path);
    await w.request({ type: "set_session_name", name: "<b>bold</b> name" });
    // Written there with the first message, as pi writes a new session.
    expect(existsSync(path)).toBe(false);
    const from = w.received.length;
    await w.request({ type: "prompt", message: "hello" });
    await w.event("agent_end", undefined, from);
    w.closeStdin();
    await w.exited;
    expect(JSON.parse(readFileSync(path, "utf8").split("\n")[0]!).type).toBe("session");
    const out = join(s.root, "page.html");
    const exported = spawnSync(process.execPath, [PI_BIN, "--export", path, out], {
      cwd: s.cwd,
      env: { ...process.env, ...s.env },
      encoding: "utf8",
    });
    expect(exported.status).toBe(0);
    expect(exported.stdout.trim()).toBe(out);
    const html = readFileSync(out, "utf8");
    expect(html).toContain("&lt;b&gt;bold&lt;/b&gt; name");
    expect(html).not.toContain("<b>");
  });

  it("--fork copies a session into a new one; --resume and -r continue the latest", async () => {
    const s = setup();
    const sessions = join(s.root, "sessions");
    const first = new RpcWorker(["--mode", "rpc", "--provider", "faux", "--session-dir", sessions], {
      cwd: s.cwd,
      env: s.env,
    });
    await first.request({ type: "set_session_name", name: "original" });
    const original = (await first.request({ type: "get_state" })).data.sessionFile as string;
    const from = first.received.length;
    await first.request({ type: "prompt", message: "hello" });
    await first.event("agent_end", undefined, from);
    first.closeStdin();
    await first.exited;
    const forked = new RpcWorker(
      ["--mode", "rpc", "--provider", "faux", "--session-dir", sessions, "--fork", original],
      { cwd: s.cwd, env: s.env },
    );
    const state = (await forked.request({ type: "get_state" })).data;
    expect(state.sessionFile).not.toBe(original);
    expect(state.sessionName).toBe("original");
    expect(JSON.parse(readFileSync(state.sessionFile, "utf8").split("\n")[0]!).parentSession).toBe(original);
    forked.closeStdin();
    await forked.exited;
    for (const flag of ["--resume", "-r"]) {
      const resumed = new RpcWorker(["--mode", "rpc", "--provider", "faux", "--session-dir", sessions, flag], {
        cwd: s.cwd,
        env: s.env,
      });
      expect((await resumed.request({ type: "get_state" })).data.sessionFile).toBe(state.sessionFile);
      resumed.closeStdin();
      await resumed.exited;
    }
  });

  it("an unknown name in --tools is no error and no warning: an extension may register it (pi 1.6.0)", async () => {
    const s = setup();
    const w = new RpcWorker(["--mode", "rpc", "--provider", "faux", "--no-session", "--tools", "read,teleport"], {
      cwd: s.cwd,
      env: s.env,
    });
    const state = await w.request({ type: "get_state" });
    expect(state.data.tools).toEqual(["read"]);
    w.closeStdin();
    await w.exited;
    // 0.73.1 warned; 1.6.0 (checked by running it) says nothing, since the allow-list also
    // names extension tools that register later.
    expect(w.stderr.join("")).not.toMatch(/teleport/);
  });
});
