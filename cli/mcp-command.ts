/**
 * `pi mcp add|remove|list`: manage and check MCP servers without starting a session, with
 * pi 1.6.0's options, output and exit codes (agents run it through bash to add a server and
 * verify it). `add` and `remove` edit `<agent dir>/mcp.json`, or `.pi/mcp.json` with
 * `--local`; `list` connects to every enabled server and exits 1 when an entry is invalid
 * or an enabled server did not connect. `login` and `logout` (OAuth) are refused: this
 * worker does not sign in to servers.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { recordedTrust } from "../worker/extensions/trust.js";
import {
  addServerConfig,
  globalMcpConfigPath,
  loadMcpConfig,
  projectMcpConfigPath,
  removeServerConfig,
  validateServerConfig,
  type LoadedMcpConfig,
  type McpServerEntry,
} from "../worker/mcp/config.js";
import { toolExposure } from "../worker/mcp/names.js";

/** The help text, naming the agent directory this start uses (`--home`, `PI_CODING_AGENT_DIR`). */
const help = (home: string) => `Usage:
  pi mcp add <server> [options] -- <command> [args...]
  pi mcp add <server> [options] --url <url>
  pi mcp remove <server> [-l]
  pi mcp list [--json]

Configure and check MCP servers without starting a session.
Reads ${join(home, "mcp.json")} (the agent directory's) and, in trusted projects, .pi/mcp.json.

Commands:
  add <server>            Add or replace a server in mcp.json
  remove <server>         Remove a server from mcp.json
  list                    Show state, tools, and errors (exits 1 on failure)

Options for add and remove:
  -l, --local             Use .pi/mcp.json in the current project instead of the global file

Options for add:
  --url <url>             Streamable HTTP server URL (instead of a command)
  --env <KEY=VALUE>       Environment variable for a stdio server (repeatable; values may use \${NAME})
  --cwd <dir>             Working directory for a stdio server
  --header <KEY=VALUE>    HTTP header (repeatable; values may use \${NAME} or !command)
  --bearer-token-env-var <NAME>
                          Send "Authorization: Bearer \${NAME}"
  --oauth-client-id, --oauth-client-secret, --oauth-callback-port, --oauth-client-name,
  --oauth-client-registration
                          Written for pi 1.6; this worker does not sign in with OAuth
  --exposure <mode>       codemode (default), deferred, direct, or hidden
  --description <text>    What the server offers, shown in the system prompt

Other options:
  --json                  Print the list as JSON

Examples:
  pi mcp add files -- npx -y @modelcontextprotocol/server-filesystem .
  pi mcp add docs --url https://mcp.example.com/mcp --bearer-token-env-var DOCS_TOKEN
  pi mcp add gh --env 'GITHUB_TOKEN=\${GITHUB_TOKEN}' -- gh-mcp
  pi mcp list --json
  pi mcp remove files`;
const HELP_HINT = `Use "pi mcp --help" for usage.`;

type Kind = "flag" | "value" | "list";

interface Parsed {
  positional: string[];
  values: Map<string, string | true>;
  lists: Map<string, string[]>;
}

/** What the command writes to and where it looks. */
export interface McpCommandOptions {
  cwd: string;
  /** The agent directory (its mcp.json and trust.json). */
  home: string;
  log?: (line: string) => void;
  error?: (line: string) => void;
}

/**
 * `--name value` options; undefined (after reporting) on an unknown one. `--` ends the
 * options, as does reaching `maxPositionals`: the rest is the server's command and its own flags.
 */
