/**
 * The single-agent `pi` on a real terminal (issue 28): tmux on a private socket runs
 * `pi --provider faux`; keys go in with send-keys, the screen comes back with
 * capture-pane, and we assert what a person sees. Built-in slash commands (with the `/`
 * completion list), `!cmd` / `!!cmd`, `?`, `/quit`, Ctrl+D, and `pi -c` drawing the
 * resumed conversation. Skipped (with the reason) where tmux is not installed.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PI_BIN, tempDir } from "../support/rpc-worker.js";
import { until as waitFor } from "../faults/support.js";
import { HAS_TMUX, terminalEnv } from "../support/tmux.js";

describe.skipIf(!HAS_TMUX)("pi on a terminal, in tmux (skipped: tmux is not installed)", () => {
  let dir: { path: string; cleanup: () => void };
  let socket: string;
  let agentDir: string;

  const env = (): NodeJS.ProcessEnv => ({
    ...terminalEnv(process.env),
    NO_COLOR: "1",
    PI_CODING_AGENT_DIR: agentDir,
    PI_ORCH_HOME: "",
  });
  const tmux = (...args: string[]) =>
    spawnSync("tmux", ["-S", socket, "-f", "/dev/null", ...args], { env: env(), encoding: "utf8" });
  const screen = (s: string) => tmux("capture-pane", "-p", "-t", s).stdout ?? "";
  const until = (s: string, what: string, test: (text: string) => boolean) =>
    waitFor(() => test(screen(s)) && screen(s), 20_000, `${what}; screen:\n${screen(s)}`);
  const gone = (s: string) => waitFor(() => tmux("has-session", "-t", s).status !== 0, 20_000, `${s} exited`);
  const type = (s: string, text: string) => {
    tmux("send-keys", "-t", s, "-l", text);
    tmux("send-keys", "-t", s, "Enter");
  };
  const start = (s: string, ...args: string[]) => {
    const r = tmux(
      "new-session",
      "-d",
      "-s",
      s,
      "-x",
      "120",
      "-y",
      "40",
      "-c",
      dir.path,
      `${process.execPath} ${PI_BIN} --provider faux ${args.join(" ")}`,
    );
    expect(r.status, r.stderr).toBe(0);
    return until(s, "the prompt", (t) => t.includes("prompt>"));
  };

  beforeEach(() => {
    dir = tempDir("pi-orch-pi-tty-");
    socket = join(dir.path, "tmux.sock");
    agentDir = join(dir.path, "agent");
  });
  afterEach(() => {
    spawnSync("tmux", ["-S", socket, "kill-server"]);
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
});
