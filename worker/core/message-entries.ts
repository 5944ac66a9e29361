/**
 * Which session entry each message of the context became: written as the session file
 * keeps it (extension messages as pi's `custom_message` entries), and named again when a
 * `turn_end` or `agent_before_settle` boundary refers to it.
 */
import type { AgentMessage } from "../../shared/schema/messages.js";
import type { SessionStore } from "../session/session-file.js";

/** The entries a session's messages became. */
export class MessageEntries {
  private readonly ids = new WeakMap<AgentMessage, string>();

  /** Write `message` to `store` as the session file keeps it; a refused write is kept for later (appendOrKeep). */
  persist(store: SessionStore, message: AgentMessage): void {
    if (message.role === "custom") {
      const { customType, content, display, details } = message;
      const { entry } = store.appendOrKeep({
        type: "custom_message",
        customType,
        content,
        display,
        ...(details !== undefined ? { details } : {}),
      });
      this.ids.set(message, entry.id);
    } else {
      this.ids.set(message, store.appendOrKeep({ type: "message", message }).entry.id);
    }
  }

  /** The entry `message` was written as, if it was. */
  idOf(message: AgentMessage): string | undefined {
    return this.ids.get(message);
  }
}
