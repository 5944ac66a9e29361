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
import { World } from "../support/orch-cli.js";
import { tempDir } from "../support/rpc-worker.js";
import { HAS_TMUX, paneText, terminalEnv, tuiSession } from "../support/tmux.js";

const COLS = 160;
const ROWS = 40;

describe.skipIf(!HAS_TMUX)("pi-orch tui in tmux (skipped: tmux is not installed)", () => {
  let world: World;
  /** The tmux server's socket, in a temp folder of its own: tmux never removes its socket file, so `-L` would leave one in /tmp/tmux-UID per run. */
  let socketDir: { path: string; cleanup: () => void } | undefined;
  let socket: string;

  const tmux = (...args: string[]) =>
    spawnSync("tmux", ["-S", socket, "-f", "/dev/null", ...args], { env: terminalEnv(world.env), encoding: "utf8" });
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

    const started = tmux(...tuiSession({ cols: COLS, rows: ROWS, cwd: world.cwd.path, home: world.home.path }));
    expect(started.status, started.stderr).toBe(0);

    const layout = layoutPanes(2, COLS, ROWS - 3);
    const [left, right] = layout.rects;
    const leftPane = (s: string) => columnOf(s, left!.x, left!.width);
    const rightPane = (s: string) => columnOf(s, right!.x, right!.width);

    await until(
      "both panes",
      (s) => leftPane(s).includes("alpha") && rightPane(s).includes("beta") && s.includes("● connected"),
    );
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
    await world.until(
      "the TUI to quit",
      () => String(tmux("has-session", "-t", "tui").status),
      (code) => code !== "0",
    );
    // Quitting the TUI leaves the agents running.
    expect((await world.json(["status", "alpha"])).status).toBe("idle");
  });
  it("takes 4p + text + Enter sent in one send-keys: the fourth agent gets the prompt, the others nothing", async () => {
    writeFileSync(join(world.cwd.path, "notes.txt"), "hello\n");
    await world.serve();
    for (const name of ["a1", "a2", "a3", "a4"]) await world.ok(["spawn", "--name", name, "--provider", "faux"]);
    const started = tmux(...tuiSession({ cols: COLS, rows: ROWS, cwd: world.cwd.path, home: world.home.path }));
    expect(started.status, started.stderr).toBe(0);
    const layout = layoutPanes(4, COLS, ROWS - 3);
    const pane = (s: string, i: number) => paneText(s, layout.rects[i]!);
    await until("four panes", (s) => pane(s, 3).includes("a4") && s.includes("● connected"));

    // One send-keys: the terminal delivers it in one read.
    tmux("send-keys", "-t", "tui", "4plist the files", "Enter");
    const answered = await until("a4's reply", (s) => /I found \d+ entr/.test(pane(s, 3)));
    expect(pane(answered, 3)).toContain("> list the files");
    for (const i of [0, 1, 2]) expect(pane(answered, i)).not.toContain("list the files");
    expect((await world.json(["status", "a1"])).status).toBe("idle");
    tmux("send-keys", "-t", "tui", "q");
    await world.until(
      "the TUI to quit",
      () => String(tmux("has-session", "-t", "tui").status),
      (code) => code !== "0",
    );
  });

  it("redraws after a resize, a zoom, the help and back, and draws no colour under NO_COLOR", async () => {
    await world.serve();
    await world.ok(["spawn", "--name", "alpha", "--provider", "faux"]);
    await world.ok(["spawn", "--name", "beta", "--provider", "faux"]);
    await world.ok(["spawn", "--name", "gamma", "--provider", "faux"]);
    const started = tmux(
      ...tuiSession({ cols: COLS, rows: ROWS, cwd: world.cwd.path, home: world.home.path, env: ["NO_COLOR=1"] }),
    );
    expect(started.status, started.stderr).toBe(0);
    /** Every pane of `layout` on `s`: its name inside its own rectangle, its box closed at the bottom. */
    const gridShown = (s: string, cols: number, rows: number) => {
      const lines = s.split("\n");
      const layout = layoutPanes(3, cols, rows - 3);
      return ["alpha", "beta", "gamma"].every((name, slot) => {
        const r = layout.rects[slot]!;
        const cell = (y: number) => [...(lines[1 + y] ?? "")].slice(r.x, r.x + r.width).join("");
        return cell(r.y).startsWith("╭") || cell(r.y).startsWith("╔")
          ? cell(r.y + 1).includes(name) && /^[╰╚]/.test(cell(r.y + r.height - 1))
          : false;
      });
    };
    await until("three panes", (s) => gridShown(s, COLS, ROWS) && s.includes("● connected"));
    const colours = tmux("capture-pane", "-p", "-e", "-t", "tui").stdout ?? "";
    expect(colours).not.toMatch(/\x1b\[[0-9;]*(3[0-7]|9[0-7])m/);

    tmux("resize-window", "-t", "tui", "-x", "100", "-y", "30");
    const resized = await until("the grid laid out again at 100×30", (s) => gridShown(s, 100, 30));
    expect(resized.split("\n").every((l) => [...l].length <= 100)).toBe(true);

    tmux("send-keys", "-t", "tui", "3");
    await until("focus on gamma", (s) => s.includes("╔") && s.split("\n").some((l) => l.startsWith("║ 3 gamma")));
    tmux("send-keys", "-t", "tui", "Enter");
    // The zoomed box spans the whole width (its last column drawn too), and no other pane is left.
    await until(
      "gamma zoomed",
      (s) =>
        s.includes("Esc back") &&
        s.includes("gamma") &&
        /^╔═{98}╗$/.test(s.split("\n")[1] ?? "") &&
        !s.includes("alpha") &&
        !s.includes("beta"),
    );
    tmux("send-keys", "-t", "tui", "Escape");
    await until("the grid again after the zoom", (s) => gridShown(s, 100, 30) && !s.includes("Esc back"));

    tmux("send-keys", "-t", "tui", "?");
    // tmux may show a write half applied: wait for the whole help, which must leave no pane behind.
    await until(
      "the help over the whole body, no pane left",
      (s) => s.includes("quit the TUI") && !s.includes("alpha") && !s.includes("● idle"),
    );
    tmux("send-keys", "-t", "tui", "?");
    await until("the grid again after the help", (s) => gridShown(s, 100, 30) && !s.includes("quit the TUI"));

    tmux("send-keys", "-t", "tui", "q");
    await world.until(
      "the TUI to quit",
      () => String(tmux("has-session", "-t", "tui").status),
      (code) => code !== "0",
    );
  });
});
