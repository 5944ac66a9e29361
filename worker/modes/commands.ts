/**
 * The one command map: every pi RPC command as a typed handler over the session
 * layer. The RPC mode and the TUI's in-process agent dispatch through it, so both
 * accept the same commands with the same results.
 */
import type { RpcCommand, RpcCommandOf, RpcCommandType } from "../../shared/schema/rpc.js";
import type { AgentSession } from "../core/agent-session.js";
import type { PromptAnswerData } from "../../shared/prompt-answer.js";

/** A dialog answer (`extension_ui_response`) for whoever opened the dialog. */
export interface UiAnswer {
  id: string;
  value?: string;
  confirmed?: boolean;
  cancelled?: boolean;
}

/** A handler per command type; its result is the response's `data` (undefined for none). */
export type CommandHandlers = { [K in RpcCommandType]: (cmd: RpcCommandOf<K>) => Promise<unknown> | unknown };

/** The handlers of a session; `answerDialog` receives `extension_ui_response`s. */
export function createCommandHandlers(
  session: AgentSession,
  answerDialog: (answer: UiAnswer) => void,
): CommandHandlers {
  return {
    // Our addition to pi's answer (shared/prompt-answer.ts): false when the prompt started
    // no run, so a client knows no agent_end is coming.
    prompt: async (cmd): Promise<PromptAnswerData> => ({
      running: (await session.prompt(cmd.message, cmd.images, cmd.streamingBehavior)).running,
    }),
    steer: (cmd) => session.steer(cmd.message, cmd.images),
    follow_up: (cmd) => session.followUp(cmd.message, cmd.images),
    abort: () => session.abort(),
    get_state: () => session.state(),
    get_messages: () => ({ messages: session.messages() }),
    set_model: (cmd) => session.setModel(cmd.provider, cmd.modelId),
    cycle_model: () => session.cycleModel(),
    get_available_models: () => ({ models: session.availableModels() }),
    set_thinking_level: (cmd) => session.setThinkingLevel(cmd.level),
    cycle_thinking_level: () => session.cycleThinkingLevel(),
    set_steering_mode: (cmd) => session.setSteeringMode(cmd.mode),
    set_follow_up_mode: (cmd) => session.setFollowUpMode(cmd.mode),
    set_auto_retry: (cmd) => {
      session.autoRetry = cmd.enabled;
    },
    abort_retry: () => session.abortRetry(),
    bash: (cmd) => session.bash(cmd.command),
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
