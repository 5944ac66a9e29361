#!/usr/bin/env node
/**
 * The `pi` worker: one agent session, interactive on a terminal, in RPC mode (`--mode rpc`,
 * for supervisors and IDEs) or print mode (`-p`, one task then exit).
 */
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { THINKING_LEVELS, type ImageContent, type ThinkingLevel } from "../shared/schema/messages.js";
import { splitExtensionFlags } from "../worker/extensions/flags.js";
import { type BuiltinExtension, loadExtensions } from "../worker/extensions/loader.js";
import { jitiLoaded } from "../worker/extensions/jiti-load.js";
import { MCP_EXTENSION_PATH, mcpConfigured, mcpExtension } from "../worker/mcp/extension.js";
import { TOOL_SEARCH_EXTENSION_PATH, toolSearchExtension } from "../worker/tool-search/extension.js";
import { CODEMODE_EXTENSION_PATH, codemodeExtension } from "../worker/codemode/extension.js";
import { resolveTrust } from "../worker/extensions/trust.js";
import { askProjectTrust, userDefaultProjectTrust } from "./project-trust.js";
import { runPrintMode } from "../worker/modes/print.js";
import { DEFAULT_UI } from "../worker/modes/rpc-ui.js";
import { runRpcMode } from "../worker/modes/rpc.js";
import { guardStdout } from "../worker/modes/stdout-guard.js";
import { AgentSession } from "../worker/core/agent-session.js";
import type { WorkerOptions } from "../worker/core/worker-options.js";
import { killAllChildren } from "../worker/tools/process-tree.js";
import { markProcessAsPi } from "../worker/tools/session-env.js";
import { SettingsError } from "../worker/resources/settings.js";
import { exportSessionHtml } from "../worker/session/export-html.js";
import { SessionStore } from "../worker/session/session-file.js";
import { isValidSessionId } from "../worker/session/locate.js";
import { agentDir } from "../shared/paths.js";
import { insideSandbox } from "../shared/sandbox.js";
import { takeSecrets } from "../shared/secrets.js";
import { dropWorkerMallocEnv } from "../shared/malloc-env.js";
import { packageVersion } from "./version.js";
import { listModelsJson, listModelsLines } from "./list-models.js";
import { fileArgsContent, readFileArgs, splitFileArgs } from "./file-args.js";
import { isPackageCommand } from "./package-words.js";
import { isPackageSourceArg, startPackages } from "../worker/packages/start.js";
import { projectConfigDir } from "../worker/resources/index.js";
import { SNAPSHOT_HOOK, SNAPSHOT_KIND_VAR } from "../shared/snapshot-hook.js";
import { KNOWN_ENTRY_SCHEMAS } from "../shared/schema/session.js";
import { RpcCommandSchemas } from "../shared/schema/rpc.js";
import { compileChecker } from "../shared/validate.js";

interface CliOptions {
  mode: "text" | "json" | "rpc";
  print?: boolean;
  provider?: string;
  model?: string;
  thinking?: ThinkingLevel;
  apiKey?: string;
  excludeTools?: string;
  systemPrompt?: string;
  appendSystemPrompt?: string[];
  contextFiles: boolean;
  fauxScript?: string;
  home?: string;
  retryDelayMs?: number;
  maxLineBytes?: number;
  session?: string | false;
  name?: string;
  sessionId?: string;
  continue?: boolean;
  sessionDir?: string;
  compactionReserveTokens?: number;
  compactionKeepTokens?: number;
  extension?: string[];
  extensions: boolean;
  trust?: boolean;
  approve?: boolean;
  bashInheritKeys?: boolean;
  sandbox?: string;
  resume?: boolean;
  fork?: string;
  models?: string;
  builtinTools: boolean;
  skill?: string[];
  skills: boolean;
  promptTemplate?: string[];
  promptTemplates: boolean;
  theme?: string[];
  themes: boolean;
  export?: string;
  listModels?: string | boolean;
  verbose?: boolean;
  offline?: boolean;
  mcp: boolean;
}

