/**
 * The one command map: every pi RPC command as a typed handler over the session
 * layer. The RPC mode and the TUI's in-process agent dispatch through it, so both
 * accept the same commands with the same results.
 */
import type {
  PromptAnswerData,
  RpcCommand,
  RpcCommandOf,
  RpcCommandType,
  RpcResultOf,
} from "../../shared/schema/rpc.js";
import type { AgentSession } from "../core/agent-session.js";

/** A dialog answer (`extension_ui_response`) for whoever opened the dialog. */
export interface UiAnswer {
  id: string;
  value?: string;
  confirmed?: boolean;
  cancelled?: boolean;
}

/** A handler per command type; its result is the response's `data` (undefined for none), typed by the command's result schema. */
export type CommandHandlers = {
  [K in RpcCommandType]: (cmd: RpcCommandOf<K>) => Promise<RpcResultOf<K>> | RpcResultOf<K>;
};

/** The handlers of a session; `answerDialog` receives `extension_ui_response`s. */
export function createCommandHandlers(
  session: AgentSession,
  answerDialog: (answer: UiAnswer) => void,
): CommandHandlers {
  return {
    // pi 1.6's disposition, and our `running` (PromptAnswerData): false when no run
    // is going, so a client knows no agent_settled is coming.
    prompt: async (cmd): Promise<PromptAnswerData> => {
      const { disposition, running } = await session.prompt(cmd.message, cmd.images, cmd.streamingBehavior);
      return { disposition, running };
    },
    steer: (cmd) => ({ disposition: session.steer(cmd.message, cmd.images) }),
    follow_up: (cmd) => ({ disposition: session.followUp(cmd.message, cmd.images) }),
    abort: () => session.abort(),
    clear_queue: () => session.clearQueue(),
    get_state: () => session.state(),
    get_messages: () => ({ messages: session.messages() }),
    set_model: (cmd) => session.setModel(cmd.provider, cmd.modelId),
    cycle_model: () => session.cycleModel(),
    get_available_models: () => ({ models: session.availableModels() }),
    set_thinking_level: (cmd) => session.setThinkingLevel(cmd.level),
    cycle_thinking_level: () => session.cycleThinkingLevel(),
    get_available_thinking_levels: () => ({ levels: session.availableThinkingLevels() }),
    set_steering_mode: (cmd) => session.setSteeringMode(cmd.mode),
    set_follow_up_mode: (cmd) => session.setFollowUpMode(cmd.mode),
    set_auto_retry: (cmd) => {
      session.autoRetry = cmd.enabled;
    },
    abort_retry: () => session.abortRetry(),
    // The output streams as bash_execution_update events carrying the command's id (pi 1.6).
    bash: (cmd) =>
      session.bash(cmd.command, {
        excludeFromContext: cmd.excludeFromContext,
        onChunk: (delta) =>
          session.emit({ type: "bash_execution_update", ...(cmd.id !== undefined ? { id: cmd.id } : {}), delta }),
      }),
    abort_bash: () => session.abortBash(),
    get_session_stats: () => session.sessionStats(),
    get_last_assistant_text: () => ({ text: session.lastAssistantText() }),
    set_session_name: (cmd) => session.setSessionName(cmd.name),
    get_commands: () => ({ commands: session.commands() }),
    export_html: (cmd) => session.exportHtml(cmd.outputPath),
    get_tree: () => session.tree(),
    navigate_tree: (cmd) =>
      session.navigateTree(cmd.targetId, {
        summarize: cmd.summarize,
        customInstructions: cmd.customInstructions,
        replaceInstructions: cmd.replaceInstructions,
        label: cmd.label,
      }),
    compact: (cmd) => session.compact(cmd.customInstructions),
    set_auto_compaction: (cmd) => {
      session.autoCompaction = cmd.enabled;
    },
    new_session: (cmd) => session.newSession(cmd.parentSession),
    switch_session: (cmd) => session.switchSession(cmd.sessionPath),
    fork: (cmd) => session.fork(cmd.entryId),
    clone: () => session.clone(),
    get_fork_messages: () => ({ messages: session.forkMessages() }),
    get_entries: (cmd) => session.getEntries(cmd.since),
    // The schema requires `id` here (it overrides the optional request id), which its static type loses.
    extension_ui_response: (cmd) => answerDialog(cmd as UiAnswer),
  };
}

/** Run a validated command; resolves with the response's `data`. */
export function dispatchCommand(handlers: CommandHandlers, command: RpcCommand): Promise<unknown> {
  // The map is keyed by the same discriminant, so the handler fits the command it is looked up by.
  const handler = handlers[command.type] as (cmd: RpcCommand) => Promise<unknown> | unknown;
  return Promise.resolve().then(() => handler(command));
}
