/**
 * What the TUI asks of its agents and the supervisor (prompt, steer, abort, stop,
 * restart, spawn, a dialog's answer, a worktree's diff), and how the status line says the
 * outcome: a failure in red, "…ing" replaced by its `done` message. The view's own state
 * changes through `dispatch` only (ui-state.ts).
 */
import { nameProblem } from "../../shared/agent-name.js";
import type { AgentInfo } from "../../shared/schema/agent.js";
import { readPromptAnswer, type RpcAnswer, type RpcCommandOf, type RpcCommandType } from "../../shared/schema/rpc.js";
import type { IpcParams } from "../../shared/schema/ipc.js";
import type { AgentControl } from "./control.js";
import type { DialogAnswer } from "./DialogModal.js";
import type { KeyAction } from "./keymap.js";
import type { NewAgentValues } from "./NewAgentForm.js";
import type { AgentView } from "./state.js";
import type { TuiStore } from "./store.js";
import { INPUT_LABEL, type InputKind, type UiAction, type UiState } from "./ui-state.js";

/** What the commands act through. */
export interface CommandHost {
  control: AgentControl;
  store: TuiStore;
  dispatch: (action: UiAction) => void;
  /** The diff text of a worktree agent. */
  loadDiff?: (agent: AgentView) => Promise<string>;
  /** Added to every spawn from the form. */
  spawnDefaults?: Partial<IpcParams<"spawn">>;
  /** The cwd a spawn without one gets. */
  defaultCwd?: string;
  /** Leave the TUI. */
  quit: () => void;
  /** Draw the whole screen again. */
  redraw: () => void;
}

/** The commands of one view. */
export interface Commands {
  /** Run a command: a failure is said in the status line, success says `done` if given. */
  act(what: string, p: Promise<AgentInfo | RpcAnswer<RpcCommandType>>, done?: string): void;
  send(kind: InputKind, agent: AgentView, text: string): void;
  answer(agent: AgentView, id: string, a: DialogAnswer): void;
  spawn(values: NewAgentValues): void;
  showDiff(agent: AgentView): void;
  abort(agent: string, done?: string): void;
  /** What a key's action asks beyond the view, with the view as it was before the key. */
  afterKey(action: KeyAction, before: UiState, focused: AgentView | undefined): void;
}

/** The commands, acting through `host`. */
export function commands(host: CommandHost): Commands {
  const { control, dispatch } = host;
  const say = (text: string, error = false) => dispatch({ type: "say", text, error });
  const message = (err: unknown) => (err instanceof Error ? err.message : String(err));
  const act = (what: string, p: Promise<AgentInfo | RpcAnswer<RpcCommandType>>, done?: string) =>
    void p.then(
      (r) => {
        if ("success" in r && !r.success) say(`${what} failed: ${r.error || "the agent refused"}`, true);
        else if (done) say(done);
      },
      (err: unknown) => say(`${what} failed: ${message(err)}`, true),
    );
  const abort = (agent: string, done?: string) =>
    act(done ? `abort ${agent}` : "abort", control.rpc(agent, { type: "abort" }), done);
  const showDiff = (agent: AgentView) => {
    const { loadDiff } = host;
    if (!loadDiff) return say("diff is not available here", true);
    const tree = agent.worktree;
    if (!tree) return say(`${agent.name} has no worktree (spawn it with a worktree to see its diff)`, true);
    say(`diffing ${agent.name}…`);
    loadDiff(agent).then(
      (text) => {
        dispatch({
          type: "overlay",
          overlay: {
            kind: "diff",
            title: `diff of ${agent.name} (${tree.branch} since ${tree.base.slice(0, 8)})`,
            text: text || "(no changes)",
            top: 0,
          },
          unsay: true,
        });
      },
      (err: unknown) => say(`diff of ${agent.name} failed: ${message(err)}`, true),
    );
  };
  return {
    act,
    abort,
    showDiff,
    send(kind, agent, text) {
      const busy = agent.status === "busy";
      const command: RpcCommandOf<InputKind> =
        kind === "prompt"
          ? { type: "prompt", message: text, ...(busy ? { streamingBehavior: "followUp" as const } : {}) }
          : { type: kind, message: text };
      const what = `${INPUT_LABEL[kind]} to ${agent.name}`;
      act(
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
      dispatch({ type: "sent" });
    },
    answer(agent, id, a) {
      host.store.dispatch({ type: "dialog_answered", agent: agent.name, id });
      // Workers do not answer an extension_ui_response: do not wait for one.
      control.rpc(agent.name, { type: "extension_ui_response", id, ...a }).catch(() => undefined);
    },
    spawn(v) {
      // A refused name keeps the form and what was typed, with the rule.
      const problem = v.name.trim() ? nameProblem(v.name.trim()) : null;
      if (problem) return dispatch({ type: "overlay", overlay: { kind: "new", values: v, error: problem } });
      dispatch({ type: "overlay", overlay: null });
      const params: IpcParams<"spawn"> = {
        ...host.spawnDefaults,
        ...(v.name.trim() ? { name: v.name.trim() } : {}),
        cwd: v.cwd.trim() || host.defaultCwd || process.cwd(),
        ...(v.worktree ? { worktree: {} } : {}),
        ...(v.prompt.trim() ? { prompt: v.prompt.trim() } : {}),
        wait: false,
      };
      say(`starting ${params.name ?? "a new agent"}…`);
      control.spawn(params).then(
        (info) => {
          dispatch({ type: "focus", agent: info.name });
          say(`started ${info.name}`);
        },
        (err: unknown) => {
          say(`spawn failed: ${message(err)}`, true);
          // Back to the form, unless another overlay opened meanwhile.
          dispatch({ type: "form_failed", values: v, error: message(err) });
        },
      );
    },
    afterKey(action, before, focused) {
      switch (action.kind) {
        case "quit":
          return host.quit();
        case "arm_quit":
          if (focused?.status === "busy") abort(focused.name);
          return;
        case "redraw":
          return host.redraw();
        case "confirm": {
          const c = before.confirm;
          if (!action.yes || !c) return;
          const [doing, done, run] =
            c.command === "stop"
              ? ["stopping", "stopped", () => control.stop(c.agent)]
              : ["restarting", "restarted", () => control.restart(c.agent)];
          say(`${doing} ${c.agent}…`);
          return act(`${c.command} ${c.agent}`, run(), `${done} ${c.agent}`);
        }
        case "abort":
          if (focused) abort(focused.name, `abort sent to ${focused.name}`);
          return;
        case "diff":
          if (focused) showDiff(focused);
          return;
      }
    },
  };
}
