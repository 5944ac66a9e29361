/**
 * What a `pi-orch` start loads: the commands' registrations (names, flags, help) only, and
 * each command's own work when it runs (cli/commands/: heavy modules are imported inside
 * the actions). `--version`, `--help` and a usage error load no schema, no typebox and no
 * client; `list`, `status` and `rpc` load the client and its schemas but never the
 * supervisor, execa, the packages code, the run/queue machinery or another command's
 * implementation; `serve` loads the supervisor but not execa until an agent needs a
 * worktree. Each command runs with a loader hook that notes every file it loads
 * (test/support/module-log-hooks.mjs); a loaded file of dist/ is checked by the sources its
 * source map names.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, World } from "../support/orch-cli.js";
import { tempDir } from "../support/rpc-worker.js";

const REGISTER = pathToFileURL(resolve(import.meta.dirname, "../support/module-log-register.mjs")).href;
const DIST = resolve(import.meta.dirname, "../../dist");

/** The supervisor: only `serve` (and `run`, `demo`) load it. */
const SUPERVISOR = [/^supervisor\/(supervisor|agent-actor)\.ts$/, /^cli\/serve\/supervisor-server\.ts$/];
/** Loaded by none of them, `serve` included: execa, the worker's packages, run and queue, the TUI, other commands' work. */
const NOT_AT_START = [
  /node_modules\/execa\//,
  /node_modules\/bullmq\//,
  /^supervisor\/worktrees\.ts$/,
  /^worker\//,
  /^cli\/run\/(runner|run-command|queue-commands|queue-jobs|tasks|report)\.ts$/,
  /^cli\/tui\//,
  /^cli\/commands\/(prompt-actions|demo-run|transcript)\.ts$/,
  /^cli\/fleet-packages\.ts$/,
];
/** Never loaded by the everyday commands. */
const NEVER = [...SUPERVISOR, ...NOT_AT_START];
/** Not loaded by a command that does not talk to a supervisor either: the client, the schemas, typebox. */
const NOT_WITHOUT_CLIENT = [/node_modules\/typebox\//, /^shared\/schema\//, /^shared\/validate\.ts$/, /^ipc\//];

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The sources (from their source maps) of every file of dist/ named in a module log. */
function distSources(log: string): Set<string> {
  const sources = new Set<string>();
  for (const url of (existsSync(log) ? readFileSync(log, "utf8") : "").split("\n")) {
    if (!url) continue;
    const file = fileURLToPath(url);
    if (!file.startsWith(`${DIST}/`) || !existsSync(`${file}.map`)) continue;
    const map = JSON.parse(readFileSync(`${file}.map`, "utf8")) as { sources: string[] };
    for (const s of map.sources) sources.add(s.replace(/^(\.\.\/)+/, ""));
  }
  return sources;
}

/** Run `pi-orch ARGS` with the loader hook: its exit code, and the sources of every file of dist/ it loaded. */
async function loaded(world: World, args: string[]): Promise<{ code: number | null; sources: Set<string> }> {
  const log = moduleLog();
  const code = await new Promise<number | null>((done, fail) => {
    const child = spawn(
      process.execPath,
      ["--import", REGISTER, BIN, "--home", world.home.path, "--no-autostart", ...args],
      {
        cwd: world.cwd.path,
        env: { ...world.env, PI_ORCH_MODULE_LOG: log },
        stdio: "ignore",
      },
    );
    child.on("error", fail);
    child.on("exit", (c) => done(c));
  });
  return { code, sources: distSources(log) };
}

/** A module log in a temp folder of its own, removed after the test. */
function moduleLog(): string {
  const dir = tempDir("pi-orch-modules-");
  cleanups.push(dir.cleanup);
  return join(dir.path, "modules.log");
}

function offending(sources: Set<string>, patterns: RegExp[]): string[] {
  return [...sources].filter((s) => patterns.some((p) => p.test(s)));
}

describe("what a pi-orch start loads", () => {
  it("--version, --help and a usage error load the registrations only", async () => {
    const world = new World();
    cleanups.push(() => world.cleanup());
    for (const args of [["--version"], ["--help"], ["list", "--no-such-flag"], ["spawn", "--help"]]) {
      const { code, sources } = await loaded(world, args);
      expect(code, args.join(" ")).toBe(args[1] === "--no-such-flag" ? 2 : 0);
      // The registrations themselves are there: the hook saw the bundle.
      expect(sources.has("cli/commands/list.ts"), args.join(" ")).toBe(true);
      expect(offending(sources, [...NEVER, ...NOT_WITHOUT_CLIENT]), args.join(" ")).toEqual([]);
    }
  });

  it("list, status and rpc load the client and its schemas, not the supervisor, execa or run", async () => {
    const world = new World();
    cleanups.push(() => world.cleanup());
    await world.serve();
    await world.ok(["spawn", "--name", "alpha", "--provider", "faux"]);
    for (const args of [["list"], ["list", "--json"], ["status", "alpha"], ["rpc", "alpha", '{"type":"get_state"}']]) {
      const { code, sources } = await loaded(world, args);
      expect(code, args.join(" ")).toBe(0);
      expect(sources.has("ipc/client.ts"), args.join(" ")).toBe(true);
      expect(offending(sources, NEVER), args.join(" ")).toEqual([]);
    }
  });

  it("serve loads the supervisor, not execa (until an agent has a worktree) nor the commands' work", async () => {
    const log = moduleLog();
    // The variable reaches every process; only serve has the hook that writes to it.
    const world = new World({ PI_ORCH_MODULE_LOG: log });
    cleanups.push(() => world.cleanup());
    await world.serve([], ["--import", REGISTER]);
    await world.ok(["spawn", "--name", "alpha", "--provider", "faux"]);
    const sources = distSources(log);
    expect(sources.has("supervisor/supervisor.ts")).toBe(true);
    expect(offending(sources, NOT_AT_START)).toEqual([]);
  });
});