/**
 * pi's short aliases that commander cannot declare (multi-letter ones like `-nt`, and the
 * one-letter ones beside them, so `-nx` is an unknown option rather than `-n x`), as their long names.
 */
const PI_SHORT_FLAGS: Record<string, string> = {
  "-nt": "--no-tools",
  "-nbt": "--no-builtin-tools",
  "-ne": "--no-extensions",
  "-ns": "--no-skills",
  "-np": "--no-prompt-templates",
  "-nc": "--no-context-files",
  "-t": "--tools",
  "-xt": "--exclude-tools",
  "-r": "--resume",
  "-n": "--name",
  "-a": "--approve",
  "-na": "--no-approve",
};

/** Each long flag's pi alias, shown beside it in `--help` as pi shows it (`--no-tools, -nt`). */
const PI_ALIAS_OF = new Map(Object.entries(PI_SHORT_FLAGS).map(([short, long]) => [long, short]));

/** A flag as pi's help writes it: long name first, then its aliases, then the value (`--tools, -t <list>`). */
function piOptionTerm(option: Option): string {
  const names = [option.long, option.short, option.long ? PI_ALIAS_OF.get(option.long) : undefined];
  const value = option.flags.match(/[<[].*$/)?.[0];
  return [names.filter(Boolean).join(", "), value].filter(Boolean).join(" ");
}

/** Rewrite pi's short aliases to long flags; everything after `--` is left alone. */
export function expandPiShortFlags(argv: readonly string[]): string[] {
  const end = argv.indexOf("--");
  return argv.map((arg, i) => (end !== -1 && i > end ? arg : (PI_SHORT_FLAGS[arg] ?? arg)));
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Commander prints an InvalidArgumentError with the option's name and value, then exits 2. */
function wholeNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isInteger(n) || n < 0)
    throw new InvalidArgumentError("Expected a whole number (0 or more).");
  return n;
}

