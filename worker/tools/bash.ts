/**
 * The `bash` tool and its executor `runBash` (also behind the RPC `bash` command): one
 * shell command in its own process group, output merged and streamed, memory bounded
 * (a rolling tail in memory, everything else in a temp file), the whole tree killed on
 * abort or timeout.
 *
 * Why node:child_process and not execa: execa's termination (timeout, cancelSignal,
 * forceKillAfterDelay, cleanup) signals the direct child only, and its cleanup is off for
 * detached children, so group and descendant killing is ours either way; and its result
 * waits for every stdio pipe to close, so a backgrounded descendant that inherited the
 * pipe (`server &`) holds the command open long after bash exited (measured with execa
 * 9.6: `sleep 3 &` kept it pending 3 s). We need "exit, then drain briefly".
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import type { Static } from "typebox";
import * as Type from "typebox/type";
import { inheritAutogroupNice } from "../../shared/autogroup.js";
import type { AgentTool, ToolContext, ToolResult } from "../types.js";
import { bashStructuredContent } from "./bash-structured.js";
import { isDirectory } from "./path-utils.js";
import { killTree, releaseWhenEmpty, trackChild } from "./process-tree.js";
import { noticeNoReaper, parseReaperLine, reaperCommand, reaperSupport } from "./reaper.js";
import { currentSessionEnv, withSessionEnv } from "./session-env.js";
import { OutputTail, type OutputSnapshot, type OutputTruncation } from "./output-tail.js";
import { sandboxBashDenial } from "./sandbox-denial.js";
import { toolEnv } from "./tool-env.js";
import { insideSandbox, netCut } from "../../shared/sandbox.js";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize } from "./truncate.js";

/** Minimum time between two streamed updates of a running command. */
export const BASH_UPDATE_INTERVAL_MS = 100;

// After the shell exits, output still in the pipe is read until EOF; a descendant that
// inherited the pipe may never send EOF, so stop once the pipe has been quiet this long.
const EXIT_DRAIN_IDLE_MS = 100;

// How long the reaper gets to kill its subtree on abort or timeout before it goes by SIGKILL with it.
const REAPER_GRACE_MS = 1000;

/**
 * pi's `BashOperations`: where a command runs (the local shell by default; an
 * extension may run it over ssh or in a container). `exec` streams the output to
 * `onData` and resolves with the exit code, or rejects with `aborted` or
 * `timeout:SECONDS` when the signal or the timeout (in seconds) ended it.
 */
export interface BashOperations {
  exec(
    command: string,
    cwd: string,
    options: { onData: (data: Buffer) => void; signal?: AbortSignal; timeout?: number; env?: NodeJS.ProcessEnv },
  ): Promise<{ exitCode: number | null }>;
}

/** Options of `runBash`. */
export interface RunBashOptions {
  cwd: string;
  /** Aborting kills the command's whole process tree. */
  signal: AbortSignal;
  /** Kill the tree after this long; no limit when absent. */
  timeoutMs?: number;
  /** The accumulated, tail-truncated output so far; at most every `BASH_UPDATE_INTERVAL_MS`, plus once at the end. */
  onUpdate?: (tail: string, snapshot: OutputSnapshot) => void;
  /** Each piece of output as it arrives, decoded (UTF-8 characters never split), before any truncation. */
  onChunk?: (text: string) => void;
  /** The command's environment; the worker's tool environment (provider keys removed) by default. */
  env?: NodeJS.ProcessEnv;
  /** Run the command through these instead of the local shell (pi's `operations`). */
  operations?: BashOperations;
}

/** How a command ended. `output` is the tail-truncated output, without notices. */
export interface BashRunResult {
  output: string;
  /** Null when the shell was killed by a signal (see `signal`) or never ran. */
  exitCode: number | null;
  /** The signal that ended the shell, when one did. */
  signal: NodeJS.Signals | null;
  cancelled: boolean;
  timedOut: boolean;
  truncated: boolean;
  truncation: OutputTruncation;
  /** The complete output, present when `truncated`. */
  fullOutputPath?: string;
}

