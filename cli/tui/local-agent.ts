/**
 * One in-process agent behind the TUI's AgentControl, for `pi` on a terminal: its
 * events go into the store as if a supervisor had sent them (with idle/busy status
 * changes), commands go through the same command map as the RPC mode, and extension
 * dialogs open in the view.
 */
import type { IpcParams } from "../../shared/schema/ipc.js";
import type { AgentInfo } from "../../shared/schema/agent.js";
import { readRpcAnswer, RpcCommandSchemas, type RpcAnswer, type RpcCommand } from "../../shared/schema/rpc.js";
import { checker } from "../../shared/validate.js";
import { DEFAULT_RESTART_POLICY } from "../../supervisor/types.js";
import type { AgentSession } from "../../worker/core/agent-session.js";
import type { ExtensionUi } from "../../worker/extensions/hooks.js";
import { createCommandHandlers, dispatchCommand, type CommandHandlers } from "../../worker/modes/commands.js";
import type { AgentControl } from "./control.js";
import type { DialogAnswer } from "./DialogModal.js";
import type { TuiStore } from "./store.js";

/** The agent's name in the view. */
export const LOCAL_AGENT = "pi";

/** An in-process agent as the TUI sees it; also the extensions' UI. */
export class LocalAgent implements AgentControl, ExtensionUi {
  private seq = 0;
  private readonly dialogs = new Map<string, (answer: DialogAnswer) => void>();
  private readonly unsubscribe: () => void;
  private readonly handlers: CommandHandlers;

  constructor(
    runtime: AgentSession,
    private readonly store: TuiStore,
  ) {
    this.handlers = createCommandHandlers(runtime, (answer) => {
      const finish = this.dialogs.get(answer.id);
      this.dialogs.delete(answer.id);
      finish?.(answer);
    });
    const model = runtime.agent.model;
    const info: AgentInfo = {
      name: LOCAL_AGENT,
      id: runtime.sessionId,
      cwd: runtime.cwd,
      provider: model.provider,
      model: model.id,
      policy: DEFAULT_RESTART_POLICY,
      onStall: "notify",
      limits: {},
      createdAt: Date.now(),
      status: "idle",
      pid: process.pid,
      restarts: 0,
      lastExit: null,
      sessionFile: runtime.sessionFile ?? null,
      lastSeenAt: null,
      lastSeq: 0,
      startedAt: Date.now(),
    };
    store.dispatch({ type: "agents", agents: [info] });
    store.dispatch({ type: "connection", state: "connected", at: Date.now() });
    let status = "idle";
    const setStatus = (next: string) => {
      this.emit({ type: "agent_status", status: next, previous: status, pid: process.pid, restarts: 0 });
      status = next;
    };
    this.unsubscribe = runtime.subscribe((event) => {
      if (event.type === "agent_start") setStatus("busy");
      this.emit(event as unknown as Record<string, unknown>);
      // Busy through automatic retries: a run with one to follow says willRetry; a
      // cancelled retry wait ends with auto_retry_end outside a run.
      if (event.type === "agent_end" && event.willRetry !== true) setStatus("idle");
      if (event.type === "auto_retry_end" && !event.success && status === "busy" && !runtime.agent.isStreaming)
        setStatus("idle");
    });
  }

  /** Stop listening to the agent and cancel open dialogs. */
  dispose(): void {
    this.unsubscribe();
    for (const answer of this.dialogs.values()) answer({ cancelled: true });
    this.dialogs.clear();
  }

  async rpc<C extends RpcCommand>(agent: string, command: C): Promise<RpcAnswer<C["type"]>> {
    const fail = (error: string) => ({ type: "response", command: command.type, success: false, error }) as const;
    const checked = checker(RpcCommandSchemas[command.type])(command);
    if (!checked.ok) return fail(`Invalid command "${command.type}": ${checked.errors.join("; ")}`);
    let data: unknown;
    try {
      data = await dispatchCommand(this.handlers, command);
    } catch (err) {
      return fail(err instanceof Error ? err.message : String(err));
    }
    const response = { type: "response", command: command.type, success: true, data } as const;
    return readRpcAnswer<C["type"]>(agent, command.type, response);
  }

  stop(): Promise<AgentInfo> {
    return Promise.reject(new Error("there is no supervisor here: Ctrl+C twice quits"));
  }

  restart(): Promise<AgentInfo> {
    return Promise.reject(new Error("there is no supervisor here: quit and run pi --continue to resume"));
  }

  spawn(_params: IpcParams<"spawn">): Promise<AgentInfo> {
    return Promise.reject(new Error("one agent only here: use pi-orch for several"));
  }

  async select(title: string, options: string[], opts?: { timeout?: number }): Promise<string | undefined> {
    const a = await this.dialog({ method: "select", title, options }, opts?.timeout);
    return !a.cancelled && a.value !== undefined && options.includes(a.value) ? a.value : undefined;
  }

  async confirm(title: string, message?: string, opts?: { timeout?: number }): Promise<boolean> {
    const a = await this.dialog(
      { method: "confirm", title, ...(message !== undefined ? { message } : {}) },
      opts?.timeout,
    );
    return !a.cancelled && a.confirmed === true;
  }

  async input(title: string, placeholder?: string, opts?: { timeout?: number }): Promise<string | undefined> {
    const a = await this.dialog(
      { method: "input", title, ...(placeholder !== undefined ? { placeholder } : {}) },
      opts?.timeout,
    );
    return a.cancelled ? undefined : a.value;
  }

  async editor(title: string, prefill?: string, opts?: { timeout?: number }): Promise<string | undefined> {
    const a = await this.dialog(
      { method: "editor", title, ...(prefill !== undefined ? { prefill } : {}) },
      opts?.timeout,
    );
    return a.cancelled ? undefined : a.value;
  }

  notify(message: string, type: "info" | "warning" | "error" = "info"): void {
    this.emit({ type: "extension_ui_request", id: crypto.randomUUID(), method: "notify", message, notifyType: type });
  }

  setStatus(): void {
    // The view has no status line for extensions yet.
  }

  private dialog(fields: Record<string, unknown>, timeout?: number): Promise<DialogAnswer> {
    const id = crypto.randomUUID();
    return new Promise((resolve) => {
      const timer = timeout ? setTimeout(() => finish({ cancelled: true }), timeout) : undefined;
      const finish = (answer: DialogAnswer) => {
        if (timer) clearTimeout(timer);
        if (this.dialogs.delete(id)) this.store.dispatch({ type: "dialog_answered", agent: LOCAL_AGENT, id });
        resolve(answer);
      };
      this.dialogs.set(id, finish);
      this.emit({ type: "extension_ui_request", id, ...fields });
    });
  }

  private emit(event: Record<string, unknown>): void {
    this.store.dispatch({ type: "event", agent: LOCAL_AGENT, seq: ++this.seq, at: Date.now(), event });
  }
}