// The help option is commander's own default, made here rather than by the first parse:
// a startup snapshot's program then holds it, and no start builds it.
function buildProgram(): Command {
  return new Command("pi")
    .configureHelp({ optionTerm: piOptionTerm })
    .description(
      "A pi-compatible coding agent: one session, interactive on a terminal (with the task as its first prompt), driven over RPC, or run once with -p.",
    )
    .version(packageVersion(), "-v, --version", "print the version")
    .helpOption("-h, --help", "display help for command")
    .argument(
      "[message...]",
      "the task: on a terminal the interactive mode's first prompt, else (or with -p) run once; read from stdin when piped; @FILE puts a file in it",
    )
    .addOption(new Option("--mode <mode>", "output mode").choices(["text", "json", "rpc"]).default("text"))
    .option("-p, --print", "run the task once, print the answer, exit (0 ok, 1 error or abort)")
    .option("--provider <name>", "model provider: anthropic, openai, faux, or one from models.json")
    .option("--model <id>", "model id, or provider/id, optionally with :<thinking level>")
    .option(
      "--models <patterns>",
      "comma-separated model patterns that cycle_model goes through (globs like anthropic/*)",
    )
    .option("--thinking <level>", `thinking level: ${THINKING_LEVELS.join(", ")}`)
    .option("--api-key <key>", "API key for the provider (else env or models.json)")
    .option(
      "--tools <list>",
      "the only tools there are: names or * patterns (read,deploy_*); or changes to the default set (+grep,-write)",
    )
    .option("--no-tools", "no tools at all, built-in or extension (with --tools +name: only those)")
    .option("--no-builtin-tools", "no built-in tools; extension tools stay")
    .option(
      "--exclude-tools <list>",
      "tools never to use, names or * patterns (bash,deploy_*): left out whatever --tools or an extension asks",
    )
    .option("--no-mcp", "no MCP servers for this run: none connects, no mcp__ tools (see pi mcp --help)")
    .option("--system-prompt <text>", "replace the base system prompt")
    .option(
      "--append-system-prompt <text|file>",
      "append text (or a file's content) to the system prompt; repeatable",
      collect,
    )
    .option("--no-context-files", "do not read AGENTS.md / CLAUDE.md files")
    .option("--skill <path>", "load a skill file or folder; repeatable, also with --no-skills", collect)
    .option("--no-skills", "do not discover skills in the home and project folders")
    .option("--prompt-template <path>", "load a prompt template file or folder; repeatable", collect)
    .option("--no-prompt-templates", "do not discover prompt templates")
    .option("--theme <path>", "accepted for pi compatibility; themes concern pi's own terminal UI", collect)
    .option("--use-theme <name>", "accepted for pi compatibility (pi's interactive theme for this run)")
    .option("--no-themes", "accepted for pi compatibility (themes are not used here)")
    .option(
      "--export <file>",
      "write a session file as HTML (to the path given after it, else pi-session-<name>.html) and exit",
    )
    .option("--list-models [search]", "list the models that can be used (optionally matching a search) and exit")
    .option("--verbose", "accepted for pi compatibility (start-up is always quiet here)")
    .addOption(
      new Option("--tui-mode <mode>", "accepted for pi compatibility (pi's terminal layout)").choices([
        "fullscreen",
        "regular",
      ]),
    )
    .option("--offline", "no start-up network use (this worker makes none; accepted for pi compatibility)")
    .option("--faux-script <file>", "replay scripted replies with the faux provider (JSON array or JSONL)")
    .option("--session <file|id>", "continue a session file (a path, or a unique id prefix)")
    .option("-c, --continue", "continue the latest session of this directory")
    .option("--resume", "pick a session to resume (interactive); without a terminal, continues the latest session")
    .option(
      "--session-id <id>",
      "this project's session with that exact id, created with it when there is none (with --no-session, the id in memory)",
    )
    .option("--fork <file|id>", "start a new session holding a copy of that session")
    .option(
      "--session-dir <dir>",
      "where session files go (else $PI_CODING_AGENT_SESSION_DIR, the sessionDir setting, <agent dir>/sessions/<cwd>)",
    )
    .option("--no-session", "keep nothing on disk")
    .option("--name <name>", "the session's display name, set at start (as set_session_name)")
    .option(
      "--compaction-reserve-tokens <n>",
      "compact when fewer tokens than this are left in the context window (default 16384)",
      wholeNumber,
    )
    .option("--compaction-keep-tokens <n>", "recent tokens kept verbatim by compaction (default 20000)", wholeNumber)
    .option(
      "--home <dir>",
      "agent directory: models.json, settings, auth, sessions (default $PI_ORCH_HOME, else $PI_CODING_AGENT_DIR, else ~/.pi/agent)",
    )
    .option("--retry-delay-ms <ms>", "first automatic-retry delay, doubled each attempt (default 2000)", wholeNumber)
    .option("--max-line-bytes <n>", "longest accepted RPC input line (default 8 MiB)", wholeNumber)
    .option(
      "-e, --extension <path>",
      "load an extension (a .ts/.js file or a folder with an index); repeatable",
      collect,
    )
    .option("--no-extensions", "do not discover extensions (explicit -e paths still load)")
    .option(
      "--bash-inherit-keys",
      "let tool commands see the provider API keys (removed from their environment by default; also PI_BASH_INHERIT_KEYS=1)",
    )
    .addOption(
      new Option(
        "--sandbox <mode>",
        "run in a bubblewrap sandbox: on (the default where bwrap works; project, agent dir, /tmp and tool caches writable; pi-orch home hidden), strict (also private /tmp, no credentials, no network for commands), off (as upstream pi); also PI_ORCH_SANDBOX",
      ).choices(["off", "on", "strict"]),
    )
    .option("--sandbox-write <dir>", "with --sandbox: one more folder pi may write to (repeatable)", collect)
    .option(
      "--trust",
      "trust this project: load its .pi/extensions/ (the decision is recorded in <agent dir>/trust.json)",
    )
    .option("--approve", "trust this project for this run only (its .pi/ extensions, settings, ...), recording nothing")
    .option("--no-approve", "do not trust this project for this run, whatever is recorded")
    .addHelpText(
      "after",
      `
Examples:
  pi                                                interactive: / commands, !cmd, ? help, Ctrl+D quits
  pi "list the files here"                          interactive, with that as the first prompt
  pi -c                                             interactive, continuing the latest session here
  pi -p --provider faux "list the files here"      offline demo with real tool calls
  echo "explain src/index.ts" | pi -p               prompt from stdin, key from ANTHROPIC_API_KEY
  pi -p @src/index.ts @shot.png "what is wrong?"    a file's text and an image in the prompt
  pi -p --mode json --model openai/gpt-4.1 "fix the failing test"
  pi --mode rpc --provider anthropic                speak the pi RPC protocol on stdio
  pi -p --continue "and now add tests"              continue the latest session here`,
    );
}

