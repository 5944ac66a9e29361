/**
 * The single-agent `pi` on a real terminal (issue 28): tmux on a private socket runs
 * `pi --provider faux`; keys go in with send-keys, the screen comes back with
 * capture-pane, and we assert what a person sees. Built-in slash commands (with the `/`
 * completion list), `!cmd` / `!!cmd`, `?`, `/quit`, Ctrl+D, and `pi -c` drawing the
 * resumed conversation. Skipped (with the reason) where tmux is not installed.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PI_BIN, tempDir } from "../support/rpc-worker.js";
import { until as waitFor } from "../faults/support.js";
import { HAS_TMUX, terminalEnv, TmuxDriver } from "../support/tmux.js";

describe.skipIf(!HAS_TMUX)("pi on a terminal, in tmux (skipped: tmux is not installed)", () => {
  let dir: { path: string; cleanup: () => void };
  let agentDir: string;
  let t: TmuxDriver;
  let extraEnv: NodeJS.ProcessEnv = {};

  const env = (): NodeJS.ProcessEnv => ({
    ...terminalEnv(process.env),
    NO_COLOR: "1",
    PI_CODING_AGENT_DIR: agentDir,
    PI_ORCH_HOME: "",
    ...extraEnv,
  });
  const tmux = (...args: string[]) => t.run(...args);
  const until = (s: string, what: string, test: (text: string) => boolean) => t.until(s, what, test);
  const gone = (s: string) => t.gone(s);
  const type = (s: string, text: string) => t.type(s, text);
  const start = (s: string, ...args: string[]) => {
    t.open(
      s,
      { cols: 120, rows: 40, cwd: dir.path },
      `${process.execPath} ${PI_BIN} --provider faux ${args.join(" ")}`,
    );
    return until(s, "the prompt", (text) => text.includes("prompt>"));
  };

  beforeEach(() => {
    dir = tempDir("pi-orch-pi-tty-");
    agentDir = join(dir.path, "agent");
    extraEnv = {};
    t = new TmuxDriver(join(dir.path, "tmux.sock"), env);
  });
  afterEach(() => {
    t.kill();
    dir.cleanup();
  });

  it("runs built-in commands, !cmd and !!cmd, opens help on ?, and /quit leaves", async () => {
    await start("a");
    // `/sess`: the list offers /session; Enter runs what it shows first.
    tmux("send-keys", "-t", "a", "-l", "/sess");
    await until("a", "the completion list", (t) => /→ \/session\s+Show session info/.test(t));
    tmux("send-keys", "-t", "a", "Enter");
    await until("a", "/session's info", (t) => t.includes("Session Info") && /Model: faux\/faux-1/.test(t));
    type("a", "/name my-task");
    await until("a", "the name", (t) => t.includes("Session name set: my-task") && /^my-task · /m.test(t));
    type("a", "!echo sent-$((6*7))");
    await until("a", "the bash output", (t) => t.includes("sent-42"));
    type("a", "!!echo kept-$((6*8))");
    await until("a", "the !! output", (t) => t.includes("kept-48") && t.includes("(not sent to the model)"));
    tmux("send-keys", "-t", "a", "?");
    await until("a", "help", (t) => t.includes("Esc or ? closes this help") && !t.includes("prompt> ?"));
    tmux("send-keys", "-t", "a", "Escape");
    await until("a", "help closed", (t) => t.includes("prompt>"));
    type("a", "list the files");
    await until("a", "the faux reply", (t) => t.includes("I found"));
    type("a", "/quit");
    await gone("a");
    // The prompt and both commands are in the session, `!!`'s marked to stay out of the model's
    // context (as pi records it); the built-ins are not messages at all.
    const sessions = join(agentDir, "sessions");
    const [folder] = readdirSync(sessions);
    const [file] = readdirSync(join(sessions, folder!));
    const text = readFileSync(join(sessions, folder!, file!), "utf8");
    expect(text).toContain("list the files");
    expect(text).toContain("sent-42");
    const line = (needle: string) => text.split("\n").find((l) => l.includes(needle)) ?? "";
    expect(line("kept-48")).toContain('"excludeFromContext":true');
    expect(line("sent-42")).not.toContain('"excludeFromContext":true');
    expect(text).not.toContain('"/session');
    expect(text).not.toContain('"/name');
  }, 90_000);

  it("pi -c draws the resumed conversation, and Ctrl+D on an empty editor quits", async () => {
    await start("first");
    type("first", "list the files");
    await until("first", "the faux reply", (t) => t.includes("I found"));
    tmux("send-keys", "-t", "first", "C-d");
    await gone("first");
    await start("again", "-c");
    const shown = await until(
      "again",
      "the earlier turn",
      (t) => t.includes("> list the files") && t.includes("I found"),
    );
    expect(shown).toContain("resumed session");
    tmux("send-keys", "-t", "again", "C-d");
    await gone("again");
  }, 90_000);

  it('pi "task" on a terminal opens the interactive mode with the task as its first prompt', async () => {
    await start("task", "'list the files'");
    await until("task", "the first prompt's run", (t) => t.includes("> list the files") && t.includes("I found"));
    tmux("send-keys", "-t", "task", "C-d");
    await gone("task");
  }, 90_000);

  it("/export writes the session, /model and /new act on it, /hotkeys lists the keys", async () => {
    await start("more");
    type("more", "list the files");
    await until("more", "the faux reply", (t) => t.includes("I found"));
    const html = join(dir.path, "out.html");
    type("more", `/export ${html}`);
    await waitFor(
      () => existsSync(html) && readFileSync(html, "utf8").includes("list the files"),
      20_000,
      "the export",
    );
    type("more", "/model faux/faux-1");
    await until("more", "the model", (t) => t.includes("Model: faux/faux-1"));
    type("more", "/new");
    await until("more", "a new session", (t) => t.includes("New session started") && !t.includes("I found"));
    type("more", "/hotkeys");
    await until("more", "the keys", (t) => t.includes("Shift+Tab") && t.includes("!!cmd"));
    tmux("send-keys", "-t", "more", "Escape");
    await until("more", "help closed", (t) => t.includes("prompt>"));
    tmux("send-keys", "-t", "more", "C-d");
    await gone("more");
  }, 90_000);
  it("walks the session commands: /copy, /compact, /tree, Esc twice, /fork, /clone, /resume, /reload, /settings, /thinking", async () => {
    // A key for the Anthropic models lists them (nothing is sent: no prompt goes to them), so
    // /thinking and Shift+Tab have a model with levels; compaction keeps as little as it can.
    extraEnv = { ANTHROPIC_API_KEY: "sk-ant-never-sent" };
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 1 } }));
    await start("walk");
    // OSC 52 from the app lands in tmux's paste buffer.
    tmux("set-option", "-s", "set-clipboard", "on");
    const key = (...keys: string[]) => tmux("send-keys", "-t", "walk", ...keys);
    // The next keys wait for the run to end, or for a picker to close (an Esc and a key in one read is Alt+key).
    const idle = (what: string, test: (s: string) => boolean) =>
      until("walk", what, (s) => test(s) && s.includes("● idle · done") && !s.includes("↑↓ choose"));

    type("walk", "list the files");
    await idle("the first reply", (s) => s.includes("I found"));
    type("walk", "list the files in agent");
    await idle("the second reply", (s) => /I found 2 entries:\s+║\n║ sessions\s+║\n║ settings\.json/.test(s));

    type("walk", "/copy");
    await until("walk", "the copy", (s) => s.includes("Copied last agent message to clipboard"));
    expect(tmux("show-buffer").stdout).toBe("I found 2 entries:\nsessions\nsettings.json");
    key("C-x");
    await until("walk", "Ctrl+X: the copy again", (s) => s.split("Copied last agent message").length === 3);

    type("walk", "/compact keep the file names");
    await until("walk", "the compaction", (s) => /✓ Compacted: \S+ tokens before/.test(s));

    type("walk", "/tree");
    await until("walk", "the tree", (s) => s.includes("Session tree: go to") && /› 1\. > list the files\s/.test(s));
    key("Enter");
    await until("walk", "the summary question", (s) => s.includes("Summarize the branch you leave?"));
    key("Down", "Enter");
    // pi puts a user message picked in the tree back into the editor, its turn gone from the view;
    // the branch left is summarized where the conversation goes on.
    await idle(
      "the move with a summary",
      (s) =>
        s.includes("Moved in the session tree") &&
        s.includes("· branch summary: ") &&
        /prompt> list the files\s/.test(s),
    );
    key("C-u");
    key("Escape");
    key("Escape");
    await until("walk", "Esc twice: the tree", (s) => s.includes("Session tree: go to"));
    key("Enter");
    await until("walk", "the summary question again", (s) => s.includes("Summarize the branch you leave?"));
    key("Enter");
    await idle(
      "the move without a summary",
      (s) =>
        s.includes("Moved in the session tree") && !s.includes("branch summary") && /prompt> list the files\s/.test(s),
    );
    key("C-u");

    type("walk", "/fork");
    await until("walk", "the fork points", (s) => s.includes("Fork from message") && /› 1\. list the files\s/.test(s));
    key("Enter");
    await idle("the fork", (s) => s.includes("Forked to a new session") && /prompt> list the files\s/.test(s));
    key("Enter");
    await idle("a reply in the fork", (s) => s.includes("I found 2 entries"));
    type("walk", "/clone");
    await idle("the clone", (s) => s.includes("Cloned to a new session") && s.includes("I found 2 entries"));

    type("walk", "/resume");
    const picker = await until("walk", "the session picker", (s) => s.includes("Resume session") && / 3\. /.test(s));
    expect(picker).toMatch(/› 1\. list the files · \S+ ago · \d+ msg \(current\)/);
    key("Down", "Down", "Enter");
    // The oldest: the first session, drawn where the tree left it (after the branch summary).
    await idle("the resumed session", (s) => s.includes("Resumed session") && s.includes("· branch summary: ")).catch(
      (err: Error) => {
        throw new Error(`${err.message}\nthe picker was:\n${picker}`);
      },
    );

    type("walk", "/reload");
    await until("walk", "the reload", (s) =>
      s.includes("Reloaded keybindings, extensions, skills, prompts and context files"),
    );
    type("walk", "/settings");
    await until("walk", "the settings", (s) => s.includes("autoCompaction: on") && s.includes("steeringMode"));
    key("Enter");
    await idle("the setting changed", (s) => /║ autoCompaction: off/.test(s));

    type("walk", "/model anthropic/claude-haiku-4-5");
    await until("walk", "the model", (s) => s.includes("Model: anthropic/claude-haiku-4-5"));
    type("walk", "/thinking");
    await until("walk", "the levels", (s) => s.includes("Thinking level") && s.includes("5. high"));
    key("Escape");
    await idle("the levels closed", (s) => !s.includes("5. high"));
    type("walk", "/thinking high");
    await until("walk", "the level", (s) => s.includes("Thinking level: high"));
    key("BTab");
    await until("walk", "Shift+Tab: the next level", (s) => /Thinking level: (xhigh|off)/.test(s));
    key("C-l");
    await until("walk", "Ctrl+L: the model picker", (s) => s.includes("Select model") && s.includes("faux/faux-1"));
    key("Escape");
    await idle("the model picker closed", (s) => !s.includes("Select model"));
    key("C-p");
    await until("walk", "Ctrl+P: the next model", (s) => /Switched to anthropic\//.test(s));
    type("walk", "/quit");
    await gone("walk");
  }, 120_000);
});