/**
 * Runs before the command, in bash: a background subshell that says its pid on the
 * worker's pipe (fd 3; SIGPIPE ignored, so a worker already gone cannot kill it before
 * it reads), then blocks reading it. EOF means the worker is gone (even after
 * SIGKILL) or has seen the group empty, so it kills the whole process group, background
 * jobs of a command that returned long ago included. Then the shell execs the command
 * itself (same pid, so `$$` is the group id) without fd 3.
 */
const WATCHDOG =
  `( trap "" PIPE; echo "$BASHPID" >&3; read -r _ <&3; kill -KILL -$$ 2>/dev/null ) >/dev/null 2>&1 & ` +
  `exec 3<&-; exec "$0" -c "$1"`;

let shellCache: string | undefined;

/** bash when there is one, else sh; looked up once. */
function shellPath(): string {
  if (shellCache === undefined) {
    const onPath = (process.env.PATH ?? "")
      .split(delimiter)
      .filter(Boolean)
      .map((dir) => join(dir, "bash"));
    shellCache = ["/bin/bash", "/usr/bin/bash", ...onPath].find((p) => existsSync(p)) ?? "sh";
  }
  return shellCache;
}

/** How a shell process ended. */
interface ShellExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  cancelled: boolean;
  timedOut: boolean;
}

/** Options of `spawnShell`. */
interface SpawnShellOptions {
  cwd: string;
  signal: AbortSignal;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Each output chunk in arrival order; a returned promise pauses reading until it settles. */
  onData: (chunk: Buffer) => void | Promise<void>;
}

/**
 * Run `command` with `bash -c` in its own process group, stdin closed, stdout and stderr
 * merged in arrival order. Resolves when the shell has exited and its output is drained;
 * rejects only when the command could not be started. The child is in the
 * `process-tree` registry while it runs.
 */
