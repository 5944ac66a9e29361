/**
 * The TUI: every visible agent in a paged grid, or one zoomed; the keys of the help overlay;
 * the input line, the new-agent form, extension dialogs, help and diff overlays.
 * State comes from the store (throttled to ≤ 20 frames/s); commands go to `control`.
 */
import { Box, Text } from "ink";
import { KeyRouter, useKeys } from "./useKeys.js";
import { useCallback, useLayoutEffect, useRef, useState, useSyncExternalStore, type ReactNode } from "react";
import type { IpcParams } from "../../shared/schema/ipc.js";
import type { AgentControl } from "./control.js";
import { readPromptAnswer } from "../../shared/prompt-answer.js";
import { DialogModal, type DialogAnswer } from "./DialogModal.js";
import { DiffView } from "./DiffView.js";
import { Grid } from "./Grid.js";
import { HelpOverlay, KEY_MAP, singleKeyMap } from "./HelpOverlay.js";
import { keyAction } from "./keymap.js";
import { layoutPanes } from "./layout.js";
import { NewAgentForm, type NewAgentValues } from "./NewAgentForm.js";
import { PaintedPane } from "./PaintedPane.js";
import { Pane } from "./Pane.js";
import { PromptInput } from "./PromptInput.js";
import { useScreen } from "./screen.js";
import { activityCounts } from "../../shared/activity.js";
import { formatCost } from "../../shared/usage.js";
import { nameProblem } from "../../shared/agent-name.js";
import { agentActivity, sameForInk, visibleAgents, type AgentView, type InkDrawn, type TuiState } from "./state.js";
import type { TuiStore } from "./store.js";
import { formatElapsed, truncate } from "./text.js";
import { useTheme } from "./theme.js";
import { useTerminalSize } from "./useTerminalSize.js";
import { DEFAULT_KEYBINDINGS, sequenceName, type ActionId, type Keybindings } from "./keybindings.js";
import { keyName, type TerminalReplies } from "./keys.js";
import { lineState, type LineState } from "./line-editor.js";
import { tabCompletion, type Suggestion } from "./suggestions.js";
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

/** Completions the single view lists above its editor. */
const SUGGESTIONS = 6;

type InputKind = "prompt" | "steer" | "follow_up";
type Overlay =
  | { kind: "help" }
  | { kind: "new"; values?: NewAgentValues; error?: string }
  | { kind: "diff"; title: string; text: string; top: number }
  | null;