/**
 * `builtin:NAME`, `+builtin:NAME`, `-builtin:NAME`: pi's entries for its built-in extensions,
 * not files (a settings entry arrives resolved against its folder, hence the last segment).
 */
function isBuiltinEntry(entry: string): boolean {
  return /(^|\/)[+-]?builtin:[\w.-]+$/.test(entry);
}

/**
 * The built-in extensions of this start, as pi 1.6.0 decides: `builtin:mcp`,
 * `builtin:codemode` and `builtin:tool-search` unless `--no-extensions` (an explicit
 * `-e builtin:NAME` still loads one) or a `-builtin:NAME` settings entry; `--no-mcp` leaves
 * out `builtin:mcp`. They load on their own only with work to do: a mcp.json exists, or
 * `--tools` names `codemode` or `tool_search`.
 */
function builtinExtensions(
  listed: string[],
  opts: CliOptions,
  start: { home: string; trusted: boolean; toolList: string | undefined },
): BuiltinExtension[] {
  const { home, trusted } = start;
  const wanted = (path: string) =>
    (opts.extension ?? []).includes(path) || (opts.extensions !== false && !listed.some((p) => p.endsWith(`-${path}`)));
  const explicit = (path: string) => (opts.extension ?? []).includes(path);
  const mcp = opts.mcp !== false && wanted(MCP_EXTENSION_PATH);
  const mcpAlways = mcp && (explicit(MCP_EXTENSION_PATH) || mcpConfigured(home, process.cwd(), trusted));
  const builtins: BuiltinExtension[] = [];
  if (mcp)
    builtins.push({ path: MCP_EXTENSION_PATH, factory: mcpExtension(home, { command: mcpAlways }), always: mcpAlways });
  if (wanted(CODEMODE_EXTENSION_PATH))
    builtins.push({
      path: CODEMODE_EXTENSION_PATH,
      factory: codemodeExtension,
      always: mcpAlways || explicit(CODEMODE_EXTENSION_PATH) || /codemode/.test(start.toolList ?? ""),
    });
  if (wanted(TOOL_SEARCH_EXTENSION_PATH))
    builtins.push({
      path: TOOL_SEARCH_EXTENSION_PATH,
      factory: toolSearchExtension,
      always: mcpAlways || explicit(TOOL_SEARCH_EXTENSION_PATH) || /tool_search/.test(start.toolList ?? ""),
    });
  return builtins;
}

/** `--export FILE [OUT]`: the session file as HTML, without starting an agent. */
function exportToHtml(file: string, output: string | undefined): number {
  try {
    const store = SessionStore.open(file, { warn: (m) => process.stderr.write(`pi: ${m}\n`) });
    try {
      const path = exportSessionHtml(
        store.path,
        { header: store.header, path: store.pathToLeaf(), entryCount: store.entries.length, name: store.sessionName },
        process.cwd(),
        output,
      );
      process.stdout.write(`${path}\n`);
      return 0;
    } finally {
      store.close();
    }
  } catch (err) {
    process.stderr.write(`pi: --export: ${(err as Error).message}\n`);
    return 1;
  }
}