async function spawnShell(command: string, options: SpawnShellOptions): Promise<ShellExit> {
  const { cwd, signal, timeoutMs } = options;
  if (!isDirectory(cwd)) throw new Error(`Working directory does not exist: ${cwd}; cannot run the command.`);
  if (signal.aborted) return { exitCode: null, signal: null, cancelled: true, timedOut: false };

  const shell = shellPath();
  // In a strict sandbox the command gets a network namespace of its own (loopback only),
  // from a nested bwrap (or unshare, for root) that shares the worker's PID namespace.
  const netless = insideSandbox() === "strict" ? netCut() : null;
  if (netless && !netless.ok)
    throw new Error(`Cannot cut the command's network in the strict sandbox: ${netless.reason}`);
  // Inside any sandbox the worker's death ends its PID namespace, and every command with it.
  // Outside, the reaper keeps every process the command starts below it; where it cannot
  // run, the bash watchdog kills the command's group when the worker dies.
  const unboxed = !insideSandbox() && process.platform !== "win32";
  const reaper = unboxed ? reaperSupport() : null;
  if (reaper && !reaper.ok) noticeNoReaper(reaper.reason);
  const guarded = unboxed && !reaper?.ok && shell.endsWith("bash");
  const [file, args] = netless?.ok
    ? [netless.file, [...netless.args, shell, "-c", command]]
    : reaper?.ok
      ? reaperCommand(reaper, shell, ["-c", command])
      : [shell, guarded ? ["-c", WATCHDOG, shell, command] : ["-c", command]];
  const control = guarded || reaper?.ok === true;
  const child = spawn(file, args, {
    cwd,
    detached: process.platform !== "win32",
    // fd 3 is the watchdog's or the reaper's pipe (not stdin: Node closes a child's stdin when it exits).
    stdio: control ? ["ignore", "pipe", "pipe", "pipe"] : ["ignore", "pipe", "pipe"],
    env: options.env ?? toolEnv(),
  });
  // The watchdog's pipe: only this process holds our end, so the kernel closes it when
  // the worker dies in any way (SIGKILL included) and the watchdog then kills the
  // command's process group. Closed by us once the group has no member but the watchdog.
  // The reaper's says when the command's shell exited (the reaper itself lives on while
  // anything the command started runs).
  const controlPipe = control ? (child.stdio[3] as Readable) : null;
  let watchdogPid: number | undefined;
  let reported: ((status: [number | null, NodeJS.Signals | null]) => void) | undefined;
  let reportedStatus: [number | null, NodeJS.Signals | null] | undefined;
  if (controlPipe) {
    let said = "";
    controlPipe.setEncoding("utf8");
    controlPipe.on("data", (text: string) => {
      said += text;
      if (guarded) {
        const pid = Number.parseInt(said, 10);
        if (said.includes("\n") && Number.isInteger(pid)) watchdogPid = pid;
        return;
      }
      const lines = said.split("\n");
      said = lines.pop() ?? "";
      for (const line of lines) {
        const told = parseReaperLine(line);
        if (told?.kind === "ready" && !told.subreaper)
          noticeNoReaper("the kernel refused prctl(PR_SET_CHILD_SUBREAPER)");
        if (told?.kind === "exit" || told?.kind === "signal") {
          reportedStatus = told.kind === "exit" ? [told.code, null] : [null, told.signal];
          reported?.(reportedStatus);
        }
      }
    });
    controlPipe.on("error", () => undefined);
  }
  const pid = child.pid;
  if (pid === undefined) {
    const error = await new Promise<Error>((resolve) => child.once("error", resolve));
    throw new Error(`Could not start ${shell}: ${error.message}`);
  }
  trackChild(pid);
  // Its own session is its own autogroup: keep it as low as this (de-prioritised) worker.
  inheritAutogroupNice(pid);

  let cancelled = false;
  let timedOut = false;
  const kill = () => {
    if (!reaper?.ok) return killTree(pid, "SIGKILL");
    // The reaper kills its subtree and waits for each process, so none is left a zombie;
    // one that cannot (stopped, or gone) has its tree killed from here.
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // gone: it has said its last
    }
    setTimeout(() => {
      if (reportedStatus === undefined && child.exitCode === null && child.signalCode === null)
        killTree(pid, "SIGKILL");
    }, REAPER_GRACE_MS).unref();
  };
  const onAbort = () => {
    cancelled = true;
    kill();
  };
  signal.addEventListener("abort", onAbort, { once: true });
  const timer =
    timeoutMs !== undefined && timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          kill();
        }, timeoutMs)
      : undefined;

  const streams = [child.stdout!, child.stderr!];
  let exited = false;
  let drainTimer: NodeJS.Timeout | undefined;
  let stopDraining = () => {};
  let paused = false;
  let chunks = 0;
  const armDrainTimer = () => {
    if (!exited || paused) return;
    clearTimeout(drainTimer);
    drainTimer = setTimeout(() => {
      // A stalled event loop fires timers before reading the pipe: give the poll phase
      // one turn, and stop only if it brought nothing.
      const seen = chunks;
      setImmediate(() => {
        if (chunks === seen && !paused) stopDraining();
      });
    }, EXIT_DRAIN_IDLE_MS);
  };
  for (const stream of streams) {
    stream.on("data", (chunk: Buffer) => {
      chunks++;
      const wait = options.onData(chunk);
      if (wait && !paused) {
        paused = true;
        for (const s of streams) s.pause();
        clearTimeout(drainTimer);
        const resume = () => {
          paused = false;
          for (const s of streams) s.resume();
          armDrainTimer();
        };
        wait.then(resume, resume);
      }
      armDrainTimer();
    });
  }

  const [exitCode, exitSignal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
    let status: [number | null, NodeJS.Signals | null] = [null, null];
    stopDraining = () => {
      for (const s of streams) s.destroy();
      resolve(status);
    };
    // Done when the shell has exited and its stdout and stderr have closed: the child's own
    // "close" also waits for the watchdog's (or the reaper's) pipe, which stays open until
    // the group is empty.
    let open = streams.length;
    for (const stream of streams)
      stream.once("close", () => {
        open--;
        if (open === 0 && exited) resolve(status);
      });
    const shellExited = (code: number | null, sig: NodeJS.Signals | null) => {
      if (exited) return;
      exited = true;
      status = [code, sig];
      if (open === 0) resolve(status);
      else armDrainTimer();
    };
    // Under the reaper the shell's exit is what the reaper says; the reaper's own exit
    // (all it adopted gone) comes later, or first when it was killed before it could say.
    if (reaper?.ok) {
      reported = ([code, sig]) => shellExited(code, sig);
      if (reportedStatus) reported(reportedStatus);
    }
    child.once("exit", (code, sig) => {
      // The reaper says the shell's status on its pipe just before it exits itself; its own
      // exit event can still come first. Read the pipe to its end before taking the
      // reaper's status for the shell's (`exit 1` came back as 0 on a loaded machine).
      if (!reaper?.ok || !controlPipe || controlPipe.closed) shellExited(...(reportedStatus ?? [code, sig]));
      else controlPipe.once("close", () => shellExited(...(reportedStatus ?? [code, sig])));
    });
    child.once("close", (code, sig) => resolve(reportedStatus ?? [code, sig]));
    // Emitted only if the process could not be signalled or messaged; it has still run.
    child.on("error", () => undefined);
  });

  clearTimeout(drainTimer);
  clearTimeout(timer);
  signal.removeEventListener("abort", onAbort);
  // Background jobs of the command stay in its group: teardown must still find them.
  // Under the reaper its group is the reaper alone, which lives as long as anything it adopted.
  releaseWhenEmpty(pid, {
    ...(guarded ? { watchdog: () => watchdogPid } : {}),
    onEmpty: () => controlPipe?.destroy(),
  });
  return { exitCode, signal: exitSignal, cancelled, timedOut };
}

