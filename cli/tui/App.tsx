/**
 * The TUI: every visible agent in a paged grid, or one zoomed; the keys of the help overlay;
 * the input line, the new-agent form, extension dialogs, help and diff overlays.
 * State comes from the store (throttled to ≤ 20 frames/s); commands go to `control`.
 */
import { Box, Text } from "ink";
import { KeyRouter, useKeys } from "./useKeys.js";
import { useCallback, useLayoutEffect, useRef, useState, useSyncExternalStore, type ReactNode } from "react";
import type { IpcParams } from "../../shared/schema/ipc.js";
import { commands } from "./commands.js";
import type { AgentControl } from "./control.js";
import { DialogModal } from "./DialogModal.js";
import { DiffView } from "./DiffView.js";
import { Grid } from "./Grid.js";
import { HelpOverlay, KEY_MAP, singleKeyMap } from "./HelpOverlay.js";
import { keyAction } from "./keymap.js";
import { chooseOverview, layoutList, layoutPanes } from "./layout.js";
import { NewAgentForm } from "./NewAgentForm.js";
import { PaintedList, PaintedPane } from "./PaintedPane.js";
import { listRows } from "./pane-rows.js";
import { Pane } from "./Pane.js";
import { PromptInput } from "./PromptInput.js";
import { useScreen } from "./screen.js";
import { sameForInk, visibleAgents, type AgentView, type InkDrawn, type TuiState } from "./state.js";
import type { TuiStore } from "./store.js";
import { SingleInput, singleInputRows } from "./SingleInput.js";
import { SpanRows } from "./SpanRows.js";
import { truncate } from "./text.js";
import { PaintedHeader, TuiHeader } from "./TuiHeader.js";
import { footerText, INPUT_LABEL, initialUi, uiReducer, type UiAction } from "./ui-state.js";
import { useTheme } from "./theme.js";
import { useTerminalSize } from "./useTerminalSize.js";
import { DEFAULT_KEYBINDINGS, specName, type ActionId, type Keybindings } from "./keybindings.js";
import type { TerminalReplies } from "./keys.js";
import type { LineState } from "./line-editor.js";
import type { Suggestion } from "./suggestions.js";
import type { TerminalHandover } from "./terminal-handover.js";
import { ZoomView } from "./ZoomView.js";

/** Props of App. */
export interface AppProps {
  store: TuiStore;
  control: AgentControl;
  /** `grid`: pi-orch tui. `single`: one agent, always zoomed, input always open (pi on a terminal). */
  mode?: "grid" | "single";
  /** A fixed size instead of the terminal's (tests, benchmarks). */
  cols?: number;
  rows?: number;
  /** The cwd the new-agent form proposes. */
  defaultCwd?: string;
  /** Added to every spawn from the form (the demo's provider). */
  spawnDefaults?: Partial<IpcParams<"spawn">>;
  /** The diff text of a worktree agent (`d`). */
  loadDiff?: (agent: AgentView) => Promise<string>;
  /** The user quit (`q`, Ctrl+C; twice in single mode). */
  onQuit: () => void;
  title?: string;
  /** What quitting does to the agents, for the help (default: they keep running). */
  quitNote?: string;
  /** How to bring a supervisor back, shown while it is unreachable (the TUI only reconnects). */
  reconnectHint?: string;
  /** Single mode: a submitted line the host performs itself (a built-in command, `!cmd`); true when it did. */
  onLine?: (text: string, host: SingleHost) => boolean;
  /** Single mode: one of pi's actions the host performs (Ctrl+L, Ctrl+P, Shift+Tab, Esc on an idle agent, Alt+Up, Ctrl+G…), with the editor's line. */
  onAction?: (id: ActionId, host: SingleHost, line: LineState) => void;
  /** Single mode: the list above the editor for the line being typed (`/commands`, `@files`, paths after Tab). */
  suggest?: (line: LineState, tabbed: boolean) => Suggestion[];
  /** Single mode: pi's keys (keybindings.json), as they are now (`/reload` reads them again). */
  keybindings?: () => Keybindings;
  /** Single mode: thinking blocks start hidden (pi's hideThinkingBlock setting). */
  hideThinking?: boolean;
  /** Lends the terminal to another program (the key reader stops while it has it). */
  handover?: TerminalHandover;
  /** Single mode: the footer's status (session name, tokens, cost, context, model), read at each render. */
  status?: () => string;
  /** The terminal's answers to our queries (program status), taken out of the keys. */
  replies?: TerminalReplies;
}

/** What the single mode's host may do to the view. */
export interface SingleHost {
  /** Replace the editor's text (a fork's message, queued messages pulled back). */
  setEditor(text: string): void;
  showHelp(): void;
  quit(): void;
}

