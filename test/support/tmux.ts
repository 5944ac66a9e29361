/**
 * What the tmux-driven tests share: the environment a program in the pane gets, the
 * `new-session` arguments that open `pi-orch tui` on a home, and a driver for a private
 * tmux server.
 */
import { spawnSync } from "node:child_process";
import { until } from "../faults/support.js";
import { BIN } from "./orch-cli.js";

/** Whether tmux is installed (the tmux tests skip, saying so, where it is not). */
export const HAS_TMUX = spawnSync("tmux", ["-V"]).status === 0;

/** `env` without CI markers (ink draws only the last frame under CI), in a terminal tmux knows. */
export function terminalEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env))
    if (k !== "CI" && k !== "CONTINUOUS_INTEGRATION" && !k.startsWith("CI_")) out[k] = v;
  return { ...out, TERM: "xterm-256color" };
}

/**
 * What a captured screen `s` shows inside the pane at `rect` of the TUI's layout (the
 * header line above the grid skipped), line by line.
 */
export function paneText(s: string, rect: { x: number; y: number; width: number; height: number }): string {
  return s
    .split("\n")
    .slice(1 + rect.y, 1 + rect.y + rect.height)
    .map((l) => [...l].slice(rect.x, rect.x + rect.width).join(""))
    .join("\n");
}

/** `new-session` arguments: session `tui`, `cols`×`rows`, running `pi-orch --home HOME tui` in `cwd` with `env` (`K=V`) set. */
export function tuiSession(o: { cols: number; rows: number; cwd: string; home: string; env?: string[] }): string[] {
  return [
    "new-session",
    "-d",
    "-s",
    "tui",
    "-x",
    String(o.cols),
    "-y",
    String(o.rows),
    ...(o.env ?? []).flatMap((e) => ["-e", e]),
    "-c",
    o.cwd,
    process.execPath,
    BIN,
    "--home",
    o.home,
    "--no-autostart",
    "tui",
  ];
}

/**
 * One private tmux server (its own socket) for a test: run a program in a named
 * session, type into it, read its screen as a person sees it, wait for what shows.
 * `kill` ends the server and everything in it.
 */
export class TmuxDriver {
  constructor(
    private readonly socket: string,
    private readonly env: () => NodeJS.ProcessEnv,
  ) {}

  /** Run a tmux command on this server. */
  run(...args: string[]) {
    return spawnSync("tmux", ["-S", this.socket, "-f", "/dev/null", ...args], { env: this.env(), encoding: "utf8" });
  }

  /** A new `cols`×`rows` session `name` in `cwd` running `command` (a shell line). */
  open(name: string, o: { cols: number; rows: number; cwd: string }, command: string): void {
    const r = this.run(
      "new-session",
      "-d",
      "-s",
      name,
      "-x",
      String(o.cols),
      "-y",
      String(o.rows),
      "-c",
      o.cwd,
      command,
    );
    if (r.status !== 0) throw new Error(`tmux new-session ${name} failed: ${r.stderr}`);
  }

  /** What session `name` shows now. */
  screen(name: string): string {
    return this.run("capture-pane", "-p", "-t", name).stdout ?? "";
  }

  /** Wait until the screen passes `test`; returns that screen, or fails with `what` and the screen. */
  async until(name: string, what: string, test: (screen: string) => boolean, timeoutMs = 20_000): Promise<string> {
    try {
      return await until(
        () => {
          const screen = this.screen(name);
          return test(screen) && screen;
        },
        timeoutMs,
        what,
      );
    } catch (err) {
      // The screen when it gave up, not when it began to wait.
      throw new Error(`${(err as Error).message}; screen:\n${this.screen(name)}`);
    }
  }

  /** Wait until session `name` has ended. */
  gone(name: string): Promise<boolean> {
    return until(() => this.run("has-session", "-t", name).status !== 0, 20_000, `session ${name} to end`);
  }

  /** Type `text` literally, then Enter. */
  type(name: string, text: string): void {
    this.run("send-keys", "-t", name, "-l", text);
    this.run("send-keys", "-t", name, "Enter");
  }

  /** Type `text` literally, without Enter. */
  write(name: string, text: string): void {
    this.run("send-keys", "-t", name, "-l", text);
  }

  /** Press keys by tmux's names (`C-g`, `M-Enter`, `BTab`, `Escape`). */
  keys(name: string, ...keys: string[]): void {
    this.run("send-keys", "-t", name, ...keys);
  }

  /** End the server and every program in it. */
  kill(): void {
    this.run("kill-server");
  }
}