/**
 * Run `command` through extension-supplied operations, with pi's contract: a rejection
 * `aborted` (or any rejection once the signal fired) is a cancel, `timeout:N` a timeout.
 */
async function execOperations(
  operations: BashOperations,
  command: string,
  options: RunBashOptions,
  onData: (chunk: Buffer) => void,
): Promise<ShellExit> {
  const { signal, timeoutMs } = options;
  if (signal.aborted) return { exitCode: null, signal: null, cancelled: true, timedOut: false };
  try {
    const r = await operations.exec(command, options.cwd, {
      onData,
      signal,
      ...(timeoutMs !== undefined ? { timeout: timeoutMs / 1000 } : {}),
      env: options.env ?? toolEnv(),
    });
    return { exitCode: r?.exitCode ?? null, signal: null, cancelled: signal.aborted, timedOut: false };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (signal.aborted || message === "aborted")
      return { exitCode: null, signal: null, cancelled: true, timedOut: false };
    if (message.startsWith("timeout:")) return { exitCode: null, signal: null, cancelled: false, timedOut: true };
    throw error;
  }
}

/**
 * Run `command` (in the local shell, or through `operations`) and collect its output
 * with bounded memory. Resolves when the command is over (a non-zero exit, an abort or
 * a timeout resolve too, flagged in the result); rejects only when it could not start.
 */
export async function runBash(command: string, options: RunBashOptions): Promise<BashRunResult> {
  const { onUpdate } = options;
  const output = new OutputTail();

  let lastUpdate = 0;
  let updateTimer: NodeJS.Timeout | undefined;
  const emitUpdate = () => {
    updateTimer = undefined;
    lastUpdate = Date.now();
    const snap = output.snapshot();
    onUpdate?.(snap.text, snap);
  };
  const scheduleUpdate = () => {
    if (!onUpdate || updateTimer) return;
    const wait = BASH_UPDATE_INTERVAL_MS - (Date.now() - lastUpdate);
    if (wait <= 0) emitUpdate();
    else updateTimer = setTimeout(emitUpdate, wait);
  };
  const decoder = options.onChunk ? new StringDecoder("utf8") : undefined;
  const onData = (chunk: Buffer): Promise<void> | undefined => {
    if (decoder) {
      const text = decoder.write(chunk);
      if (text !== "") options.onChunk!(text);
    }
    const flowing = output.append(chunk);
    scheduleUpdate();
    return flowing ? undefined : new Promise<void>((resolve) => output.onDrain(resolve));
  };

  let exit: ShellExit;
  try {
    exit = options.operations
      ? await execOperations(
          options.operations,
          command,
          options,
          (chunk) => void onData(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)),
        )
      : await spawnShell(command, {
          cwd: options.cwd,
          signal: options.signal,
          onData,
          ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
          ...(options.env ? { env: options.env } : {}),
        });
  } finally {
    clearTimeout(updateTimer);
  }
  await output.finish();
  const rest = decoder?.end();
  if (rest) options.onChunk!(rest);
  if (onUpdate) emitUpdate();
  const snap = output.snapshot();
  return {
    output: snap.text,
    ...exit,
    truncated: snap.truncation.truncated,
    truncation: snap.truncation,
    ...(snap.fullOutputPath ? { fullOutputPath: snap.fullOutputPath } : {}),
  };
}