/** `--list-models [search]`: pi's table of the models that can be used (JSON lines with `--mode json`). */
function listModels(runtime: AgentSession, search: string | undefined, json: boolean): number {
  const lines = (json ? listModelsJson : listModelsLines)(runtime.availableModels(), search);
  for (const line of lines) process.stdout.write(`${line}\n`);
  return 0;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** `pi --help | head` closes stdout early: that is the reader's choice, not a failure. */
function exitOnClosedStdout(err: NodeJS.ErrnoException): void {
  if (err.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw err;
}

/**
 * The program a startup snapshot's build made (at the end of this file): a worker started
 * from the snapshot parses its argv with it instead of building its ~60 options again.
 */
let prebuiltProgram: Command | undefined;

/** How this process was started, beyond its argv. */
interface StartedAs {
  /** From the startup snapshot (cli/pi-snapshot.ts), not by compiling the bundle. */
  fromSnapshot?: boolean;
}

async function main(argv: string[], startedAs: StartedAs = {}): Promise<number> {
  process.stdout.on("error", exitOnClosedStdout);
  markProcessAsPi();
  // As pi: `pi mcp ...` manages MCP servers without starting a session (or loading extensions).
  if (argv[2] === "mcp") {
    const { runMcpCommand } = await import("./mcp-command.js");
    return runMcpCommand(argv.slice(3), { cwd: process.cwd(), home: agentDir() });
  }
  // As pi: `pi install|remove|uninstall|update|list` manage packages without a session.
  if (isPackageCommand(argv[2])) {
    const { runPackageCommand } = await import("./package-command.js");
    return runPackageCommand(argv.slice(2), { cwd: process.cwd(), home: agentDir() });
  }
  // Keys a supervisor sent on its private channel, before anything reads the environment.
  try {
    takeSecrets();
  } catch (err) {
    process.stderr.write(`pi: could not read the provider keys from the supervisor: ${(err as Error).message}\n`);
    return 1;
  }
  // Options extensions register are known only once they load; they are checked then.
  const program = (prebuiltProgram ?? buildProgram()).allowUnknownOption();
  prebuiltProgram = undefined;
  program.exitOverride();
  program.configureOutput({ writeErr: (s) => process.stderr.write(s) });
  // `--tools` and `--no-tools` share commander's `tools` key, but pi reads them apart
  // (`--no-tools --tools +grep` is only grep): listen to each.
  let toolList: string | undefined;
  let noTools = false;
  program.on("option:tools", (list: string) => {
    toolList = list;
  });
  program.on("option:no-tools", () => {
    noTools = true;
  });
  try {
    program.parse(expandPiShortFlags(argv));
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version") return 0;
      return 2;
    }
    throw err;
  }
  const opts = program.opts<CliOptions>();
  // Started without the launcher (`node dist/cli/pi.js`): it starts again inside, as the launcher would.
  if (!insideSandbox()) {
    const { chooseSandbox, execInSandbox, sandboxFlags } = await import("./sandbox-exec.js");
    const flags = sandboxFlags(argv.slice(2));
    const choice = chooseSandbox(flags, process.env);
    if (choice.warning) process.stderr.write(`${choice.warning}\n`);
    if (choice.mode !== "off") {
      execInSandbox(choice.mode, flags);
      return new Promise<number>(() => undefined);
    }
    if (choice.notice) process.stderr.write(`${choice.notice}\n`);
  }
  // In RPC mode a closed stdout means the supervisor left: the RPC loop shuts down gracefully.
  if (opts.mode === "rpc") process.stdout.off("error", exitOnClosedStdout);
  let words = program.args;
  const warn = (m: string) => process.stderr.write(`pi: ${m}\n`);
  if (opts.export) return exportToHtml(opts.export, words[0]);

  // `--model id:level`, pi's shorthand for a model with a thinking level.
  let model = opts.model;
  let thinking = opts.thinking;
  // As pi: a level it does not know is a warning, and the default level stays.
  if (thinking !== undefined && !THINKING_LEVELS.includes(thinking)) {
    warn(`unknown thinking level "${thinking}" is ignored; the levels are ${THINKING_LEVELS.join(", ")}`);
    thinking = undefined;
  }
  const shorthand = model ? /^(.*):(off|minimal|low|medium|high|xhigh)$/.exec(model) : null;
  if (shorthand) {
    model = shorthand[1];
    thinking ??= shorthand[2] as ThinkingLevel;
  }
  if (opts.sessionId !== undefined) {
    const clash = [opts.session && "--session", opts.continue && "--continue", opts.resume && "--resume"].filter(
      Boolean,
    );
    if (clash.length > 0) {
      process.stderr.write(`pi: --session-id cannot be combined with ${clash.join(", ")}\n`);
      return 2;
    }
    if (!isValidSessionId(opts.sessionId)) {
      process.stderr.write(
        `pi: --session-id "${opts.sessionId}": a session id has only letters, digits, ".", "_" and "-", and starts and ends with a letter or digit\n`,
      );
      return 2;
    }
  }
  // As pi: trimmed, and a name of only white space is refused before anything starts.
  const sessionName = opts.name?.trim();
  if (sessionName === "") {
    process.stderr.write("pi: --name requires a non-empty value\n");
    return 2;
  }
  const home = opts.home ?? agentDir();
  const trusted = await resolveTrust(home, process.cwd(), { trust: opts.trust, approve: opts.approve }, warn, {
    defaultProjectTrust: userDefaultProjectTrust(home, warn),
    askExtensions: () =>
      askProjectTrust(
        home,
        {
          extension: opts.extension,
          extensions: opts.extensions,
          isBuiltinEntry,
          mode:
            opts.mode !== "text"
              ? opts.mode
              : !opts.print && process.stdin.isTTY && process.stdout.isTTY
                ? "tui"
                : "print",
        },
        warn,
      ),
  });

  const workerOptions: WorkerOptions = {
    cwd: process.cwd(),
    home: opts.home,
    provider: opts.provider,
    model,
    thinking,
    // A supervisor passes `--api-key` in PI_API_KEY: argv is visible to every user.
    apiKey: opts.apiKey ?? (process.env.PI_API_KEY || undefined),
    tools: toolList,
    noTools: noTools ? "all" : opts.builtinTools === false ? "builtin" : undefined,
    excludeTools: opts.excludeTools
      ?.split(",")
      .map((t) => t.trim())
      .filter(Boolean),
    systemPrompt: opts.systemPrompt,
    appendSystemPrompt: opts.appendSystemPrompt,
    noContextFiles: !opts.contextFiles,
    fauxScript: opts.fauxScript,
    retryDelayMs: opts.retryDelayMs,
    session: typeof opts.session === "string" ? opts.session : undefined,
    // --list-models only reads the catalogue: no session file for it.
    noSession: opts.session === false || opts.listModels !== undefined,
    continueSession: opts.continue || opts.resume,
    forkFrom: opts.fork,
    sessionId: opts.sessionId,
    scopedModels: opts.models
      ?.split(",")
      .map((m) => m.trim())
      .filter(Boolean),
    trusted,
    noSkills: opts.skills === false,
    skillPaths: opts.skill,
    noPromptTemplates: opts.promptTemplates === false,
    promptTemplatePaths: opts.promptTemplate,
    sessionDir: opts.sessionDir,
    compactionReserveTokens: opts.compactionReserveTokens,
    compactionKeepTokens: opts.compactionKeepTokens,
    bashInheritKeys: opts.bashInheritKeys,
    // An extension may register the provider asked for: resolved once they load, as in pi.
    deferModel: true,
  };

  let runtime: AgentSession;
  try {
    runtime = new AgentSession(workerOptions);
  } catch (err) {
    process.stderr.write(`pi: ${(err as Error).message}\n`);
    return err instanceof SettingsError ? 1 : 2;
  }
  // On a terminal the interactive mode opens its picker; elsewhere there is none to show.
  if (opts.resume && !(process.stdin.isTTY && process.stdout.isTTY && !opts.print && opts.mode === "text"))
    warn("--resume: there is no session picker without a terminal; continuing the latest session of this directory");

  // stdout belongs to the mode (the RPC stream, JSONL, the answer): extensions' console output goes to stderr.
  console.log = console.info = console.debug = console.error;
  // In RPC mode even direct writes to process.stdout go to stderr; the protocol has its own way out.
  const protocolOut = opts.mode === "rpc" ? guardStdout() : process.stdout;
  runtime.setUi(DEFAULT_UI, false, opts.mode === "rpc" ? "rpc" : opts.mode === "json" ? "json" : "print");
  // A function, so ctx.reload() loads them again (settings' extension list read anew).
  const loadAll = async () => {
    const listed = [
      ...(opts.extensions === false ? [] : runtime.resources.settings.extensions),
      ...(opts.extension ?? []),
    ];
    const settings = runtime.resources.settings;
    const packages = await startPackages({
      configured: settings.packages,
      extensionArgs: opts.extension ?? [],
      agentDir: runtime.home,
      projectDir: projectConfigDir(runtime.cwd),
      cwd: runtime.cwd,
      trusted,
      npmCommand: settings.npmCommand,
      noExtensions: opts.extensions === false,
      noSkills: opts.skills === false,
      noPromptTemplates: opts.promptTemplates === false,
      offline: opts.offline === true || ["1", "true", "yes"].includes((process.env.PI_OFFLINE ?? "").toLowerCase()),
      log: warn,
    });
    for (const warning of packages.warnings) warn(warning);
    runtime.setPackageOrigins(packages.origins);
    return loadExtensions({
      paths: [...listed.filter((p) => !isBuiltinEntry(p) && !isPackageSourceArg(p)), ...packages.extensionPaths],
      packaged: packages.packaged,
      builtins: builtinExtensions(listed, opts, { home: runtime.home, trusted, toolList }),
      home: runtime.home,
      cwd: runtime.cwd,
      // --no-extensions: only the -e paths (and the settings' list is left out above), as pi.
      discover: opts.extensions !== false,
      trusted,
      emit: (event) => {
        process.stderr.write(`pi: extension ${event.extensionPath} failed (${event.event}): ${event.error}\n`);
        runtime.emit(event);
      },
    });
  };
  runtime.setExtensionLoader(loadAll);
  runtime.setExtensions(await loadAll());
  try {
    runtime.settleStartModel();
  } catch (err) {
    // As pi 0.73.1: --list-models lists what the catalogue and the extensions' providers
    // offer whether or not the start model resolves (`--provider nosuch --list-models` exits 0).
    if (opts.listModels === undefined) {
      process.stderr.write(`pi: ${(err as Error).message}\n`);
      return 2;
    }
  }
  if (sessionName !== undefined && opts.listModels === undefined) runtime.setSessionName(sessionName);
  // After the extensions: the providers they register are listed, as pi lists them.
  if (opts.listModels !== undefined)
    return listModels(runtime, typeof opts.listModels === "string" ? opts.listModels : undefined, opts.mode === "json");
  // Flags extensions registered are accepted, and only those.
  const split = splitExtensionFlags(words, runtime.extensionFlags());
  if (split.unknown.length > 0) {
    process.stderr.write(
      `pi: unknown option ${split.unknown.join(", ")}; see pi --help (extensions may add options with pi.registerFlag)\n`,
    );
    return 2;
  }
  for (const flag of runtime.extensionFlags())
    if (split.values.has(flag.name)) flag.value = split.values.get(flag.name);
  words = split.rest;

  if (opts.mode === "rpc") {
    if (words.length > 0) {
      process.stderr.write("pi: --mode rpc takes no message; send a prompt command on stdin\n");
      return 2;
    }
    return new Promise<number>((resolve) => {
      let started = () => {};
      const rpc = runRpcMode(runtime, {
        input: process.stdin,
        output: protocolOut,
        maxLineBytes: opts.maxLineBytes,
        // From the snapshot, a start leaves little to collect, unless jiti loaded extensions.
        idleCompaction: startedAs.fromSnapshot !== true || jitiLoaded(),
        onExit: resolve,
        ready: new Promise<void>((r) => {
          started = r;
        }),
      });
      runtime.setUi(rpc.ui, true, "rpc");
      runtime.onShutdownRequest = () => void rpc.shutdown("an extension asked to shut down");
      for (const signal of ["SIGTERM", "SIGHUP", "SIGINT"] as const) {
        process.on(signal, () => void rpc.shutdown(signal));
      }
      void runtime.start().finally(() => started());
    });
  }

  // `@file` arguments, as pi: their text before the message, images attached.
  const fileArgs = splitFileArgs(words);
  let files: { text: string; images: ImageContent[] } = { text: "", images: [] };
  try {
    if (fileArgs.files.length > 0) files = fileArgsContent(readFileArgs(fileArgs.files, process.cwd()));
  } catch (err) {
    process.stderr.write(`pi: ${(err as Error).message}\n`);
    return 1;
  }
  let prompt = files.text + fileArgs.rest.join(" ");
  if (!process.stdin.isTTY) {
    const piped = (await readStdin()).trim();
    if (piped) prompt = prompt ? `${prompt}\n\n${piped}` : piped;
  }
  // As pi: on a terminal without -p the interactive mode opens, with the task as its first prompt.
  if (!opts.print && opts.mode === "text" && process.stdin.isTTY && process.stdout.isTTY && files.images.length === 0) {
    // Interactive mode: loaded lazily so rpc and print start without ink and react.
    process.env.NODE_ENV ??= "production"; // React's development build is much slower
    const { runInteractive } = await import("./tui/interactive.js");
    return runInteractive(runtime, (ui) => runtime.setUi(ui, true, "tui"), {
      ...(prompt ? { firstPrompt: prompt } : {}),
      pickSession: opts.resume === true,
    });
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
    images: files.images.length > 0 ? files.images : undefined,
    json: opts.mode === "json",
    stdout: process.stdout,
    stderr: process.stderr,
  });
}

