/**
 * The session of `--no-session`: pi keeps it in memory, with an id and a name, and lists
 * it as entries (`get_entries`, `get_tree`, `ctx.sessionManager`) made from the messages.
 */
import { isoTimestamp } from "../../shared/iso-time.js";
import { randomUuid } from "../../shared/uuid.js";
import type { Agent } from "../agent/agent.js";
import type { SessionEntry } from "../session/entries.js";

/** A session without a file (see the file's comment). */
export class MemorySession {
  /** The session's id (`--session-id` names it; a new session gets a new one). */
  id: string = randomUuid();
  /** `set_session_name`'s name, if any. */
  name?: string;
  /** The start's model and thinking level entries, made once (their ids and times stay). */
  private startEntries: [SessionEntry, SessionEntry] | null = null;

  constructor(private readonly agent: () => Agent) {}

  /** `new_session` in memory, as pi's: a new id and no name. */
  reset(): void {
    this.id = randomUuid();
    this.name = undefined;
  }

  /** The conversation as message entries (what extensions reading `ctx.sessionManager` see). */
  entries(): SessionEntry[] {
    return this.agent().messages.map((message, i) => ({
      type: "message",
      id: `mem${String(i).padStart(5, "0")}`,
      parentId: i === 0 ? null : `mem${String(i - 1).padStart(5, "0")}`,
      timestamp: isoTimestamp(new Date(message.timestamp)),
      message,
    })) as SessionEntry[];
  }

  /** The session as pi 1.6 lists it (`get_entries`, `get_tree`): the start's model and thinking level entries, then the messages. */
  sessionEntries(): SessionEntry[] {
    const start = this.start();
    const messages = this.entries();
    if (messages[0]) messages[0] = { ...messages[0], parentId: start[1].id } as SessionEntry;
    return [...start, ...messages];
  }

  private start(): [SessionEntry, SessionEntry] {
    if (!this.startEntries) {
      const agent = this.agent();
      const timestamp = isoTimestamp(new Date());
      this.startEntries = [
        {
          type: "model_change",
          id: "memstart0",
          parentId: null,
          timestamp,
          provider: agent.model.provider,
          modelId: agent.model.id,
        },
        {
          type: "thinking_level_change",
          id: "memstart1",
          parentId: "memstart0",
          timestamp,
          thinkingLevel: agent.thinkingLevel,
        },
      ] as [SessionEntry, SessionEntry];
    }
    return this.startEntries;
  }
}