/** The longest timeout a timer takes (ms), pi's bound for a local command. */
const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * A local command's timeout in ms, checked as pi 1.6 checks it when the command would
 * start (its schema takes any number): finite, above zero, at most MAX_TIMEOUT_MS.
 */
function localTimeoutMs(timeout: number | undefined): number | undefined {
  if (timeout === undefined) return undefined;
  if (!Number.isFinite(timeout) || timeout <= 0) throw new Error("Invalid timeout: must be a finite number of seconds");
  const ms = timeout * 1000;
  if (ms > MAX_TIMEOUT_MS) throw new Error(`Invalid timeout: maximum is ${MAX_TIMEOUT_MS / 1000} seconds`);
  return ms;
}

/**
 * pi's `createLocalBashOperations`: the local shell backend (own process group, the
 * whole tree killed on abort or timeout) behind the `BashOperations` contract, for
 * extensions that wrap or rewrite commands in `user_bash`.
 */
export function createLocalBashOperations(): BashOperations {
  return {
    async exec(command, cwd, { onData, signal, timeout, env }) {
      const timeoutMs = localTimeoutMs(timeout);
      const exit = await spawnShell(command, {
        cwd,
        signal: signal ?? new AbortController().signal,
        onData: (chunk) => onData(chunk),
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
        ...(env ? { env } : {}),
      });
      if (exit.cancelled) throw new Error("aborted");
      if (exit.timedOut) throw new Error(`timeout:${timeout}`);
      return { exitCode: exit.exitCode };
    },
  };
}

/** Arguments of `bash`. */
export const BashParams = Type.Object({
  command: Type.String({ description: "Shell command to execute" }),
  timeout: Type.Optional(Type.Number({ description: "Timeout in seconds (optional, no default timeout)" })),
});
/** Arguments of `bash`, validated. */
export type BashParams = Static<typeof BashParams>;

/** What `bash` reports besides its text, when the output was truncated. */
export interface BashDetails {
  truncation?: OutputTruncation;
  fullOutputPath?: string;
}

/** The output as the model sees it: the tail, then a notice saying what was cut and where the rest is. */
function describeOutput(run: BashRunResult, emptyText: string): string {
  const t = run.truncation;
  let text = run.output.length > 0 ? run.output : emptyText;
  if (!t.truncated) return text;
  const where = run.fullOutputPath ? ` Full output: ${run.fullOutputPath}` : "";
  const first = t.totalLines - t.outputLines + 1;
  if (t.partialLine) {
    text += `\n\n[Showing the last ${formatSize(t.outputBytes)} of line ${t.totalLines}.${where}]`;
  } else {
    const limit = t.truncatedBy === "bytes" ? ` (${formatSize(DEFAULT_MAX_BYTES)} limit)` : "";
    text += `\n\n[Showing lines ${first}-${t.totalLines} of ${t.totalLines}${limit}.${where}]`;
  }
  return text;
}

function withStatus(text: string, status: string): string {
  return text.length > 0 ? `${text}\n\n${status}` : status;
}

