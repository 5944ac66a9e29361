/**
 * pi 1.6's actionable turn boundary: `turn_end` handlers run when a turn's assistant
 * message and tool results are in the session, before the low-level `turn_end` event
 * goes out, and may append entries (custom, custom_message, context_edit) and ask for one
 * more request. The loop waits for them (finishTurn); the entries are written in order,
 * told as `entry_appended`, and the live context is rebuilt from the session, so the
 * next request sees them. Shared with `agent_before_settle`: writing the drafts.
 */
import type { WorkerEvent } from "../../shared/schema/events.js";
import type { AgentMessage, AssistantMessage, ToolResultMessage } from "../../shared/schema/messages.js";
import type { ExtensionHooks } from "../extensions/hooks.js";
import type { SessionEntry } from "../../shared/schema/session.js";
import type { NewEntry } from "../session/entries.js";
import type { SessionStore } from "../session/session-file.js";
import { getCurrentSystemMessage } from "../providers/transcript.js";
import { estimateContextTokens } from "../session/compaction.js";
import { checkDrafts, previewBoundary } from "./boundary.js";

/** What a boundary needs of the session. */
export interface BoundaryHost {
  extensions(): ExtensionHooks;
  /** The session (kept in memory with `--no-session`: the same entries, nothing written). */
  store(): SessionStore;
  /** The live context (the array the loop appends to): rebuilt in place after entries. */
  messages(): AgentMessage[];
  /** The entry a persisted message became, if it was persisted. */
  entryIdOf(message: AgentMessage): string | undefined;
  /** Messages waiting to be delivered (steering, follow-ups): they count as more to request. */
  pending(): AgentMessage[];
  emit(event: WorkerEvent): void;
}

/** How a turn or a run ended, as pi 1.6's boundary events say it. */
export function outcomeOf(message: AssistantMessage | undefined): "completed" | "error" | "aborted" {
  return message?.stopReason === "aborted" ? "aborted" : message?.stopReason === "error" ? "error" : "completed";
}

/** Check the handlers' drafts against the session, as a boundary's preview does. */
export function checkBoundaryDrafts(host: BoundaryHost, drafts: unknown, branch: readonly SessionEntry[]) {
  const entries = checkDrafts(drafts, branch);
  return { entries, context: previewBoundary(branch, entries, host.pending()) };
}

/** Write a boundary's entries in order (told as `entry_appended`) and rebuild the live context from the session in place. */
export function commitBoundaryDrafts(host: BoundaryHost, entries: readonly NewEntry[]): void {
  const store = host.store();
  for (const draft of entries) {
    const { entry } = store.appendOrKeep(draft.type === "compaction" ? withContextFigures(draft, store) : draft);
    host.emit({ type: "entry_appended", entry });
  }
  const messages = host.messages();
  if (entries.length > 0) messages.splice(0, messages.length, ...store.buildContext().messages);
}

/** A compaction draft as pi appends it: the context's size and its prompt and tools, as they are now. */
function withContextFigures(draft: Extract<NewEntry, { type: "compaction" }>, store: SessionStore): NewEntry {
  const { messages } = store.buildContext();
  const system = getCurrentSystemMessage(messages as unknown as { role: string }[]);
  return {
    ...draft,
    tokensBefore: estimateContextTokens(messages),
    ...(system ? { systemMessage: { ...system, timestamp: Date.now() } } : {}),
  };
}

/**
 * The turn_end boundary of one turn: true when a handler asked to continue and the
 * context can take one more request (the loop then makes it, unless tool results,
 * steering or a follow-up make one anyway). Without turn_end handlers it is false at once.
 */
export async function turnEndBoundary(
  host: BoundaryHost,
  turn: { message: AssistantMessage; toolResults: ToolResultMessage[]; turnIndex: number },
): Promise<boolean> {
  const extensions = host.extensions();
  if (!extensions.has("turn_end")) return false;
  const messageEntryId = host.entryIdOf(turn.message);
  if (messageEntryId === undefined) {
    host.emit({
      type: "extension_error",
      extensionPath: "<boundary>",
      event: "turn_end",
      error: "turn_end could not resolve the persisted assistant entry ID",
    });
    return false;
  }
  const toolResultEntryIds = turn.toolResults.flatMap((r) => {
    const id = host.entryIdOf(r);
    return id === undefined ? [] : [id];
  });
  const branch = host.store().pathToLeaf();
  const decision = await extensions.boundary(
    {
      type: "turn_end",
      turnIndex: turn.turnIndex,
      message: turn.message,
      toolResults: turn.toolResults,
      messageEntryId,
      toolResultEntryIds,
      outcome: outcomeOf(turn.message),
    },
    (drafts) => checkBoundaryDrafts(host, drafts, branch),
  );
  commitBoundaryDrafts(host, decision.entries);
  if (!decision.continue) return false;
  if (!previewBoundary(host.store().pathToLeaf(), [], host.pending()).canContinue) {
    host.emit({
      type: "extension_error",
      extensionPath: "<boundary>",
      event: "turn_end",
      error: "turn_end requested continuation without runnable model context",
    });
    return false;
  }
  return true;
}