/** Run the worker as this process's command line asks, and exit with its code. */
function start(startedAs: StartedAs = {}): void {
  // Before anything is spawned: the malloc settings a supervisor gave this process are not its tools'.
  dropWorkerMallocEnv();
  process.on("exit", () => killAllChildren());
  main(process.argv, startedAs).then(
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
}

// A startup snapshot's build (cli/pi-snapshot.ts) evaluates this bundle without running it:
// it takes `start` and calls it in each process deserialised from the snapshot.
const deferStart = (globalThis as { [SNAPSHOT_HOOK]?: (run: (startedAs: StartedAs) => void) => void })[SNAPSHOT_HOOK];
if (deferStart) {
  // What every start checks, compiled once into the snapshot: the two entries a new
  // session begins with, and the supervisor's first command. Nothing more: each compiled
  // check is heap every start deserialises.
  for (const schema of [
    KNOWN_ENTRY_SCHEMAS.model_change,
    KNOWN_ENTRY_SCHEMAS.thinking_level_change,
    RpcCommandSchemas.get_state,
  ])
    compileChecker(schema);
  prebuiltProgram = buildProgram();
  // The blob for workers started with extensions: the chunks their first extension loads
  // (the runner and its API, pi's modules with typebox's whole index) evaluated into it, so
  // such a start does not read, compile and run them. The plain blob leaves them out: every
  // worker deserialises what a snapshot holds.
  if (process.env[SNAPSHOT_KIND_VAR] === "extensions") {
    void import("../worker/extensions/load-found.js");
    void import("../worker/extensions/modules/index.js");
  }
  deferStart(start);
} else start();