/** What a spawn hook sees and returns (pi's `BashSpawnContext`). */
export interface BashSpawnContext {
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** Options of a `bash` tool (pi's `BashToolOptions`). */
export interface BashToolOptions {
  /** Where commands run; the local shell by default. */
  operations?: BashOperations;
  /** Shell lines run before every command (joined with a newline). */
  commandPrefix?: string;
  /** Rewrites the command, working directory and environment right before each run. */
  spawnHook?: (context: BashSpawnContext) => BashSpawnContext;
  /** False keeps pi's `PI_SESSION_*`, `PI_PROVIDER`, `PI_MODEL`, `PI_REASONING_LEVEL` out of the commands (they are removed, not inherited). */
  exposeSessionEnvironment?: boolean;
}

/** A `bash` tool; the options are pi's, for extensions that build their own (`createBashTool`). */
export function createBashTool(options: BashToolOptions = {}): AgentTool<typeof BashParams> {
  return {
    name: "bash",
    label: "bash",
    description:
      `Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated ` +
      `to last ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first). If truncated, ` +
      "full output is saved to a temp file. Optionally provide a timeout in seconds.",
    snippet: "Execute bash commands (ls, grep, find, etc.)",
    // As pi 1.6: the hint only where the commands get the session's variables.
    ...(options.exposeSessionEnvironment === false
      ? {}
      : { guidelines: ["You can inspect PI_* environment variables for current model and session details."] }),
    parameters: BashParams,
    // A codemode script gets the structured output, also for a non-zero exit (pi 1.6).
    outputSchema: {
      type: "object",
      properties: {
        output: { type: "string" },
        truncated: { type: "boolean" },
        full_output_path: { type: "string" },
        exit_code: { type: "number" },
        wall_time_seconds: { type: "number" },
      },
      required: ["output", "truncated", "exit_code", "wall_time_seconds"],
    },
    execute: (args, ctx) => executeBash(args, ctx, options),
  };
}

/** Run a shell command for the model. */
export const bashTool = createBashTool();

async function executeBash(
  args: BashParams,
  ctx: ToolContext,
  options: BashToolOptions,
): Promise<ToolResult<BashDetails>> {
  const command = options.commandPrefix ? `${options.commandPrefix}\n${args.command}` : args.command;
  // As pi: the session's variables are in the environment before the spawn hook sees it.
  const session = options.exposeSessionEnvironment === false ? undefined : currentSessionEnv();
  const base: BashSpawnContext = { command, cwd: ctx.cwd, env: withSessionEnv(toolEnv(), session) };
  const spawnAs = options.spawnHook ? options.spawnHook(base) : base;
  ctx.onUpdate?.({ content: [] });
  // Operations of an extension get the timeout as the model gave it, as in pi.
  const timeoutMs =
    options.operations && args.timeout !== undefined ? args.timeout * 1000 : localTimeoutMs(args.timeout);
  const startedAt = performance.now();
  const run = await runBash(spawnAs.command, {
    cwd: spawnAs.cwd,
    env: spawnAs.env,
    ...(options.operations ? { operations: options.operations } : {}),
    signal: ctx.signal,
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(ctx.onUpdate
      ? {
          onUpdate: (tail: string, snap: OutputSnapshot) =>
            ctx.onUpdate?.({
              content: [{ type: "text", text: tail }],
              details: snap.truncation.truncated
                ? { truncation: snap.truncation, fullOutputPath: snap.fullOutputPath }
                : {},
            }),
        }
      : {}),
  });
  if (run.cancelled) throw new Error(withStatus(describeOutput(run, ""), "Command aborted"));
  if (run.timedOut)
    throw new Error(withStatus(describeOutput(run, ""), `Command timed out after ${args.timeout} seconds`));
  if (run.exitCode === null)
    throw new Error(withStatus(describeOutput(run, ""), `Command killed by signal ${run.signal ?? "unknown"}`));
  const details: BashDetails | undefined = run.truncated
    ? { truncation: run.truncation, ...(run.fullOutputPath ? { fullOutputPath: run.fullOutputPath } : {}) }
    : undefined;
  const structuredContent = await bashStructuredContent(run, run.exitCode, startedAt);
  // As pi 1.6: a non-zero exit is an error result, not a throw, so it keeps its details and data.
  const failed = run.exitCode !== 0;
  const output = describeOutput(run, "(no output)");
  const denial = failed ? sandboxBashDenial(output, run.exitCode) : undefined;
  const status = `Command exited with code ${run.exitCode}`;
  const text = failed ? withStatus(output, denial ? `${status}\n${denial}` : status) : output;
  return {
    content: [{ type: "text", text }],
    ...(details ? { details } : {}),
    structuredContent,
    ...(failed ? { isError: true } : {}),
  };
}
