/**
 * What the tmux-driven tests share: the environment a program in the pane gets, and the
 * `new-session` arguments that open `pi-orch tui` on a home.
 */
import { spawnSync } from "node:child_process";
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
