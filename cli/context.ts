/**
 * What every `pi-orch` command shares: the home folder, a client connection (starting
 * a supervisor in the background when none runs), output that respects `--json` and
 * `NO_COLOR`, and errors mapped to exit codes (0 ok, 1 failure, 2 usage).
 */
import { spawn } from "node:child_process";
import { closeSync, fstatSync, mkdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { IpcClient } from "../ipc/client.js";
import { logsDir, piOrchHome, supervisorLogPath } from "../shared/paths.js";
import { piOrchCommand } from "../shared/cli-hint.js";
import { openLogNoFollow } from "../shared/safe-open.js";
import { terminalText } from "../shared/terminal-text.js";
import { nodeFlagsHint, nodeFlagsProblem, supervisorNodeFlags } from "./serve/node-flags.js";

/** A failure the CLI reports with this exit code and message (no stack trace). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}

/** Options every command accepts (declared on the root program). */
export interface GlobalOptions {
  home?: string;
  autostart?: boolean;
}

/** Shared helpers handed to each command's `register`. */
export interface CliContext {
  /** The pi-orch home: `--home`, else `$PI_ORCH_HOME`, else `~/.pi-orch`. */
  home(): string;
  /**
   * The home when it came from `--home` (absolute), else undefined: hints then say
   * `pi-orch --home X ...` (see piOrchCommand). A `PI_ORCH_HOME` home needs no repeating.
   */
  homeFlag(): string | undefined;
  /** Connect to the supervisor, starting one in the background unless `--no-autostart`. */
  client(opts?: { autostart?: boolean }): Promise<IpcClient>;
  /** Print data as JSON (one document) to stdout. */
  json(value: unknown): void;
  /** Print a line to stdout; control characters shown as escapes (`shared/terminal-text.ts`). */
  out(line?: string): void;
  /** Print text (no newline added) to stdout, made as safe as `out`. For transcripts. */
  write(text: string): void;
  /** Whether `color` writes colour codes. */
  colour: boolean;
  /** Print a line to stderr, made as safe as `out`. */
  err(line: string): void;
  /** Colour helpers; identity functions when `NO_COLOR` is set or stdout is not a TTY. */
  color: Colors;
  /** The path of the built `pi-orch` bin (to start `serve` in the background). */
  selfBin: string;
}

/** ANSI colours that switch off under `NO_COLOR` or without a TTY. */
export interface Colors {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
}

/** Colour helpers for a stream. */
export function colors(enabled: boolean): Colors {
  const wrap = (open: number, close: number) => (s: string) => (enabled ? `\x1b[${open}m${s}\x1b[${close}m` : s);
  return {
    bold: wrap(1, 22),
    dim: wrap(2, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
  };
}

/** True when colour output is wanted on stdout. */
export function colorEnabled(env: NodeJS.ProcessEnv = process.env, isTTY = Boolean(process.stdout.isTTY)): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0") return true;
  return isTTY;
}

/** Build the context from the root program's options (read lazily, after parsing). */
export function createContext(globals: () => GlobalOptions, selfBin: string): CliContext {
  const home = () => {
    const g = globals();
    return g.home ? resolve(g.home) : piOrchHome();
  };
  // `pi-orch logs x | head` closes stdout early: that is the reader's choice, not a failure.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw err;
  });
  const colour = colorEnabled();
  // Absolute: a hint naming it then works from any folder.
  const homeFlag = () => (globals().home ? home() : undefined);
  return {
    home,
    homeFlag,
    selfBin,
    color: colors(colour),
    colour,
    json: (value) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`),
    out: (line = "") => process.stdout.write(`${terminalText(line, colour)}\n`),
    write: (text) => process.stdout.write(terminalText(text, colour)),
    err: (line) => process.stderr.write(`${terminalText(line, colour)}\n`),
    client: async (opts = {}) => {
      refuseFromAgent(process.env);
      const autostart = opts.autostart ?? globals().autostart ?? true;
      // Loaded here, not at start: the client brings the wire schemas and typebox, which
      // `--help`, `--version` and a usage error never need (cli/pi-orch.ts).
      const { IpcClient, IpcClientError } = await import("../ipc/client.js");
      try {
        return await IpcClient.connect({ home: home(), homeFlag: homeFlag() });
      } catch (err) {
        if (!(err instanceof IpcClientError) || err.code !== "no_supervisor") throw err;
        if (!autostart) {
          throw new CliError(
            `no supervisor is running for ${home()}; start one with: ${piOrchCommand("serve", homeFlag())} (or drop --no-autostart)`,
          );
        }
        return startInBackground(home(), homeFlag(), selfBin);
      }
    },
  };
}

/**
 * Start `pi-orch serve` detached, its output in `$home/logs/supervisor.log`, and wait
 * until its socket answers (up to 10 s).
 */
async function startInBackground(home: string, homeFlag: string | undefined, selfBin: string): Promise<IpcClient> {
  const { IpcClient, IpcClientError } = await import("../ipc/client.js");
  const problem = nodeFlagsProblem(process.env);
  if (problem) throw new CliError(problem);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  mkdirSync(logsDir(home), { recursive: true, mode: 0o700 });
  const logPath = supervisorLogPath(home);
  // O_NOFOLLOW: a symlink planted at the log's place must not redirect our appends.
  const log = openLogNoFollow(logPath);
  const logStart = fstatSync(log).size;
  const child = spawn(process.execPath, [...supervisorNodeFlags(), selfBin, "--home", home, "serve"], {
    detached: true,
    stdio: ["ignore", log, log],
    env: process.env,
  });
  // The child holds its own copy of the log descriptor; ours would leak in this process.
  closeSync(log);
  child.unref();
  let exited: number | null = null;
  child.once("exit", (code) => (exited = code ?? 1));
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return await IpcClient.connect({ home, homeFlag });
    } catch (err) {
      if (!(err instanceof IpcClientError) || err.code !== "no_supervisor") throw err;
      if (exited !== null || Date.now() > deadline) {
        // The supervisor's own words say what to fix (e.g. "run chmod 700 HOME"); show them here.
        const said = lastLogLine(logPath, logStart);
        const hint = exited !== null ? nodeFlagsHint(process.env) : "";
        throw new CliError(
          `could not start a supervisor for ${home}${said ? `: ${said.replace(/^pi-orch( serve)?: /, "")}` : ""} (log: ${logPath})${hint}`,
        );
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** The last non-empty line written to a log after `from` bytes, or null. */
export function lastLogLine(path: string, from: number): string | null {
  try {
    const text = readFileSync(path).subarray(from).toString("utf8");
    return (
      text
        .split("\n")
        .map((l) => l.trim())
        .filter(Boolean)
        .at(-1) ?? null
    );
  } catch {
    return null;
  }
}

/**
 * Run a command body and turn failures into an exit code: `CliError` and supervisor
 * errors print their message (they are written for users); anything else says it is a bug.
 */
export async function runAction(ctx: CliContext, body: () => Promise<number | void>): Promise<void> {
  try {
    const code = await body();
    process.exitCode = code ?? 0;
  } catch (err) {
    if (err instanceof CliError) {
      ctx.err(`pi-orch: ${err.message}`);
      process.exitCode = err.exitCode;
    } else if (err instanceof Error && typeof (err as Error & { code?: unknown }).code === "string") {
      // IpcClientError and OrchError carry a code and a message written for users.
      ctx.err(`pi-orch: ${err.message}`);
      const code = (err as Error & { code: string }).code;
      process.exitCode = code === "invalid" || code === "invalid_request" || code === "bad_request" ? 2 : 1;
    } else {
      ctx.err(
        `pi-orch: unexpected failure (a bug; please report it): ${err instanceof Error ? err.stack : String(err)}`,
      );
      process.exitCode = 1;
    }
  }
}

/**
 * Refuse to talk to a supervisor from inside an agent: the supervisor marks every process
 * of an agent with `PI_ORCH_AGENT`, so a model told (by a file it read, a web page) to run
 * `pi-orch rpc other get_messages` or `pi-orch stop other` is refused with a clear word
 * before anything is sent. A program that clears the variable is refused by the socket
 * itself (cli/serve/supervisor-server.ts asks the kernel who connected); the wall is the
 * sandbox (issue 31). `PI_ORCH_ALLOW_AGENT_CONTROL=1` in the environment of `serve` lets
 * agents run pi-orch (an agent that orchestrates others).
 */
export function refuseFromAgent(env: NodeJS.ProcessEnv): void {
  const agent = env.PI_ORCH_AGENT;
  if (!agent || env.PI_ORCH_ALLOW_AGENT_CONTROL === "1") return;
  throw new CliError(
    `refusing to control agents from inside agent "${agent}" (its tools run with PI_ORCH_AGENT set): ` +
      "an agent must not read, steer or stop the others; to allow it, start pi-orch serve with PI_ORCH_ALLOW_AGENT_CONTROL=1",
  );
}
