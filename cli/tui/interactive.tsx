/**
 * `pi` on a terminal: the TUI's zoomed view over one in-process agent, with pi's built-in
 * slash commands, `!cmd` / `!!cmd`, `@` file search and Tab path completion, and its
 * application keys (rebindable in keybindings.json). Type a prompt, watch it stream,
 * steer (Enter) or follow up (Tab, Alt+Enter) while it runs, Esc aborts, Ctrl+C twice or
 * Ctrl+D on an empty editor quits. A resumed session's conversation is drawn first.
 */
import type { ExtensionUi } from "../../worker/extensions/hooks.js";
import type { AgentSession } from "../../worker/core/agent-session.js";
import { colorEnabled } from "../context.js";
import { App, type SingleHost } from "./App.js";
import { runLine, type CommandView } from "./builtin-commands.js";
import { editExternally, editorCommand } from "./external-editor.js";
import { fuzzyPaths, pathEntries, projectPaths } from "./file-completions.js";
import { historyLines } from "./history-lines.js";
import { loadKeybindings, type ActionId } from "./keybindings.js";
import type { LineState } from "./line-editor.js";
import { LocalAgent, LOCAL_AGENT } from "./local-agent.js";
import { mountFullScreen } from "./run.js";
import { completions, lineIntent, type SlashCommand } from "./slash-commands.js";
import { suggestions } from "./suggestions.js";
import { suspendToShell, type TerminalHandover } from "./terminal-handover.js";
import { TuiStore } from "./store.js";
import { formatTokens } from "./text.js";
import { makeTheme, ThemeProvider } from "./theme.js";

/** How the interactive mode starts. */
export interface InteractiveOptions {
  /** Sent as the first prompt once the view shows (`pi "task"` on a terminal). */
  firstPrompt?: string;
  /** Open the session picker first (`pi -r`). */
  pickSession?: boolean;
}

/** Two Esc presses closer than this on an idle agent open `/tree`, as in pi. */
const DOUBLE_ESC_MS = 500;