const GRID_HINT =
  "←↑↓→/Tab focus · Enter zoom · v list/grid · p prompt · s steer · f follow-up · a abort · x stop · r restart · n new · d diff · ? help · q quit";
const ZOOM_HINT =
  "Esc back · ↑↓ PgUp PgDn scroll · p prompt · s steer · f follow-up · a abort · x stop · r restart · d diff · ? help";
const SINGLE_HINT =
  "Enter send (steer while running) · Alt+Enter follow-up · Esc abort · / commands · @ files · ? help · Ctrl+C twice quit";

/**
 * The whole TUI, under the KeyRouter every key handler joins (its own too: a handler of
 * the component that mounts the router would be outside it).
 */
export function App(props: AppProps) {
  return (
    <KeyRouter replies={props.replies} handover={props.handover}>
      <Tui {...props} />
    </KeyRouter>
  );
}

/**
 * The view state (ui-state.ts), each change applied to the last one at once (a ref):
 * two dispatches before React renders both count.
 */
function useUi(mode: "grid" | "single", hideThinking?: boolean) {
  const [ui, setUi] = useState(() => initialUi(mode, hideThinking));
  const current = useRef(ui);
  const dispatch = useCallback((action: UiAction) => {
    current.current = uiReducer(current.current, action);
    setUi(current.current);
  }, []);
  return { ui, current, dispatch };
}