const INPUT_LABEL: Record<InputKind, string> = { prompt: "prompt", steer: "steer", follow_up: "follow-up" };
const GRID_HINT =
  "←↑↓→/Tab focus · Enter zoom · p prompt · s steer · f follow-up · a abort · x stop · r restart · n new · d diff · ? help · q quit";
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
  const [focus, setFocus] = useState<string | null>(null);
  const [zoomed, setZoomed] = useState(mode === "single");
  const [input, setInput] = useState<{ kind: InputKind; agent: string } | null>(null);
  const [overlay, setOverlay] = useState<Overlay>(null);
  const [flash, setFlash] = useState<{ text: string; error: boolean } | null>(null);
  // A destructive key (x stop, r restart) asks first; y does it, any other key does not.
  const [confirm, setConfirm] = useState<{ question: string; run: () => void } | null>(null);
  const [scroll, setScroll] = useState(0);
  // A ref, not state: the second Ctrl+C may arrive before the handler sees a re-render.
  const quitArmed = useRef(false);
  const scrollMax = useRef(0);
  // Single mode: the editor's line as typed (for the list above it), whether Tab asked for
  // paths, and a text put into it (a new editor mounts with it).
  const [typed, setTyped] = useState<LineState>(lineState);
  const [tabbed, setTabbed] = useState(false);
  const [editor, setEditor] = useState({ text: "", n: 0 });
  const [expanded, setExpanded] = useState(false);
  const [hideThinking, setHideThinking] = useState(props.hideThinking ?? false);
  const keys = props.keybindings?.() ?? DEFAULT_KEYBINDINGS;
  const host: SingleHost = {
    setEditor: (text) => {
      setEditor((e) => ({ text, n: e.n + 1 }));
      setTyped(lineState(text));
    },
    showHelp: () => setOverlay({ kind: "help" }),
    quit: onQuit,
  };

  const agents = visibleAgents(state);
  // One line of header and one of footer; the last terminal row stays free so ink
  // updates in place instead of clearing the screen every frame.
  const bodyRows = Math.max(3, rows - 3);
  const layout = layoutPanes(agents.length, cols, bodyRows);
  const focusIndex = Math.max(
    0,
    agents.findIndex((a) => a.name === focus),
  );
  const focused: AgentView | undefined = agents[focusIndex];
  const page = layout.perPage > 0 ? Math.floor(focusIndex / layout.perPage) : 0;
  const pageAgents = agents.slice(page * layout.perPage, (page + 1) * layout.perPage);
  const showZoom = zoomed && focused !== undefined;
  const dialog = focused?.dialogs[0];

  const say = (text: string, error = false) => setFlash({ text, error });
  /** Run a command; a failure is said in the status line, success replaces "…ing" with `done`. */
  const act = (what: string, p: Promise<unknown>, done?: string) =>
    p.then(
      (r) => {
        const answer = r as { success?: boolean; error?: string } | undefined;
        if (answer && answer.success === false) say(`${what} failed: ${answer.error ?? "the agent refused"}`, true);
        else if (done) say(done);
      },
      (err: unknown) => say(`${what} failed: ${err instanceof Error ? err.message : String(err)}`, true),
    );
  const focusAt = (i: number) => {
    if (agents.length === 0) return;
    const next = agents[(i + agents.length) % agents.length]!;
    setFocus(next.name);
    setScroll(0);
  };
  const send = (kind: InputKind, agent: AgentView, text: string) => {
    const busy = agent.status === "busy";
    const command =
      kind === "prompt"
        ? { type: "prompt", message: text, ...(busy ? { streamingBehavior: "followUp" } : {}) }
        : { type: kind, message: text };
    const what = `${INPUT_LABEL[kind]} to ${agent.name}`;
    void act(
      what,
      control.rpc(agent.name, command).then((response) => {
        // What became of it, when the worker says (pi 1.x's disposition): nothing to wait for.
        if (response.success && kind === "prompt") {
          const { disposition } = readPromptAnswer(response);
          if (disposition === "handled") say(`${agent.name} handled the prompt without starting a run`);
          else if (disposition === "queued" || busy) say(`${what}: queued as a follow-up (it is busy)`);
        }
        return response;
      }),
    );
    setScroll(0);
  };
  const answer = (agent: AgentView, id: string, a: DialogAnswer) => {
    store.dispatch({ type: "dialog_answered", agent: agent.name, id });
    // Workers do not answer an extension_ui_response: do not wait for one.
    control.rpc(agent.name, { type: "extension_ui_response", id, ...a }).catch(() => undefined);
  };
  const spawn = (v: NewAgentValues) => {
    // A refused name keeps the form and what was typed, with the rule.
    const problem = v.name.trim() ? nameProblem(v.name.trim()) : null;
    if (problem) return setOverlay({ kind: "new", values: v, error: problem });
    setOverlay(null);
    const params: IpcParams<"spawn"> = {
      ...props.spawnDefaults,
      ...(v.name.trim() ? { name: v.name.trim() } : {}),
      cwd: v.cwd.trim() || props.defaultCwd || process.cwd(),
      ...(v.worktree ? { worktree: {} } : {}),
      ...(v.prompt.trim() ? { prompt: v.prompt.trim() } : {}),
      wait: false,
    };
    say(`starting ${params.name ?? "a new agent"}…`);
    control.spawn(params).then(
      (info) => {
        const name = (info as { name?: string } | undefined)?.name;
        if (name) setFocus(name);
        say(`started ${name ?? "the agent"}`);
      },
      (err: unknown) => {
        const message = err instanceof Error ? err.message : String(err);
        say(`spawn failed: ${message}`, true);
        // Back to the form, unless another overlay opened meanwhile.
        setOverlay((o) => (o === null ? { kind: "new", values: v, error: message } : o));
      },
    );
  };
  const showDiff = (agent: AgentView) => {
    if (!props.loadDiff) return say("diff is not available here", true);
    if (!agent.worktree) return say(`${agent.name} has no worktree (spawn it with a worktree to see its diff)`, true);
    say(`diffing ${agent.name}…`);
    props.loadDiff(agent).then(
      (text) => {
        setFlash(null);
        setOverlay({
          kind: "diff",
          title: `diff of ${agent.name} (${agent.worktree!.branch} since ${agent.worktree!.base.slice(0, 8)})`,
          text: text || "(no changes)",
          top: 0,
        });
      },
      (err: unknown) => say(`diff of ${agent.name} failed: ${err instanceof Error ? err.message : String(err)}`, true),
    );
  };
  const scrollBy = (n: number) => setScroll((s) => Math.max(0, Math.min(scrollMax.current, s + n)));

  const modalActive = dialog !== undefined && overlay === null;
  const singleInputActive = mode === "single" && !modalActive && overlay === null;
  useKeys(
    (ch, key) => {
      setFlash(null);
      const clear =
        mode === "single" ? keys.action(keyName({ input: ch, key })) === "app.clear" : key.ctrl && ch === "c";
      if (clear) {
        if (mode === "grid" || quitArmed.current) return onQuit();
        quitArmed.current = true;
        if (focused?.status === "busy") void act("abort", control.rpc(focused.name, { type: "abort" }));
        return say("press Ctrl+C again to quit");
      }
      quitArmed.current = false;
      // Only changed rows are written: after other output got onto the terminal, this draws it all.
      if (key.ctrl && ch === "l" && mode === "grid") return screen?.redraw();
      if (confirm) {
        setConfirm(null);
        if (ch === "y" || ch === "Y") confirm.run();
        else say("cancelled");
        return;
      }
      if (overlay?.kind === "help") {
        if (key.escape || ch === "?" || ch === "q") setOverlay(null);
        return;
      }
      if (overlay?.kind === "diff") {
        const page = Math.max(1, rows - 6);
        const move = (n: number) => setOverlay({ ...overlay, top: Math.max(0, overlay.top + n) });
        if (key.escape || ch === "q" || ch === "d") setOverlay(null);
        else if (key.upArrow) move(-1);
        else if (key.downArrow) move(1);
        else if (key.pageUp) move(-page);
        else if (key.pageDown || ch === " ") move(page);
        return;
      }
      const action = keyAction(
        {
          agents: agents.length,
          focus: focusIndex,
          columns: layout.columns,
          perPage: layout.perPage,
          zoomed: showZoom || mode === "single",
          focusedStatus: focused?.status ?? null,
        },
        { input: ch, key },
      );
      if (action.kind === "scroll") {
        const page = Math.max(1, rows - 8);
        const by = { up: 1, down: -1, page_up: page, page_down: -page, top: Number.MAX_SAFE_INTEGER, bottom: 0 }[
          action.to
        ];
        return action.to === "bottom" ? setScroll(0) : scrollBy(by);
      }
      // Everything else typed in the single view goes to its editor, which hands pi's actions to editorAction.
      if (mode === "single") {
        if (ch === "?" && key.meta) setOverlay({ kind: "help" });
        return;
      }
      switch (action.kind) {
        case "none":
          return;
        case "quit":
          return onQuit();
        case "help":
          return setOverlay({ kind: "help" });
        case "new":
          return setOverlay({ kind: "new" });
        case "focus":
          return focusAt(action.index);
        case "zoom":
          return setZoomed(true);
        case "unzoom":
          setZoomed(false);
          return setScroll(0);
      }
      if (!focused) return;
      const name = focused.name;
      switch (action.kind) {
        case "refuse":
          return say(`${name} ${action.message}`, action.error);
        case "input":
          return setInput({ kind: action.input, agent: name });
        case "abort":
          return void act(`abort ${name}`, control.rpc(name, { type: "abort" }), `abort sent to ${name}`);
        case "stop":
          return setConfirm({
            question: `stop ${name}${focused.status === "busy" ? " and abort its run" : ""}? y/n`,
            run: () => {
              say(`stopping ${name}…`);
              void act(`stop ${name}`, control.stop(name), `stopped ${name}`);
            },
          });
        case "restart":
          return setConfirm({
            question: `restart ${name}${focused.status === "busy" ? " and abort its run" : ""}? y/n`,
            run: () => {
              say(`restarting ${name}…`);
              void act(`restart ${name}`, control.restart(name), `restarted ${name}`);
            },
          });
        case "diff":
          return showDiff(focused);
      }
    },
    { isActive: input === null && !modalActive && overlay?.kind !== "new" },
  );

  /** One of pi's actions from the single view's editor: the view's own, or the host's. */
  const editorAction = (id: ActionId, current: LineState) => {
    if (id === "app.clear") return; // the key handler above arms the quit
    if (id === "app.tools.expand") {
      setExpanded(!expanded);
      return say(`Tool output: ${expanded ? "collapsed" : "expanded"}`);
    }
    if (id === "app.thinking.toggle") {
      setHideThinking(!hideThinking);
      return say(`Thinking blocks: ${hideThinking ? "visible" : "hidden"}`);
    }
    props.onAction?.(id, host, current);
  };
  const inputFor = (agent: AgentView, width: number): ReactNode => {
    if (mode === "single") {
      const busy = agent.status === "busy";
      const own = (text: string) => {
        setTabbed(false);
        return props.onLine?.(text, host) === true;
      };
      const suggestions = props.suggest?.(typed, tabbed) ?? [];
      const prompt = (
        <PromptInput
          key={editor.n}
          initial={editor.text}
          label={busy ? "steer" : "prompt"}
          width={width}
          isActive={singleInputActive}
          onSubmit={(text) => own(text) || send(busy ? "steer" : "prompt", agent, text)}
          // Tab that completes nothing queues a follow-up while the agent runs; idle, it does nothing (as in pi).
          onTab={busy ? (text) => own(text) || send("follow_up", agent, text) : undefined}
          onFollowUp={(text) => own(text) || send(busy ? "follow_up" : "prompt", agent, text)}
          onCancel={() =>
            busy ? void act("abort", control.rpc(agent.name, { type: "abort" })) : editorAction("app.interrupt", typed)
          }
          onExit={onQuit}
          onHelp={() => setOverlay({ kind: "help" })}
          complete={(l) => {
            const list = props.suggest?.(l, true) ?? [];
            if (list.length > 0) setTabbed(true);
            return tabCompletion(l, list);
          }}
          accept={(l) => {
            const first = props.suggest?.(l, tabbed)[0];
            return first?.takeOnEnter ? first.line : undefined;
          }}
          keymap={(seq) => keys.action(sequenceName(seq))}
          onAction={editorAction}
          onChange={(l) => {
            setTyped(l);
            // A new word (or an empty line) ends what Tab asked for.
            if (/(^|\s)$/.test(l.text.slice(0, l.cursor))) setTabbed(false);
          }}
        />
      );
      // One tree whether or not suggestions show: a prompt that moved into a new parent
      // would mount again and lose what was typed (the `/` that opened the list).
      return (
        <Box flexDirection="column">
          {suggestions.slice(0, SUGGESTIONS).map((c, i) => (
            <Text key={c.label} wrap="truncate" dimColor={i > 0}>
              {i === 0 ? "→ " : "  "}
              {c.detail ? `${c.label.padEnd(16)} ${c.detail}` : c.label}
            </Text>
          ))}
          {suggestions.length > SUGGESTIONS ? (
            <Text dimColor>{`  … ${suggestions.length - SUGGESTIONS} more (type to narrow, Tab completes)`}</Text>
          ) : null}
          {prompt}
        </Box>
      );
    }
    if (!input || input.agent !== agent.name) return undefined;
    return (
      <PromptInput
        label={INPUT_LABEL[input.kind]}
        width={width}
        onSubmit={(text) => {
          setInput(null);
          send(input.kind, agent, text);
        }}
        onCancel={() => setInput(null)}
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
        onAnswer={(a) => answer(agent, d.id, a)}
      />
    );
  };

  // Ink draws a pane with an input line or a dialog (they take keys); the screen paints the rest, below the header row.
  const inkPane = (a: AgentView) => mode === "single" || input?.agent === a.name || a.dialogs.length > 0;
  const drawnNames = new Set<string>(overlay || showZoom ? [] : pageAgents.filter(inkPane).map((a) => a.name));
  // Zoomed, ink draws all of the agent but the transcript's body (a modal there is ink's too).
  const bodyNames = new Set<string>(!overlay && showZoom ? [focused.name] : []);
  if (showZoom && !overlay && focused.dialogs.length > 0) drawnNames.add(focused.name);
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
        onSubmit={spawn}
        onCancel={() => setOverlay(null)}
      />
    );
  } else if (showZoom) {
    body = (
      <ZoomView
        agent={focused}
        width={cols}
        height={bodyRows}
        now={state.now}
        scroll={scroll}
        onScrollMax={(m) => (scrollMax.current = m)}
        input={inputFor(focused, cols - 4)}
        inputRows={mode === "single" ? singleInputRows(props.suggest?.(typed, tabbed).length ?? 0) : 1}
        resultLines={expanded ? EXPANDED_RESULT_LINES : undefined}
        hideThinking={hideThinking}
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
  } else {
    body = (
      <Grid
        layout={layout}
        agents={pageAgents}
        renderPane={(agent, slot, width, height) => {
          const rect = layout.rects[slot]!;
          const common = { width, height, focused: agent === focused, slotKey: slot < 9 ? slot + 1 : undefined };
          if (screen && !inkPane(agent))
            return (
              <PaintedPane store={store} screen={screen} name={agent.name} x={rect.x} y={1 + rect.y} {...common} />
            );
          return (
            <Pane
              agent={agent}
              now={state.now}
              {...common}
              input={inputFor(agent, width - 4)}
              modal={modalFor(agent, width - 4)}
            />
          );
        }}
      />
    );
  }

  // The clock shows in ink's part when ink draws an agent or the header counts an outage.
  const inkClock = drawnNames.size > 0 || bodyNames.size > 0 || state.connection.state !== "connected";
  useLayoutEffect(() => {
    lastDrawn.current = screen ? { state, drawn: { agents: drawnNames, bodies: bodyNames, clock: inkClock } } : null;
  });

  const waiting = agents.filter((a) => a.dialogs.length > 0 && a !== focused).map((a) => a.name);
  const footer = confirm
    ? confirm.question
    : flash
      ? flash.text
      : waiting.length > 0
        ? `${waiting.join(", ")} ${waiting.length === 1 ? "asks" : "ask"} a question: focus ${waiting.length === 1 ? "it" : "them"} to answer`
        : mode === "single"
          ? [props.status?.(), SINGLE_HINT].filter(Boolean).join(" · ")
          : showZoom
            ? ""
            : GRID_HINT;
  return (
    <Box flexDirection="column" width={cols}>
      {mode === "single" ? (
        <Text bold wrap="truncate">
          {props.title ?? "pi"} <Text dimColor>· interactive · {truncate(props.defaultCwd ?? "", cols - 20)}</Text>
        </Text>
      ) : (
        <Header
          state={state}
          title={props.title ?? "pi-orch"}
          agents={agents.length}
          page={page}
          pages={layout.pages}
          width={cols}
          hint={props.reconnectHint}
        />
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

/** Rows the single view's editor takes: the line, and the completions listed above it. */
function singleInputRows(suggestions: number): number {
  if (suggestions === 0) return 1;
  return 1 + Math.min(suggestions, SUGGESTIONS) + (suggestions > SUGGESTIONS ? 1 : 0);
}

/** Title, agent count, their states (`1 waiting for you · 2 working`), their cost, page and the connection to the supervisor. */
function Header({
  state,
  title,
  agents,
  page,
  pages,
  width,
  hint,
}: {
  state: TuiState;
  title: string;
  agents: number;
  page: number;
  pages: number;
  width: number;
  hint?: string;
}) {
  const theme = useTheme();
  const c = state.connection;
  const link =
    c.state === "connected"
      ? { text: "● connected", color: "green" }
      : c.state === "connecting"
        ? { text: "○ connecting…", color: "yellow" }
        : {
            text: `✖ supervisor unreachable for ${formatElapsed(state.now - c.since)}${c.message ? ` (${c.message})` : ""}: reconnecting…${hint ? ` (${hint})` : ""}`,
            color: "red",
          };
  const shown = visibleAgents(state);
  const states = activityCounts(shown.map((a) => agentActivity(a).state));
  const cost = shown.reduce((n, a) => n + a.run.tokens.cost, 0);
  const left = `${title} · ${agents} agent${agents === 1 ? "" : "s"}${states ? ` · ${states}` : ""}${cost > 0 ? ` · ${formatCost(cost)}` : ""}${pages > 1 ? ` · page ${page + 1}/${pages} (PgUp/PgDn)` : ""}`;
  return (
    <Text wrap="truncate">
      <Text bold>{left}</Text>
      {"  "}
      <Text color={theme.color(link.color)}>{truncate(link.text, Math.max(10, width - left.length - 2))}</Text>
    </Text>
  );
}
