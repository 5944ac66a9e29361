/**
 * `pi` on a terminal with no task: the TUI's zoomed view over one in-process agent.
 * Type a prompt, watch it stream, steer (Enter) or follow up (Tab) while it runs,
 * Esc aborts, Ctrl+C twice quits.
 */
import type { ExtensionUi } from "../../worker/extensions/hooks.js";
import type { AgentSession } from "../../worker/core/agent-session.js";
import { colorEnabled } from "../context.js";
import { App } from "./App.js";
import { LocalAgent } from "./local-agent.js";
import { mountFullScreen } from "./run.js";
import { TuiStore } from "./store.js";
import { makeTheme, ThemeProvider } from "./theme.js";

/** Run the interactive mode until the user quits; `setUi` installs the extensions' dialogs. Resolves with the exit code. */
export async function runInteractive(runtime: AgentSession, setUi: (ui: ExtensionUi) => void): Promise<number> {
  const store = new TuiStore();
  const agent = new LocalAgent(runtime, store);
  setUi(agent);
  await runtime.start();
  await mountFullScreen((quit) => (
    <ThemeProvider value={makeTheme(colorEnabled())}>
      <App store={store} control={agent} mode="single" onQuit={quit} defaultCwd={runtime.cwd} />
    </ThemeProvider>
  ));
  agent.dispose();
  store.dispose();
  await runtime.shutdown();
  return 0;
}
