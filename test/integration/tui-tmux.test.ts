/**
 * `pi-orch tui` in a real terminal: tmux on a private socket runs the TUI against a
 * real supervisor with faux workers; keys go in with send-keys, the screen comes back
 * with capture-pane. Skipped (with the reason) where tmux is not installed.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { layoutPanes } from "../../cli/tui/layout.js";
import { BIN, World } from "../support/orch-cli.js";
import { tempDir } from "../support/rpc-worker.js";

const HAS_TMUX = spawnSync("tmux", ["-V"]).status === 0;
const COLS = 160;
const ROWS = 40;

/** The environment without CI markers: ink draws nothing but the last frame under CI. */
function terminalEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (k !== "CI" && k !== "CONTINUOUS_INTEGRATION" && !k.startsWith("CI_")) out[k] = v;
  return { ...out, TERM: "xterm-256color" };
}

describe.skipIf(!HAS_TMUX)("pi-orch tui in tmux (skipped: tmux is not installed)", () => {
  let world: World;
  /** The tmux server's socket, in a temp folder of its own: tmux never removes its socket file, so `-L` would leave one in /tmp/tmux-UID per run. */
  let socketDir: { path: string; cleanup: () => void } | undefined;
  let socket: string;

  const tmux = (...args: string[]) => spawnSync("tmux", ["-S", socket, "-f", "/dev/null", ...args], { env: terminalEnv(world.env), encoding: "utf8" });
  const screen = () => tmux("capture-pane", "-p", "-t", "tui").stdout ?? "";
  /** Columns [x, x+width) of every screen line: one pane column of the grid. */
  const columnOf = (text: string, x: number, width: number) =>
    text
      .split("\n")
      .map((l) => [...l].slice(x, x + width).join(""))
      .join("\n");
  const until = (what: string, test: (s: string) => boolean) => world.until(what, screen, test, 20_000);

  beforeEach(() => {
    world = new World();
    socketDir = tempDir("pi-orch-tmux-");
    socket = join(socketDir.path, "tmux.sock");
  });

  afterEach(async () => {
    try {
      if (socketDir) spawnSync("tmux", ["-S", socket, "kill-server"]);
      await world.cleanup();
    } finally {
      socketDir?.cleanup();
      socketDir = undefined;
    }
  });

  it("shows the agents, runs a prompt typed into one pane in that pane, and stops that agent with x", async () => {
    writeFileSync(join(world.cwd.path, "notes.txt"), "hello\n");
    await world.serve();
    await world.ok(["spawn", "--name", "alpha", "--provider", "faux"]);
    await world.ok(["spawn", "--name", "beta", "--provider", "faux"]);

    const started = tmux("new-session", "-d", "-s", "tui", "-x", String(COLS), "-y", String(ROWS), "-c", world.cwd.path, process.execPath, BIN, "--home", world.home.path, "--no-autostart", "tui");
    expect(started.status, started.stderr).toBe(0);

    const layout = layoutPanes(2, COLS, ROWS - 3);
    const [left, right] = layout.rects;
    const leftPane = (s: string) => columnOf(s, left!.x, left!.width);
    const rightPane = (s: string) => columnOf(s, right!.x, right!.width);

    await until("both panes", (s) => leftPane(s).includes("alpha") && rightPane(s).includes("beta") && s.includes("● connected"));
    expect(leftPane(screen())).toContain("idle");
    expect(rightPane(screen())).toContain("idle");

    tmux("send-keys", "-t", "tui", "2");
    await until("focus on beta", (s) => rightPane(s).includes("╔"));
    tmux("send-keys", "-t", "tui", "p");
    await until("the input line in beta's pane", (s) => rightPane(s).includes("prompt>"));
    tmux("send-keys", "-t", "tui", "-l", "list the files");
    await until("the typed prompt", (s) => rightPane(s).includes("list the files"));
    tmux("send-keys", "-t", "tui", "Enter");

    const answered = await until("beta's reply", (s) => /I found \d+ entr/.test(rightPane(s)));
    expect(rightPane(answered)).toContain("> list the files");
    expect(rightPane(answered)).toContain("notes.txt");
    expect(leftPane(answered)).not.toContain("list the files");
    expect(leftPane(answered)).not.toMatch(/I found/);

    tmux("send-keys", "-t", "tui", "x");
    await until("the stop to ask", (s) => s.includes("stop beta? y/n"));
    tmux("send-keys", "-t", "tui", "y");
    await until("beta stopped", (s) => rightPane(s).includes("● stopped"));
    expect((await world.json(["status", "beta"])).status).toBe("stopped");
    expect((await world.json(["status", "alpha"])).status).toBe("idle");
    expect(leftPane(screen())).toContain("idle");

    tmux("send-keys", "-t", "tui", "q");
    await world.until("the TUI to quit", () => String(tmux("has-session", "-t", "tui").status), (code) => code !== "0");
    // Quitting the TUI leaves the agents running.
    expect((await world.json(["status", "alpha"])).status).toBe("idle");
  });
});
