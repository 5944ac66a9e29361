/** Shared pieces of the TUI component tests: agent infos, a fake control, a mounted App. */
import { render } from "ink-testing-library";
import type { IpcParams } from "../../../shared/schema/ipc.js";
import type { AgentInfo, AgentStatus } from "../../../shared/schema/agent.js";
import { DEFAULT_RESTART_POLICY } from "../../../supervisor/types.js";
import { App } from "../../../cli/tui/App.js";
import type { AgentControl } from "../../../cli/tui/control.js";
import { readRpcAnswer, type RpcAnswer, type RpcCommand } from "../../../shared/schema/rpc.js";
import { Screen, ScreenContext, type PaintedPane } from "../../../cli/tui/screen.js";
import { TuiStore } from "../../../cli/tui/store.js";
import { makeTheme, ThemeProvider } from "../../../cli/tui/theme.js";

/** An AgentInfo as `list` returns it. */
export function info(name: string, status: AgentStatus = "idle", extra: Partial<AgentInfo> = {}): AgentInfo {
  return {
    name,
    id: `id-${name}`,
    cwd: `/work/${name}`,
    provider: "faux",
    model: "faux-1",
    policy: DEFAULT_RESTART_POLICY,
    onStall: "notify",
    limits: {},
    createdAt: 1_000 + Number(name.replace(/\D/g, "") || 0),
    status,
    pid: 100,
    restarts: 0,
    lastExit: null,
    sessionFile: null,
    lastSeenAt: null,
    lastSeq: 0,
    startedAt: 1_000,
    ...extra,
  };
}

/** A control that records what the TUI asked for. */
export class FakeControl implements AgentControl {
  readonly calls: { method: string; agent?: string; arg?: unknown }[] = [];
  async rpc<C extends RpcCommand>(agent: string, command: C): Promise<RpcAnswer<C["type"]>> {
    this.calls.push({ method: "rpc", agent, arg: command });
    // pi's answer without data, read as the TUI reads a worker's.
    return readRpcAnswer<C["type"]>(agent, command.type, { type: "response", command: command.type, success: true });
  }
  async stop(agent: string): Promise<AgentInfo> {
    this.calls.push({ method: "stop", agent });
    return info(agent, "stopped");
  }
  async restart(agent: string): Promise<AgentInfo> {
    this.calls.push({ method: "restart", agent });
    return info(agent, "starting");
  }
  async spawn(params: IpcParams<"spawn">): Promise<AgentInfo> {
    this.calls.push({ method: "spawn", arg: params });
    return info(params.name ?? "new-agent", "starting");
  }
}

/** `agent-01`, `agent-02`, … */
export function names(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `agent-${String(i + 1).padStart(2, "0")}`);
}

/** Mount the App on a fake terminal (grid panes painted by a Screen unless `painted: false`) of `cols` × `rows` with `agents` listed and connected. */
export function mount(
  agents: AgentInfo[],
  opts: {
    cols?: number;
    rows?: number;
    mode?: "grid" | "single";
    color?: boolean;
    quitNote?: string;
    reconnectHint?: string;
    painted?: boolean;
  } = {},
) {
  const store = new TuiStore({ frameMs: 10 });
  store.dispatch({ type: "connection", state: "connected", at: Date.now() });
  store.dispatch({ type: "agents", agents });
  const control = new FakeControl();
  let quit = 0;
  const cols = opts.cols ?? 100;
  const rows = opts.rows ?? 30;
  // The screen paints the grid's panes as it does on a terminal; what it writes is not read
  // here (the tmux test reads a real terminal): frame() lays its panes over ink's frame.
  const screen =
    opts.painted === false
      ? null
      : new Screen({ columns: cols, rows, write: () => true, on: () => undefined, off: () => undefined });
  const r = render(
    <ScreenContext.Provider value={screen}>
      <ThemeProvider value={makeTheme(opts.color ?? false)}>
        <App
          store={store}
          control={control}
          cols={cols}
          rows={rows}
          mode={opts.mode}
          quitNote={opts.quitNote}
          reconnectHint={opts.reconnectHint}
          onQuit={() => quit++}
        />
      </ThemeProvider>
    </ScreenContext.Provider>,
  );
  return {
    ...r,
    store,
    control,
    quits: () => quit,
    frame: () => overlay(r.lastFrame() ?? "", screen ? [...screen.painted()] : []),
    typeAtFrame: (shows: (frame: string) => boolean, keys: string) => typeAtFrame(r, shows, keys),
    cleanup: () => {
      r.unmount();
      screen?.dispose();
      store.dispose();
    },
  };
}

/**
 * Type `keys` as soon as ink writes a frame that `shows` accepts: in the first microtask
 * after that commit, before React's passive effects (where ink's own useInput subscribes).
 * A user reacting to a frame is never faster; a listener that joins only in a passive
 * effect misses these keys. Resolves once they are typed.
 */
function typeAtFrame(r: ReturnType<typeof render>, shows: (frame: string) => boolean, keys: string): Promise<void> {
  const stdout = r.stdout as unknown as { write: (frame: string) => void };
  const write = stdout.write;
  return new Promise((typed) => {
    stdout.write = (frame: string) => {
      write(frame);
      if (!shows(frame)) return;
      stdout.write = write;
      queueMicrotask(() => {
        r.stdin.write(keys);
        typed();
      });
    };
  });
}

/** Ink's frame with the painted panes laid over it, as the terminal shows them (colour off: one code unit a cell). */
function overlay(frame: string, panes: PaintedPane[]): string {
  const lines = frame.split("\n");
  for (const p of panes) {
    p.rows.forEach((row, i) => {
      const y = p.y + i;
      if (y >= lines.length) return;
      const line = lines[y]!.padEnd(p.x + row.length);
      lines[y] = line.slice(0, p.x) + row + line.slice(p.x + row.length);
    });
  }
  return lines.map((l) => l.trimEnd()).join("\n");
}
