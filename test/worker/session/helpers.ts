/**
 * Test support for session suites: a temp folder and stores that are cleaned up after
 * each test (even a failing one), and small message builders.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeEach } from "vitest";
import {
  emptyUsage,
  type AssistantMessage,
  type ToolResultMessage,
  type UserMessage,
} from "../../../shared/schema/messages.js";
import type { EntryBase, MessageEntry, SessionEntry } from "../../../shared/schema/session.js";
import type { SessionStore } from "../../../worker/session/session-file.js";

/** The recorded pi 0.73.1 session (model mock/mock-1, thinking off, 4 messages). */
export const PI_SESSION_FIXTURE = resolve(import.meta.dirname, "../../fixtures/pi-0.73.1-session-file.jsonl");

/** Registers hooks: `tmp()` is a fresh folder per test; `track(store)` closes it afterwards. */
export function useTempDir(): { tmp: () => string; track: <S extends SessionStore>(store: S) => S } {
  let dir: string | undefined;
  let stores: SessionStore[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "pi-orch-session-"));
  });
  afterEach(() => {
    for (const store of stores) store.close();
    stores = [];
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });
  return {
    tmp: () => dir!,
    track: (store) => {
      stores.push(store);
      return store;
    },
  };
}

/** A user message with text content. */
export function user(text: string): UserMessage {
  return { role: "user", content: [{ type: "text", text }], timestamp: 1 };
}

/** An assistant reply: text, or tool calls given as ids. */
export function assistant(text: string, toolCallIds: string[] = []): AssistantMessage {
  return {
    role: "assistant",
    content: [
      ...(text ? [{ type: "text" as const, text }] : []),
      ...toolCallIds.map((id) => ({ type: "toolCall" as const, id, name: "bash", arguments: { command: "ls" } })),
    ],
    api: "faux",
    provider: "faux",
    model: "faux-1",
    usage: emptyUsage(),
    stopReason: toolCallIds.length > 0 ? "toolUse" : "stop",
    timestamp: 2,
  };
}

/** The result of the tool call `id`. */
export function toolResult(id: string, text: string): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId: id,
    toolName: "bash",
    content: [{ type: "text", text }],
    isError: false,
    timestamp: 3,
  };
}

/** A message entry for pure tests (ids chain in array order when built with `chain`). */
export function messageEntry(id: string, message: MessageEntry["message"]): MessageEntry {
  return { type: "message", id, parentId: null, timestamp: "2026-01-01T00:00:00.000Z", message };
}

/** Link entries into a single path: each one's parent is the one before it. */
export function chain<E extends EntryBase>(entries: E[]): SessionEntry[] {
  return entries.map((entry, i) => ({ ...entry, parentId: i === 0 ? null : entries[i - 1].id })) as SessionEntry[];
}