function Tui(props: AppProps) {
  const { store, control, mode = "grid", onQuit } = props;
  const theme = useTheme();
  const screen = useScreen();
  // The state of the last render and what ink drew of it (set after each render); null: ink draws everything.
  const lastDrawn = useRef<{ state: TuiState; drawn: InkDrawn } | null>(null);
  // A change only painted panes show is not passed on: no React render, no ink frame. Any
  // render (a key, a resize) still reads the store's current state.
  const subscribe = useCallback(
    (onChange: () => void) =>
      store.subscribe(() => {
        const last = lastDrawn.current;
        if (!last || !sameForInk(last.state, store.getState(), last.drawn)) onChange();
      }),
    [store],
  );
  const state = useSyncExternalStore(subscribe, store.getState);
  const { cols, rows } = useTerminalSize({ cols: props.cols, rows: props.rows });
  const { ui, current, dispatch } = useUi(mode, props.hideThinking);
  const scrollMax = useRef(0);
  const keys = props.keybindings?.() ?? DEFAULT_KEYBINDINGS;
  const host: SingleHost = {
    setEditor: (text) => dispatch({ type: "set_editor", text }),
    showHelp: () => dispatch({ type: "overlay", overlay: { kind: "help" } }),
    quit: onQuit,
  };
  const cmd = commands({
    control,
    store,
    dispatch,
    loadDiff: props.loadDiff,
    spawnDefaults: props.spawnDefaults,
    defaultCwd: props.defaultCwd,
    quit: onQuit,
    redraw: () => screen?.redraw(),
  });

  const agents = visibleAgents(state);
  // One line of header and one of footer; the last terminal row stays free so ink
  // updates in place instead of clearing the screen every frame.
  const bodyRows = Math.max(3, rows - 3);
  const layout = layoutPanes(agents.length, cols, bodyRows);
  const list = layoutList(agents.length, cols, bodyRows);
  const overview = mode === "grid" ? chooseOverview(agents.length, cols, bodyRows, ui.view) : "grid";
  const { perPage, pages } = overview === "list" ? list : layout;
  const focusIndex = Math.max(
    0,
    agents.findIndex((a) => a.name === ui.focus),
  );
  const focused: AgentView | undefined = agents[focusIndex];
  const page = perPage > 0 ? Math.floor(focusIndex / perPage) : 0;
  const pageAgents = agents.slice(page * perPage, (page + 1) * perPage);
  // The agents with a pane: the page's in the grid, the focused one beside the list.
  const paneAgents = overview === "grid" ? pageAgents : focused && list.paneWidth > 0 ? [focused] : [];
  const showZoom = ui.zoomed && focused !== undefined;
  const dialog = focused?.dialogs[0];
  const { overlay, input } = ui;

  const modalActive = dialog !== undefined && overlay === null;
  const singleInputActive = mode === "single" && !modalActive && overlay === null;
  useKeys(
    (ch, key) => {
      // The key is read against what the screen shows (the editor may have opened the help on
      // this same `?` already), the armed quit as it is now (a second Ctrl+C before a render).
      const before = { ...ui, quitArmed: current.current.quitArmed };
      // Its status as it is now: a status change alone renders nothing when the screen paints the header.
      const live = focused && (store.getState().agents[focused.name] ?? focused);
      const action = keyAction(
        {
          mode,
          agents: agents.length,
          focus: focusIndex,
          columns: overview === "list" ? 1 : layout.columns,
          perPage,
          overview,
          zoomed: showZoom,
          focusedStatus: live?.status ?? null,
          overlay: before.overlay?.kind === "help" || before.overlay?.kind === "diff" ? before.overlay.kind : null,
          confirming: before.confirm !== null,
          quitArmed: before.quitArmed,
          clearKeys: keys
            .keysOf("app.clear")
            .map(specName)
            .filter((n) => keys.action(n) === "app.clear"),
        },
        { input: ch, key },
      );
      dispatch({
        type: "key",
        action,
        at: {
          agents: agents.map((a) => a.name),
          focused: live ? { name: live.name, status: live.status } : null,
          rows,
          scrollMax: scrollMax.current,
        },
      });
      cmd.afterKey(action, before, live);
    },
    { isActive: input === null && !modalActive && overlay?.kind !== "new" },
  );

  /** One of pi's actions from the single view's editor: the view's own, or the host's. */
  const editorAction = (id: ActionId, line: LineState) => {
    if (id === "app.clear") return; // the key handler above arms the quit
    if (id === "app.tools.expand") return dispatch({ type: "toggle_expanded" });
    if (id === "app.thinking.toggle") return dispatch({ type: "toggle_thinking" });
    props.onAction?.(id, host, line);
  };
  const inputFor = (agent: AgentView, width: number): ReactNode => {
    if (mode === "single")
      return (
        <SingleInput
          ui={ui}
          dispatch={dispatch}
          busy={agent.status === "busy"}
          width={width}
          isActive={singleInputActive}
          keys={keys}
          suggest={props.suggest}
          own={(text) => props.onLine?.(text, host) === true}
          send={(kind, text) => cmd.send(kind, agent, text)}
          abort={() => cmd.abort(agent.name)}
          onAction={editorAction}
          onExit={onQuit}
          onHelp={host.showHelp}
        />
      );
    if (!input || input.agent !== agent.name) return undefined;
    return (
      <PromptInput
        label={INPUT_LABEL[input.kind]}
        width={width}
        onSubmit={(text) => {
          dispatch({ type: "close_input" });
          cmd.send(input.kind, agent, text);
        }}
        onCancel={() => dispatch({ type: "close_input" })}
      />
    );
  };
  const modalFor = (agent: AgentView, width: number): ReactNode => {
    const d = agent.dialogs[0];
    if (!d) return undefined;
    return (
      <DialogModal
        key={d.id}
        dialog={d}
        width={width}
        isActive={agent === focused && overlay === null}
        onAnswer={(a) => cmd.answer(agent, d.id, a)}
      />
    );
  };

  // Ink draws a pane with an input line or a dialog (they take keys); the screen paints the rest, below the header row.
  const inkPane = (a: AgentView) => mode === "single" || input?.agent === a.name || a.dialogs.length > 0;
  const drawnNames = new Set<string>(overlay || showZoom ? [] : paneAgents.filter(inkPane).map((a) => a.name));
  // Zoomed, ink draws all of the agent but the transcript's body (a modal there is ink's too).
  const bodyNames = new Set<string>(!overlay && showZoom ? [focused.name] : []);
  if (showZoom && !overlay && focused.dialogs.length > 0) drawnNames.add(focused.name);
  /** An agent's pane at body cell (x, y): painted, or ink's when it holds an input line or a dialog. */
  const paneFor = (agent: AgentView, x: number, y: number, width: number, height: number, slotKey?: number) => {
    const common = { width, height, focused: agent === focused, slotKey };
    if (screen && !inkPane(agent))
      return <PaintedPane store={store} screen={screen} name={agent.name} x={x} y={1 + y} {...common} />;
    return (
      <Pane
        agent={agent}
        now={state.now}
        {...common}
        input={inputFor(agent, width - 4)}
        modal={modalFor(agent, width - 4)}
      />
    );
  };
  let body: ReactNode;
  if (overlay?.kind === "help") {
    const rows =
      mode === "single"
        ? singleKeyMap(keys)
        : props.quitNote
          ? KEY_MAP.map(([k, what]): readonly [string, string] =>
              k.startsWith("q") ? [k, `quit the TUI (${props.quitNote})`] : [k, what],
            )
          : KEY_MAP;
    body = <HelpOverlay width={cols} height={bodyRows} keys={rows} />;
  } else if (overlay?.kind === "diff") {
    body = <DiffView title={overlay.title} text={overlay.text} width={cols} height={bodyRows} top={overlay.top} />;
  } else if (overlay?.kind === "new") {
    body = (
      <NewAgentForm
        key={overlay.error ?? ""}
        width={Math.min(cols, 100)}
        defaultCwd={props.defaultCwd ?? process.cwd()}
        initial={overlay.values}
        error={overlay.error}
        onSubmit={cmd.spawn}
        onCancel={() => dispatch({ type: "overlay", overlay: null })}
      />
    );
  } else if (showZoom) {
    body = (
      <ZoomView
        agent={focused}
        width={cols}
        height={bodyRows}
        now={state.now}
        scroll={ui.scroll}
        onScrollMax={(m) => (scrollMax.current = m)}
        input={inputFor(focused, cols - 4)}
        inputRows={mode === "single" ? singleInputRows(props.suggest?.(ui.typed, ui.tabbed).length ?? 0) : 1}
        resultLines={ui.expanded ? EXPANDED_RESULT_LINES : undefined}
        hideThinking={ui.hideThinking}
        modal={modalFor(focused, cols - 4)}
        hint={ZOOM_HINT}
        painted={screen ? { store, screen, top: 1 } : undefined}
      />
    );
  } else if (agents.length === 0) {
    body = (
      <Box height={bodyRows} flexDirection="column" paddingX={1}>
        <Text dimColor>
          no live agents: press n to start one, or run pi-orch spawn --prompt "…" in another terminal
        </Text>
      </Box>
    );
  } else if (overview === "list") {
    const names = pageAgents.map((a) => a.name);
    // The list's last column stays blank: a gap before the pane's border.
    const listed = { x: 0, y: 1, width: list.listWidth - 1, height: bodyRows };
    body = (
      <Box flexDirection="row" height={bodyRows}>
        <Box width={list.listWidth} height={bodyRows} flexDirection="column" overflowY="hidden">
          {screen ? (
            <PaintedList store={store} screen={screen} names={names} focus={focused?.name ?? null} {...listed} />
          ) : (
            <SpanRows rows={listRows(pageAgents, listed.width, state.now, focused?.name ?? null)} />
          )}
        </Box>
        {paneAgents.map((a) => (
          <Box key={a.name} width={list.paneWidth} height={bodyRows}>
            {paneFor(a, list.listWidth, 0, list.paneWidth, bodyRows)}
          </Box>
        ))}
      </Box>
    );
  } else {
    body = (
      <Grid
        layout={layout}
        agents={pageAgents}
        renderPane={(agent, slot, width, height) => {
          const rect = layout.rects[slot]!;
          return paneFor(agent, rect.x, rect.y, width, height, slot < 9 ? slot + 1 : undefined);
        }}
      />
    );
  }

  // The clock shows in ink's part when ink draws an agent or the header counts an outage.
  const inkClock = drawnNames.size > 0 || bodyNames.size > 0 || state.connection.state !== "connected";
  // The screen paints the grid's header (64 agents change their states often); single mode's is ink's.
  const paintedHeader = screen !== null && mode !== "single";
  useLayoutEffect(() => {
    lastDrawn.current = screen
      ? {
          state,
          drawn: {
            agents: drawnNames,
            bodies: bodyNames,
            clock: inkClock,
            header: !paintedHeader,
          },
        }
      : null;
  });

  const waiting = agents.filter((a) => a.dialogs.length > 0 && a !== focused).map((a) => a.name);
  const footer = footerText(ui, {
    mode,
    zoomed: showZoom,
    waiting,
    status: props.status?.(),
    hint: mode === "single" ? SINGLE_HINT : GRID_HINT,
  });
  const { flash, confirm } = ui;
  // The grid's header, painted by the screen or drawn by ink.
  const header = { title: props.title ?? "pi-orch", page, pages, width: cols, hint: props.reconnectHint };
  return (
    <Box flexDirection="column" width={cols}>
      {mode === "single" ? (
        <Text bold wrap="truncate">
          {props.title ?? "pi"} <Text dimColor>· interactive · {truncate(props.defaultCwd ?? "", cols - 20)}</Text>
        </Text>
      ) : paintedHeader ? (
        <>
          <Text> </Text>
          <PaintedHeader store={store} screen={screen} {...header} />
        </>
      ) : (
        <TuiHeader state={state} {...header} />
      )}
      {body}
      <Text
        wrap="truncate"
        color={theme.color(flash?.error ? "red" : confirm || (waiting.length > 0 && !flash) ? "yellow" : undefined)}
        dimColor={!confirm && !flash && waiting.length === 0}
      >
        {truncate(footer, cols) || " "}
      </Text>
    </Box>
  );
}

/** Lines a tool result shows when Ctrl+O expanded them (under text.ts's cache limit of 1000). */
const EXPANDED_RESULT_LINES = 999;
