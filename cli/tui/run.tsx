/**
 * Runs the TUI on this terminal: the store, the link to the supervisor, ink on the
 * alternate screen (so quitting gives the shell back as it was). Imported lazily by
 * the commands, so ink and react load only when a TUI opens.
 */
import { render } from "ink";
import type { ReactElement } from "react";
import type { IpcClient } from "../../ipc/client.js";
import type { IpcParams } from "../../shared/schema/ipc.js";
import { App } from "./App.js";
import { worktreeDiff } from "./diff.js";
import { Screen, ScreenContext } from "./screen.js";
import { TuiStore } from "./store.js";
import { SupervisorLink } from "./supervisor-link.js";
import { makeTheme, ThemeProvider } from "./theme.js";
import type { TerminalReplies } from "./keys.js";
import { ProgramStatusReporter } from "./program-status.js";
import { TerminalHandover } from "./terminal-handover.js";

/** Options of the multi-pane TUI. */
export interface RunTuiOptions {
  /** Open a connection; attempt 0 may start a supervisor, later attempts reconnect. */
  connect: (attempt: number) => Promise<IpcClient>;
  color: boolean;
  defaultCwd: string;
  spawnDefaults?: Partial<IpcParams<"spawn">>;
  title?: string;
  /** What quitting does to the agents, for the help (default: they keep running). */
  quitNote?: string;
  /** How to bring a supervisor back, shown while it is unreachable. */
  reconnectHint?: string;
  /** The supervisor's home, for the advice on a missing API key. */
  home?: string;
}

// The alternate screen, and bracketed paste: pasted text comes marked, so the input
// line keeps its line breaks instead of taking each as Enter.
const ALT_SCREEN_ON = "\x1b[?1049h\x1b[H\x1b[?2004h";
const ALT_SCREEN_OFF = "\x1b[?2004l\x1b[?1049l";

/** Open the TUI and resolve when the user quits. The agents keep running. */
export async function runTui(opts: RunTuiOptions): Promise<void> {
  const store = new TuiStore();
  const link = new SupervisorLink(store, { connect: opts.connect, home: opts.home });
  await mountFullScreen(store, (quit, replies) => (
    <ThemeProvider value={makeTheme(opts.color)}>
      <App
        store={store}
        replies={replies}
        control={link}
        defaultCwd={opts.defaultCwd}
        spawnDefaults={opts.spawnDefaults}
        loadDiff={worktreeDiff}
        onQuit={quit}
        title={opts.title}
        quitNote={opts.quitNote}
        reconnectHint={opts.reconnectHint}
      />
    </ThemeProvider>
  ));
  await link.close();
  store.dispose();
}

/**
 * Render `tree` on the alternate screen until `quit` is called or a terminating
 * signal arrives; restore the screen afterwards. The terminal is told the state of the
 * store's agents (OSC 7501) where it supports that; `tree` gets the key reader's filter
 * for the terminal's replies and the handover that lends the terminal to another program.
 */
export async function mountFullScreen(
  store: TuiStore,
  tree: (quit: () => void, replies: TerminalReplies, handover: TerminalHandover) => ReactElement,
): Promise<void> {
  process.stdout.write(ALT_SCREEN_ON);
  const status = new ProgramStatusReporter(store, (text) => process.stdout.write(text));
  let quit = () => {};
  // Ink renders whole frames into the screen (debug mode: no log-update, no throttle of its
  // own; the store already throttles), and the screen writes the rows that changed.
  const screen = new Screen(process.stdout);
  const handover = new TerminalHandover({
    write: (text) => process.stdout.write(text),
    drawing: (on) => screen.setDrawing(on),
    enter: ALT_SCREEN_ON,
    leave: `\x1b[0m\x1b[?25h${ALT_SCREEN_OFF}`,
    input: process.stdin,
  });
  const instance = render(
    <ScreenContext.Provider value={screen}>{tree(() => quit(), status.replies, handover)}</ScreenContext.Provider>,
    {
      stdout: screen.inkStdout,
      debug: true,
      exitOnCtrlC: false,
      patchConsole: false,
    },
  );
  quit = () => instance.unmount();
  const signals = ["SIGTERM", "SIGHUP"] as const;
  for (const s of signals) process.on(s, quit);
  try {
    await instance.waitUntilExit();
  } finally {
    for (const s of signals) process.off(s, quit);
    status.dispose();
    screen.dispose();
    process.stdout.write(ALT_SCREEN_OFF);
  }
}