/** Run the interactive mode until the user quits; `setUi` installs the extensions' dialogs. Resolves with the exit code. */
export async function runInteractive(
  runtime: AgentSession,
  setUi: (ui: ExtensionUi) => void,
  options: InteractiveOptions = {},
): Promise<number> {
  const store = new TuiStore();
  const agent = new LocalAgent(runtime, store);
  setUi(agent);
  await runtime.start();
  const resumed = runtime.messages().length > 0;
  let keys = loadKeybindings(runtime.home);
  store.dispatch({
    type: "transcript",
    agent: LOCAL_AGENT,
    lines: [...startLines(runtime, resumed), ...keys.notices.map((text) => ({ kind: "error" as const, text }))],
  });
  const settings = runtime.resources.settings as Record<string, unknown>;
  let handover: TerminalHandover | null = null;

  let quitView = () => {};
  let lastEsc = 0;
  const view = (host: SingleHost): CommandView => ({
    select: (title, opts) => agent.select(title, opts),
    input: (title, placeholder) => agent.input(title, placeholder),
    show: (lines) => {
      for (const line of lines)
        store.dispatch({ type: "notice", agent: LOCAL_AGENT, kind: line.kind, text: line.text });
    },
    replace: (lines) => store.dispatch({ type: "transcript", agent: LOCAL_AGENT, lines }),
    setEditor: host.setEditor,
    copy: (text) => process.stdout.write(`\x1b]52;c;${Buffer.from(text).toString("base64")}\x07`),
    showHotkeys: host.showHelp,
    reloadKeys: () => {
      keys = loadKeybindings(runtime.home);
      for (const text of keys.notices) store.dispatch({ type: "notice", agent: LOCAL_AGENT, kind: "error", text });
    },
    quit: host.quit,
  });
  const own = (): SlashCommand[] =>
    runtime.commands().map((c) => ({ name: c.name, description: c.description ?? `(${c.source})` }));
  const complete = (text: string) => completions(text, own());
  const suggest = (line: LineState, tabbed: boolean) =>
    suggestions(
      line,
      {
        commands: complete,
        files: (query) => fuzzyPaths(projectPaths(runtime.cwd), query, 50),
        entries: (prefix) => pathEntries(runtime.cwd, prefix),
      },
      tabbed,
    );
  const onLine = (text: string, host: SingleHost): boolean => {
    let intent = lineIntent(text, own());
    // Enter on a `/prefix` the list offers runs what the list shows first, as pi's menu does.
    if (intent.kind === "prompt" && /^\/\S*$/.test(text.trim())) {
      const first = complete(text.trim())[0];
      if (first && first.name !== text.trim().slice(1)) intent = lineIntent(`/${first.name}`, own());
    }
    if (intent.kind === "prompt") return false;
    void runLine(runtime, view(host), intent);
    return true;
  };
  const say = (text: string) => store.dispatch({ type: "notice", agent: LOCAL_AGENT, text });
  const lend = (what: string, use: () => Promise<void>) => {
    if (!handover) return;
    handover
      .lend(use)
      .catch((err: unknown) => say(`${what} failed: ${err instanceof Error ? err.message : String(err)}`));
  };
  const onAction = (id: ActionId, host: SingleHost, line: LineState): void => {
    switch (id) {
      case "app.model.select":
        return void onLine("/model", host);
      case "app.model.cycleForward": {
        const r = runtime.cycleModel();
        return say(r ? `Switched to ${r.model.provider}/${r.model.id}` : "Only one model available");
      }
      case "app.thinking.cycle": {
        const r = runtime.cycleThinkingLevel();
        return say(r ? `Thinking level: ${r.level}` : "Current model does not support thinking");
      }
      case "app.message.dequeue": {
        const { steering, followUp } = runtime.clearQueue();
        const queued = [...steering, ...followUp];
        if (queued.length === 0) return say("No queued messages to restore");
        host.setEditor([...queued, line.text].filter((t) => t.trim() !== "").join("\n\n"));
        return say(`Restored ${queued.length} queued message${queued.length === 1 ? "" : "s"} to editor`);
      }
      case "app.interrupt": {
        // Reached on an idle agent only (a running one is aborted): twice quickly opens /tree, as in pi.
        const now = Date.now();
        const twice = now - lastEsc < DOUBLE_ESC_MS;
        lastEsc = twice ? 0 : now;
        return void (twice && onLine("/tree", host));
      }
      case "app.message.copy":
        return void onLine("/copy", host);
      case "app.session.new":
      case "app.session.tree":
      case "app.session.fork":
      case "app.session.resume":
        return void onLine(`/${id.slice("app.session.".length)}`, host);
      case "app.editor.external":
        return lend("the external editor", async () => {
          const r = await editExternally(editorCommand(settings.externalEditor), line.text, runtime.cwd);
          if (r.ok) host.setEditor(r.text);
          else say(r.message);
        });
      case "app.suspend":
        return lend("suspend", suspendToShell);
    }
  };
  const status = (): string => {
    const s = runtime.sessionStats();
    const m = runtime.agent.model;
    const tokens = s.tokens.total;
    return [
      runtime.sessionName,
      tokens > 0 ? `${formatTokens(tokens)} tok` : undefined,
      s.cost > 0 ? `$${s.cost.toFixed(3)}` : undefined,
      `${(s.contextUsage.percent ?? 0).toFixed(1)}%/${formatTokens(s.contextUsage.contextWindow)}`,
      `${m.provider}/${m.id}`,
    ]
      .filter(Boolean)
      .join(" · ");
  };

  const shown = mountFullScreen(store, (quit, replies, lent) => {
    quitView = quit;
    handover = lent;
    return (
      <ThemeProvider value={makeTheme(colorEnabled())}>
        <App
          store={store}
          replies={replies}
          control={agent}
          mode="single"
          onQuit={quit}
          defaultCwd={runtime.cwd}
          onLine={onLine}
          onAction={onAction}
          suggest={suggest}
          keybindings={() => keys.bindings}
          hideThinking={settings.hideThinkingBlock === true}
          handover={handover}
          status={status}
        />
      </ThemeProvider>
    );
  });
  const host: SingleHost = { setEditor: () => {}, showHelp: () => {}, quit: () => quitView() };
  if (options.pickSession) void runLine(runtime, view(host), { kind: "builtin", ...resumeIntent() });
  if (options.firstPrompt) void agent.rpc(LOCAL_AGENT, { type: "prompt", message: options.firstPrompt });
  await shown;
  agent.dispose();
  store.dispose();
  await runtime.shutdown();
  return 0;
}

function resumeIntent(): { command: SlashCommand; args: string } {
  const intent = lineIntent("/resume");
  if (intent.kind !== "builtin") throw new Error("/resume is a built-in command");
  return { command: intent.command, args: "" };
}

/** What the view opens with: what was loaded, and a resumed session's conversation. */
function startLines(runtime: AgentSession, resumed: boolean) {
  const r = runtime.resources;
  const m = runtime.agent.model;
  const context = runtime.contextFilePaths.length;
  const loaded = [
    `${context} context file${context === 1 ? "" : "s"}`,
    `${r.skills.length} skill${r.skills.length === 1 ? "" : "s"}`,
    `${r.templates.length} prompt${r.templates.length === 1 ? "" : "s"}`,
    `${runtime.commands().filter((c) => c.source === "extension").length} extension commands`,
  ].join(", ");
  const header = [
    { kind: "notice" as const, text: `pi · ${m.provider}/${m.id} · ${loaded}` },
    {
      kind: "notice" as const,
      text: "/ commands · @ files · ! bash (!! not sent to the model) · ? help · Ctrl+D or Ctrl+C twice quit",
    },
  ];
  if (!resumed) return header;
  return [
    ...header,
    { kind: "notice" as const, text: `· resumed session ${runtime.sessionFile ?? runtime.sessionId}` },
    ...historyLines(runtime.messages()),
  ];
}
