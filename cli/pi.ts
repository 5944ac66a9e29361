#!/usr/bin/env node
/**
 * The `pi` worker: one agent session, in RPC mode (`--mode rpc`, for supervisors
 * and IDEs) or print mode (`-p`, one task then exit).
 */
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { THINKING_LEVELS, type ThinkingLevel } from "../shared/schema/messages.js";
import { splitExtensionFlags } from "../worker/extensions/flags.js";
import { loadExtensions } from "../worker/extensions/loader.js";
import { resolveTrust } from "../worker/extensions/trust.js";
import { runPrintMode } from "../worker/modes/print.js";
import { DEFAULT_UI } from "../worker/modes/rpc-ui.js";
import { runRpcMode } from "../worker/modes/rpc.js";
import { guardStdout } from "../worker/modes/stdout-guard.js";
import { AgentSession, type WorkerOptions } from "../worker/core/agent-session.js";
import { killAllChildren } from "../worker/tools/process-tree.js";
import { packageVersion } from "./version.js";

interface CliOptions {
  mode: "text" | "json" | "rpc";
  print?: boolean;
  provider?: string;
  model?: string;
  thinking?: ThinkingLevel;
  apiKey?: string;
  tools?: string | false;
  systemPrompt?: string;
  appendSystemPrompt?: string[];
  contextFiles: boolean;
  fauxScript?: string;
  home?: string;
  retryDelayMs?: number;
  maxLineBytes?: number;
  session?: string | false;
  continue?: boolean;
  sessionDir?: string;
  compactionReserveTokens?: number;
  compactionKeepTokens?: number;
  extension?: string[];
  trust?: boolean;
  bashInheritKeys?: boolean;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Commander prints an InvalidArgumentError with the option's name and value, then exits 2. */
function wholeNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isInteger(n) || n < 0) throw new InvalidArgumentError("Expected a whole number (0 or more).");
  return n;
}