function parseOptions(
  args: string[],
  known: Record<string, Kind>,
  error: (line: string) => void,
  maxPositionals = Number.POSITIVE_INFINITY,
): Parsed | undefined {
  const parsed: Parsed = { positional: [], values: new Map(), lists: new Map() };
  for (let i = 0; i < args.length; i++) {
    const typed = args[i];
    const arg = typed === "-l" ? "--local" : typed;
    if (arg === "--" || parsed.positional.length >= maxPositionals) {
      parsed.positional.push(...args.slice(arg === "--" ? i + 1 : i));
      break;
    }
    if (!arg.startsWith("--")) {
      parsed.positional.push(arg);
      continue;
    }
    const name = arg.slice(2);
    const kind = known[name];
    if (!kind) {
      error(`Unknown option ${typed}.\n${HELP_HINT}`);
      return undefined;
    }
    if (kind === "flag") {
      parsed.values.set(name, true);
      continue;
    }
    const value = args[++i];
    if (value === undefined) {
      error(`${arg} needs a value.`);
      return undefined;
    }
    if (kind === "list") parsed.lists.set(name, [...(parsed.lists.get(name) ?? []), value]);
    else parsed.values.set(name, value);
  }
  return parsed;
}

/** `KEY=VALUE` pairs of a repeatable option. */
function parsePairs(option: string, pairs: string[] | undefined, error: (l: string) => void) {
  const record: Record<string, string> = {};
  for (const pair of pairs ?? []) {
    const at = pair.indexOf("=");
    if (at <= 0) {
      error(`--${option} expects KEY=VALUE, got "${pair}".`);
      return undefined;
    }
    record[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return record;
}

/** Run `pi mcp <args>`; resolves with the exit code. */
export async function runMcpCommand(args: string[], options: McpCommandOptions): Promise<number> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const error = options.error ?? ((line: string) => process.stderr.write(`${line}\n`));
  const [command, ...rest] = args;
  if (command === undefined || command === "help" || args.includes("--help") || args.includes("-h")) {
    log(help(options.home));
    return 0;
  }
  if (command === "add") return add(rest, options, log, error);
  if (command === "remove") return remove(rest, options, log, error);
  if (command === "login" || command === "logout") {
    error(
      `pi mcp ${command}: OAuth sign-in is not supported by this worker. Give the server an "Authorization" header ` +
        `(pi mcp add NAME --url URL --bearer-token-env-var TOKEN_VAR), or sign in with pi 1.6.`,
    );
    return 1;
  }
  if (command !== "list") {
    error(`Unknown mcp command "${command}".\n${HELP_HINT}`);
    return 1;
  }
  const parsed = parseOptions(rest, { json: "flag" }, error);
  if (!parsed) return 1;
  if (parsed.positional.length > 0) {
    error(`Usage: pi mcp list [--json]\n${HELP_HINT}`);
    return 1;
  }
  const trusted = recordedTrust(options.home, options.cwd) === true;
  const projectConfig = projectMcpConfigPath(options.cwd);
  const note =
    !trusted && existsSync(projectConfig)
      ? `${projectConfig} is ignored because the project is not trusted. Start pi in the project to trust it.`
      : undefined;
  return list(
    loadMcpConfig({ home: options.home, cwd: options.cwd, trusted }),
    parsed.values.has("json"),
    note,
    options,
    log,
  );
}

function add(args: string[], options: McpCommandOptions, log: (l: string) => void, error: (l: string) => void): number {
  const parsed = parseOptions(
    args,
    {
      local: "flag",
      url: "value",
      env: "list",
      cwd: "value",
      header: "list",
      "bearer-token-env-var": "value",
      "oauth-client-id": "value",
      "oauth-client-secret": "value",
      "oauth-callback-port": "value",
      "oauth-client-name": "value",
      "oauth-client-registration": "value",
      exposure: "value",
      description: "value",
    },
    error,
    2,
  );
  if (!parsed) return 1;
  const { positional, values, lists } = parsed;
  const [name, ...command] = positional;
  const url = values.get("url");
  if (!name || (url === undefined) === (command.length === 0)) {
    error(`Usage: pi mcp add <server> [options] (--url <url> | -- <command> [args...])\n${HELP_HINT}`);
    return 1;
  }
  const value = (option: string) => {
    const found = values.get(option);
    return typeof found === "string" ? found : undefined;
  };
  const httpOnly = ["header", "bearer-token-env-var", ...Object.keys(OAUTH_OPTIONS)];
  const misplaced = (url === undefined ? httpOnly : ["env", "cwd"]).find((o) => values.has(o) || lists.has(o));
  if (misplaced) {
    error(`--${misplaced} only applies to ${url === undefined ? "HTTP servers (--url)" : "stdio servers"}.`);
    return 1;
  }
  let config: Record<string, unknown>;
  if (typeof url === "string") {
    const headers = parsePairs("header", lists.get("header"), error);
    if (!headers) return 1;
    const bearer = value("bearer-token-env-var");
    if (bearer !== undefined) headers.Authorization = `Bearer \${${bearer}}`;
    const oauth: Record<string, unknown> = {};
    for (const [option, key] of Object.entries(OAUTH_OPTIONS)) {
      const v = value(option);
      if (v !== undefined) oauth[key] = key === "callbackPort" ? Number(v) : v;
    }
    config = {
      url,
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      ...(Object.keys(oauth).length > 0 ? { oauth } : {}),
    };
  } else {
    const env = parsePairs("env", lists.get("env"), error);
    if (!env) return 1;
    const [executable, ...commandArgs] = command;
    config = {
      command: executable,
      ...(commandArgs.length > 0 ? { args: commandArgs } : {}),
      ...(Object.keys(env).length > 0 ? { env } : {}),
      ...(value("cwd") === undefined ? {} : { cwd: value("cwd") }),
    };
  }
  if (value("exposure") !== undefined) config.exposure = value("exposure");
  if (value("description") !== undefined) config.description = value("description");
  const validated = validateServerConfig(name, config);
  if (typeof validated === "string") {
    error(validated);
    return 1;
  }
  const project = values.has("local");
  const path = project ? projectMcpConfigPath(options.cwd) : globalMcpConfigPath(options.home);
  let replaced: boolean;
  try {
    replaced = addServerConfig(path, name, validated);
  } catch (err) {
    error(`Could not update ${path}: ${(err as Error).message}`);
    return 1;
  }
  log(`${replaced ? "Replaced" : "Added"} ${project ? "project" : "global"} MCP server "${name}" in ${path}.`);
  if (project && recordedTrust(options.home, options.cwd) !== true)
    log(`The project is not trusted, so ${path} is ignored until you start pi in the project and trust it.`);
  const mayNeedSignIn =
    "url" in validated && !Object.keys(validated.headers ?? {}).some((h) => h.toLowerCase() === "authorization");
  log(`Check it with: pi mcp list${mayNeedSignIn ? `. If it requires sign-in: pi mcp login ${name}` : ""}`);
  return 0;
}

/** `pi mcp add` options that configure OAuth, and the `oauth` key each sets. */
const OAUTH_OPTIONS: Record<string, string> = {
  "oauth-client-id": "clientId",
  "oauth-client-secret": "clientSecret",
  "oauth-callback-port": "callbackPort",
  "oauth-client-name": "clientName",
  "oauth-client-registration": "clientRegistration",
};

function remove(
  args: string[],
  options: McpCommandOptions,
  log: (l: string) => void,
  error: (l: string) => void,
): number {
  const parsed = parseOptions(args, { local: "flag" }, error);
  if (!parsed) return 1;
  const [name, ...extra] = parsed.positional;
  if (!name || extra.length > 0) {
    error(`Usage: pi mcp remove <server> [-l]\n${HELP_HINT}`);
    return 1;
  }
  const project = parsed.values.has("local");
  const scope = project ? "project" : "global";
  const path = project ? projectMcpConfigPath(options.cwd) : globalMcpConfigPath(options.home);
  let removed: boolean;
  try {
    removed = removeServerConfig(path, name);
  } catch (err) {
    error(`Could not update ${path}: ${(err as Error).message}`);
    return 1;
  }
  if (removed) {
    log(`Removed ${scope} MCP server "${name}" from ${path}.`);
    return 0;
  }
  const other = loadMcpConfig({ home: options.home, cwd: options.cwd, trusted: true }).servers.find(
    (s) => s.name === name && s.scope !== scope,
  );
  error(
    `No ${scope} MCP server named "${name}" in ${path}.${other ? ` It is defined in ${other.source}${other.scope === "project" ? "; use --local" : "; omit --local"}.` : ""}`,
  );
  return 1;
}

function describeTransport(entry: McpServerEntry): string {
  const { config } = entry;
  return "url" in config ? config.url : [config.command, ...(config.args ?? [])].join(" ");
}

/** One server as `pi mcp list --json` reports it. */
interface ServerReport {
  name: string;
  scope: string;
  source: string;
  override?: string;
  enabled: boolean;
  exposure: string;
  transport: string;
  state: string;
  tools: string[];
  toolExposure?: Record<string, string>;
  resources?: true;
  error?: string;
}

async function reportServer(entry: McpServerEntry, cwd: string): Promise<ServerReport> {
  const report: ServerReport = {
    name: entry.name,
    scope: entry.scope,
    source: entry.source,
    ...(entry.override ? { override: entry.override } : {}),
    enabled: entry.config.enabled !== false,
    exposure: entry.config.exposure ?? "codemode",
    transport: describeTransport(entry),
    state: "disabled",
    tools: [],
  };
  if (!report.enabled) return report;
  const { McpConnection } = await import("../worker/mcp/connection.js");
  const connection = new McpConnection({ entry, cwd, onTools: () => undefined });
  await connection.getClient().catch(() => undefined);
  report.state = connection.state;
  report.tools = connection.tools.map((t) => t.name);
  const overrides = report.tools.flatMap((t) => {
    const exposure = toolExposure(entry.config, t);
    return exposure === report.exposure ? [] : [[t, exposure]];
  });
  if (overrides.length > 0) report.toolExposure = Object.fromEntries(overrides);
  if (connection.hasResources) report.resources = true;
  if (connection.state !== "connected" && connection.error) report.error = connection.error;
  await connection.close();
  return report;
}

async function list(
  loaded: LoadedMcpConfig,
  json: boolean,
  note: string | undefined,
  options: McpCommandOptions,
  log: (l: string) => void,
): Promise<number> {
  const reports = await Promise.all(loaded.servers.map((entry) => reportServer(entry, options.cwd)));
  const failed = loaded.errors.length > 0 || reports.some((r) => r.enabled && r.state !== "connected");
  if (json) {
    log(JSON.stringify({ servers: reports, errors: loaded.errors, ...(note ? { note } : {}) }, null, 2));
    return failed ? 1 : 0;
  }
  if (reports.length === 0 && loaded.errors.length === 0)
    log(`No MCP servers configured. Add them to ${globalMcpConfigPath(options.home)} or .pi/mcp.json.`);
  for (const r of reports) {
    const state =
      r.state === "connected" ? `connected, ${r.tools.length} tool${r.tools.length === 1 ? "" : "s"}` : r.state;
    log(`${r.name}: ${state} (${r.exposure}, ${r.scope})`);
    log(`  ${r.transport}`);
    if (r.override) log(`  project override: ${r.override}`);
    if (r.tools.length > 0)
      log(`  tools: ${r.tools.map((t) => (r.toolExposure?.[t] ? `${t} [${r.toolExposure[t]}]` : t)).join(", ")}`);
    if (r.resources) log("  offers resources");
    if (r.error) log(`  ${r.error.split("\n").join("\n  ")}`);
  }
  for (const e of loaded.errors) log(`config error: ${e}`);
  if (note) log(note);
  return failed ? 1 : 0;
}
