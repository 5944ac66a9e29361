/**
 * The slash commands of `pi` on a terminal as data: pi 1.6.0's built-in list (names,
 * descriptions, argument hints, in pi's order), what a typed line asks for, and the
 * completions of a `/prefix` among the built-ins and the session's own commands
 * (extension commands, prompt templates, `/skill:name`). Pure.
 */

/** One command as the completion list shows it. */
export interface SlashCommand {
  name: string;
  description: string;
  argumentHint?: string;
  /** Set when this worker cannot do it here: the reason the command gives instead. */
  unavailable?: string;
}

const NO_SERVICE = "needs a network service this worker does not run";

/** pi 1.6.0's BUILTIN_SLASH_COMMANDS, in its order, then the documented ones its extensions add, with what ours cannot do. */
export const BUILTIN_COMMANDS: readonly SlashCommand[] = [
  { name: "settings", description: "Show and change the settings this worker honours" },
  { name: "model", description: "Select model (opens selector UI)", argumentHint: "<provider/model>" },
  { name: "tree", description: "Navigate session tree (switch branches)" },
  { name: "thinking", description: "Set thinking level", argumentHint: "<level>" },
  { name: "scoped-models", description: "Show the models Ctrl+P cycles through (--models, enabledModels)" },
  { name: "export", description: "Export session (HTML default, or specify path: .html/.jsonl)" },
  {
    name: "import",
    description: "Import a JSONL session",
    unavailable: "not here: open it with pi --session FILE (it keeps its id and working directory)",
  },
  { name: "share", description: "Share session via a Radius artifact or a GitHub gist", unavailable: NO_SERVICE },
  {
    name: "bug",
    description: "Report a bug to the Pi developers",
    argumentHint: "<description>",
    unavailable: NO_SERVICE,
  },
  { name: "copy", description: "Copy last agent message to clipboard" },
  { name: "name", description: "Set session display name" },
  { name: "session", description: "Show session info and stats" },
  {
    name: "changelog",
    description: "Show changelog entries",
    unavailable: "this worker ships no changelog: see its git log",
  },
  { name: "hotkeys", description: "Show all keyboard shortcuts" },
  { name: "fork", description: "Create a new fork from a previous user message" },
  { name: "clone", description: "Duplicate the current session at the current position" },
  { name: "trust", description: "Save project trust decision for future sessions" },
  {
    name: "login",
    description: "Configure provider authentication",
    argumentHint: "<provider>",
    unavailable: `${NO_SERVICE} (OAuth); put an API key in the environment, models.json or auth.json`,
  },
  { name: "logout", description: "Remove provider authentication", unavailable: NO_SERVICE },
  { name: "new", description: "Start a new session" },
  { name: "compact", description: "Manually compact the session context", argumentHint: "<focus>" },
  { name: "resume", description: "Resume another session" },
  { name: "reload", description: "Reload keybindings, extensions, skills, prompts and context files" },
  { name: "quit", description: "Quit pi" },
  // pi 1.6.0's docs list these too; its own extensions add them.
  {
    name: "mcp",
    description: "Manage MCP servers",
    unavailable: "no MCP server is set up: pi mcp add NAME -- COMMAND sets one up, then /reload",
  },
  {
    name: "llama",
    description: "Manage models on the configured llama.cpp router",
    unavailable: "no llama.cpp router here: add its OpenAI-compatible server to models.json",
  },
  {
    name: "debug",
    description: "Write the rendered terminal and the session messages to pi-debug.log",
    unavailable: "this terminal writes no pi-debug.log: /export FILE.jsonl keeps the session as it is",
  },
];

const BUILTIN_BY_NAME = new Map(BUILTIN_COMMANDS.map((c) => [c.name, c]));

/** What a submitted line is: a built-in command with its argument text, a shell command, or anything else (a prompt). */
export type LineIntent =
  | { kind: "builtin"; command: SlashCommand; args: string }
  | { kind: "bash"; command: string; excludeFromContext: boolean }
  | { kind: "prompt" };

/**
 * Read a submitted line: `/name args` of a built-in, `!cmd` / `!!cmd`, or a prompt
 * (extension commands and templates included). A built-in this worker cannot do gives way
 * to the session's own command of that name (`/mcp` of the MCP extension).
 */
export function lineIntent(text: string, own: readonly SlashCommand[] = []): LineIntent {
  const line = text.trim();
  if (line.startsWith("!")) {
    const excluded = line.startsWith("!!");
    const command = line.slice(excluded ? 2 : 1).trim();
    return command === "" ? { kind: "prompt" } : { kind: "bash", command, excludeFromContext: excluded };
  }
  const match = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(line);
  const found = match ? BUILTIN_BY_NAME.get(match[1]!) : undefined;
  const command = found?.unavailable && own.some((c) => c.name === found.name) ? undefined : found;
  return command ? { kind: "builtin", command, args: (match![2] ?? "").trim() } : { kind: "prompt" };
}

/**
 * The commands a line being typed may complete to: the line is `/` and a prefix with no
 * space yet. Built-ins first (pi's order), then the session's own, each name once.
 */
export function completions(text: string, own: readonly SlashCommand[]): SlashCommand[] {
  const match = /^\/(\S*)$/.exec(text);
  if (!match) return [];
  const prefix = match[1]!.toLowerCase();
  const seen = new Set<string>();
  const out: SlashCommand[] = [];
  const mine = new Map(own.map((c) => [c.name, c]));
  // A built-in this worker cannot do shows as the session's own command of that name, where it has one.
  const listed = [...BUILTIN_COMMANDS.map((c) => (c.unavailable && mine.get(c.name)) || c), ...own];
  for (const c of listed) {
    if (seen.has(c.name) || !c.name.toLowerCase().startsWith(prefix)) continue;
    seen.add(c.name);
    out.push(c);
  }
  return out;
}