function buildProgram(): Command {
  return new Command("pi")
    .description("A pi-compatible coding agent: one session, driven over RPC or run once with -p.")
    .version(packageVersion(), "-v, --version", "print the version")
    .argument("[message...]", "the task (print mode); read from stdin when piped")
    .addOption(new Option("--mode <mode>", "output mode").choices(["text", "json", "rpc"]).default("text"))
    .option("-p, --print", "run the task once, print the answer, exit (0 ok, 1 error or abort)")
    .option("--provider <name>", "model provider: anthropic, openai, faux, or one from models.json")
    .option("--model <id>", "model id, or provider/id")
    .addOption(new Option("--thinking <level>", "thinking level").choices(THINKING_LEVELS))
    .option("--api-key <key>", "API key for the provider (else env or models.json)")
    .option("--tools <list>", "active tools: a list (read,bash) or changes to the default (+grep,-write)")
    .option("--no-tools", "no tools at all")
    .option("--system-prompt <text>", "replace the base system prompt")
    .option("--append-system-prompt <text|file>", "append text (or a file's content) to the system prompt; repeatable", collect)
    .option("--no-context-files", "do not read AGENTS.md / CLAUDE.md files")
    .option("--faux-script <file>", "replay scripted replies with the faux provider (JSON array or JSONL)")
    .option("--session <file|id>", "continue a session file (a path, or a unique id prefix)")
    .option("-c, --continue", "continue the latest session of this directory")
    .option("--session-dir <dir>", "where session files go (default $PI_ORCH_HOME/sessions/<cwd>)")
    .option("--no-session", "keep nothing on disk")
    .option("--compaction-reserve-tokens <n>", "compact when fewer tokens than this are left in the context window (default 16384)", wholeNumber)
    .option("--compaction-keep-tokens <n>", "recent tokens kept verbatim by compaction (default 20000)", wholeNumber)
    .option("--home <dir>", "pi-orch home (default $PI_ORCH_HOME or ~/.pi-orch)")
    .option("--retry-delay-ms <ms>", "first automatic-retry delay, doubled each attempt (default 2000)", wholeNumber)
    .option("--max-line-bytes <n>", "longest accepted RPC input line (default 8 MiB)", wholeNumber)
    .option("-e, --extension <path>", "load an extension (a .ts/.js file or a folder with an index); repeatable", collect)
    .option("--bash-inherit-keys", "let tool commands see the provider API keys (removed from their environment by default; also PI_BASH_INHERIT_KEYS=1)")
    .option("--trust", "trust this project: load its .pi/extensions/ (the decision is recorded in $PI_ORCH_HOME/trust.json)")
    .addHelpText(
      "after",
      `
Examples:
  pi -p --provider faux "list the files here"      offline demo with real tool calls
  echo "explain src/index.ts" | pi -p               prompt from stdin, key from ANTHROPIC_API_KEY
  pi -p --mode json --model openai/gpt-4.1 "fix the failing test"
  pi --mode rpc --provider anthropic                speak the pi RPC protocol on stdio
  pi -p --continue "and now add tests"              continue the latest session here`,
    );
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

async function main(argv: string[]): Promise<number> {
  // Options extensions register are known only once they load; they are checked then.
  const program = buildProgram().allowUnknownOption();
  program.exitOverride();
  program.configureOutput({ writeErr: (s) => process.stderr.write(s) });
  try {
    program.parse(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version") return 0;
      return 2;
    }
    throw err;
  }
  const opts = program.opts<CliOptions>();
  let words = program.args;

  const workerOptions: WorkerOptions = {
    cwd: process.cwd(),
    home: opts.home,
    provider: opts.provider,
    model: opts.model,
    thinking: opts.thinking,
    apiKey: opts.apiKey,
    tools: typeof opts.tools === "string" ? opts.tools : undefined,
    noTools: opts.tools === false,
    systemPrompt: opts.systemPrompt,
    appendSystemPrompt: opts.appendSystemPrompt,
    noContextFiles: !opts.contextFiles,
    fauxScript: opts.fauxScript,
    retryDelayMs: opts.retryDelayMs,
    session: typeof opts.session === "string" ? opts.session : undefined,
    noSession: opts.session === false,
    continueSession: opts.continue,
    sessionDir: opts.sessionDir,
    compactionReserveTokens: opts.compactionReserveTokens,
    compactionKeepTokens: opts.compactionKeepTokens,
    bashInheritKeys: opts.bashInheritKeys,
  };

  let runtime: AgentSession;
  try {
    runtime = new AgentSession(workerOptions);
  } catch (err) {
    process.stderr.write(`pi: ${(err as Error).message}\n`);
    return 2;
  }

  // stdout belongs to the mode (the RPC stream, JSONL, the answer): extensions' console output goes to stderr.
  console.log = console.info = console.debug = console.error;
  // In RPC mode even direct writes to process.stdout go to stderr; the protocol has its own way out.
  const protocolOut = opts.mode === "rpc" ? guardStdout() : process.stdout;
  runtime.setUi(DEFAULT_UI, false);
  runtime.setExtensions(
    await loadExtensions({
      paths: opts.extension ?? [],
      home: runtime.home,
      cwd: runtime.cwd,
      trusted: resolveTrust(runtime.home, runtime.cwd, opts.trust, (m) => process.stderr.write(`pi: ${m}\n`)),
      emit: (event) => {
        process.stderr.write(`pi: extension ${event.extensionPath} failed (${event.event}): ${event.error}\n`);
        runtime.emit(event);
      },
    }),
  );
  // Flags extensions registered are accepted, and only those.
  const split = splitExtensionFlags(words, runtime.extensionFlags());
  if (split.unknown.length > 0) {
    process.stderr.write(`pi: unknown option ${split.unknown.join(", ")}; see pi --help (extensions may add options with pi.registerFlag)\n`);
    return 2;
  }
  for (const flag of runtime.extensionFlags()) if (split.values.has(flag.name)) flag.value = split.values.get(flag.name);
  words = split.rest;

  if (opts.mode === "rpc") {
    if (words.length > 0) {
      process.stderr.write("pi: --mode rpc takes no message; send a prompt command on stdin\n");
      return 2;
    }
    return new Promise<number>((resolve) => {
      const rpc = runRpcMode(runtime, {
        input: process.stdin,
        output: protocolOut,
        maxLineBytes: opts.maxLineBytes,
        onExit: resolve,
      });
      runtime.setUi(rpc.ui, true);
      runtime.onShutdownRequest = () => void rpc.shutdown("an extension asked to shut down");
      for (const signal of ["SIGTERM", "SIGHUP", "SIGINT"] as const) {
        process.on(signal, () => void rpc.shutdown(signal));
      }
      void runtime.start();
    });
  }

  let prompt = words.join(" ");
  if (!process.stdin.isTTY) {
    const piped = (await readStdin()).trim();
    if (piped) prompt = prompt ? `${prompt}\n\n${piped}` : piped;
  }
  if (!opts.print && process.stdin.isTTY && process.stdout.isTTY && !prompt) {
    // Interactive mode: loaded lazily so rpc and print start without ink and react.
    process.env.NODE_ENV ??= "production"; // React's development build is much slower
    const { runInteractive } = await import("./tui/interactive.js");
    return runInteractive(runtime, (ui) => runtime.setUi(ui, true));
  }
  if (!prompt) {
    process.stderr.write("pi: no task given: pass it as an argument or on stdin; see pi --help\n");
    return 2;
  }
  let aborted = false;
  for (const signal of ["SIGTERM", "SIGHUP", "SIGINT"] as const) {
    process.on(signal, () => {
      if (aborted) process.exit(130);
      aborted = true;
      void runtime.shutdown();
    });
  }
  await runtime.start();
  return runPrintMode(runtime, {
    prompt,
    json: opts.mode === "json",
    stdout: process.stdout,
    stderr: process.stderr,
  });
}

process.on("exit", () => killAllChildren());
main(process.argv).then(
  (code) => {
    process.exitCode = code;
    // Handles the model SDKs keep open must not keep a finished worker alive.
    setImmediate(() => process.exit(code));
  },
  (err: unknown) => {
    process.stderr.write(`pi: unexpected failure: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
