/**
 * Upstream pi 0.73.1 as an oracle: the installed package's paths, and one way to start
 * either implementation (`ours` or `upstream`) as `pi --mode rpc` on the same mock model
 * server with its own temp home and project, so a test runs the same RPC script on both and
 * compares what they end with. Homes: ours reads PI_ORCH_HOME, upstream PI_CODING_AGENT_DIR
 * (and PI_OFFLINE so it fetches nothing).
 */
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { MockModelServer } from "./mock-model-server.js";
import { RpcWorker, tempDir } from "./rpc-worker.js";

/** The installed upstream package (npm test's pretest installs it into test/upstream). */
export const UPSTREAM_PACKAGE = resolve(import.meta.dirname, "../upstream/node_modules/@mariozechner/pi-coding-agent");
/** Upstream pi's CLI entry. */
export const UPSTREAM_CLI = join(UPSTREAM_PACKAGE, "dist/cli.js");
/** Whether the upstream package is installed (oracle tests skip without it). */
export const upstreamInstalled = existsSync(UPSTREAM_CLI);

/** Path of one of pi's example extensions: `name` is a file without `.ts`, or a folder/file path. */
export function upstreamExample(name: string): string {
  return join(UPSTREAM_PACKAGE, "examples/extensions", name.includes("/") ? name : `${name}.ts`);
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
}

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
  opts.prepare?.(home.path);
  opts.prepareProject?.(project.path);
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
    ...(opts.examples ?? []).flatMap((e) => ["-e", upstreamExample(e)]),
    ...extra,
  ];
  const homeEnv = impl === "ours" ? { PI_ORCH_HOME: home.path } : { PI_CODING_AGENT_DIR: home.path, PI_OFFLINE: "1" };
  const w = new RpcWorker(args, {
    cwd: project.path,
    env: { ...homeEnv, ...opts.env },
    ...(impl === "upstream" ? { bin: [process.execPath, UPSTREAM_CLI] } : {}),
  });
  return { w, home: home.path, project: project.path };
}
