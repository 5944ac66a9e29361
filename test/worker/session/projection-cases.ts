/**
 * Session paths and what the model sees of them, as a table shared by the pure projection
 * test (ours, expected messages named briefly) and the differential test (ours against
 * pi 1.6.0's own `buildSessionProjection` on the same entries, compared whole).
 */
import type { AgentMessage } from "../../../shared/schema/messages.js";
import type { SessionEntry } from "../../../shared/schema/session.js";
import { assistant, toolResult, user } from "./helpers.js";

/** One table row: the entries of a session file, the leaf, and the projected messages in brief. */
export interface ProjectionCase {
  name: string;
  entries: SessionEntry[];
  leafId: string;
  /** Each projected message as `role:text` (text of its first text block, or its summary). */
  expected: string[];
}

let clock = 0;
const stamp = () => new Date(Date.UTC(2026, 11, 5, 12, 0, clock++)).toISOString();

/** Entries chained in order: each one's parent is the one before (or the given `parentId`). */
function chain(
  ...items: ({ type: string; id: string; parentId?: string | null } & Record<string, unknown>)[]
): SessionEntry[] {
  const out: SessionEntry[] = [];
  for (const item of items) {
    const parentId = item.parentId !== undefined ? item.parentId : (out.at(-1)?.id ?? null);
    out.push({ ...item, parentId, timestamp: stamp() } as SessionEntry);
  }
  return out;
}

const msg = (id: string, message: AgentMessage, parentId?: string | null) => ({
  type: "message",
  id,
  message,
  ...(parentId !== undefined ? { parentId } : {}),
});
const failed = (text: string): AgentMessage => ({ ...assistant(text), stopReason: "error", errorMessage: "503" });
const system = (
  sections: Record<string, string | null>,
  tools?: { added?: string[]; removed?: string[] },
): AgentMessage => ({
  role: "system",
  content: "",
  sections,
  ...(tools?.added
    ? { toolsAdded: tools.added.map((name) => ({ name, description: `${name} tool`, parameters: { type: "object" } })) }
    : {}),
  ...(tools?.removed ? { toolsRemoved: tools.removed.map((name) => ({ name })) } : {}),
  timestamp: 4,
});
const edit = (id: string, targetId: string, replacement: { content: unknown } | null, parentId?: string) => ({
  type: "context_edit",
  id,
  targetId,
  replacement,
  ...(parentId !== undefined ? { parentId } : {}),
});
const compaction = (id: string, firstKeptEntryId: string, summary: string, systemMessage?: AgentMessage) => ({
  type: "compaction",
  id,
  summary,
  firstKeptEntryId,
  tokensBefore: 1000,
  ...(systemMessage ? { systemMessage } : {}),
});

/** The table. */
export const PROJECTION_CASES: ProjectionCase[] = [
  {
    name: "a plain conversation",
    entries: chain(msg("u1", user("hi")), msg("a1", assistant("hello"))),
    leafId: "a1",
    expected: ["user:hi", "assistant:hello"],
  },
  {
    name: "a retried failure omitted by a context edit",
    entries: chain(msg("u1", user("hi")), msg("a1", failed("")), edit("e1", "a1", null), msg("a2", assistant("hello"))),
    leafId: "a2",
    expected: ["user:hi", "assistant:hello"],
  },
  {
    name: "replacements: a string for a tool result and an assistant becomes one text block, a user keeps it",
    entries: chain(
      msg("u1", user("list")),
      msg("a1", assistant("", ["c1"])),
      msg("t1", toolResult("c1", "a very long listing")),
      edit("e1", "t1", { content: "[listing cut]" }),
      edit("e2", "u1", { content: "list, shorter" }),
      edit("e3", "a1", { content: "I listed the files" }),
    ),
    leafId: "e3",
    expected: ["user:list, shorter", "assistant:I listed the files", "toolResult:[listing cut]"],
  },
  {
    name: "the latest edit of a target wins",
    entries: chain(
      msg("u1", user("hi")),
      msg("a1", assistant("first")),
      edit("e1", "a1", null),
      edit("e2", "a1", { content: [{ type: "text", text: "second" }] }),
    ),
    leafId: "e2",
    expected: ["user:hi", "assistant:second"],
  },
  {
    name: "an edit on another branch does not apply",
    entries: chain(
      msg("u1", user("hi")),
      msg("a1", assistant("hello")),
      edit("e1", "a1", null),
      msg("u2", user("other way"), "a1"),
    ),
    leafId: "u2",
    expected: ["user:hi", "assistant:hello", "user:other way"],
  },
  {
    name: "system messages: the first declares, a later one patches",
    entries: chain(
      msg("s1", system({ preamble: "You help.", cwd: "<cwd>\n/p\n</cwd>" }, { added: ["read", "bash"] })),
      msg("u1", user("hi")),
      msg("a1", assistant("hello")),
      msg("s2", system({ cwd: null }, { removed: ["bash"] })),
      msg("u2", user("again")),
    ),
    leafId: "u2",
    expected: ["system:", "user:hi", "assistant:hello", "system:", "user:again"],
  },
  {
    name: "a compaction with its system checkpoint drops the kept range's system messages",
    entries: chain(
      msg("s1", system({ preamble: "You help." }, { added: ["read"] })),
      msg("u1", user("one")),
      msg("a1", assistant("reply one")),
      msg("s2", system({ extra: "<extra>\nmore\n</extra>" })),
      msg("u2", user("two")),
      msg("a2", assistant("reply two")),
      compaction(
        "c1",
        "s2",
        "we did one",
        system({ preamble: "You help.", extra: "<extra>\nmore\n</extra>" }, { added: ["read"] }),
      ),
      msg("u3", user("three")),
    ),
    leafId: "u3",
    expected: ["system:", "compactionSummary:we did one", "user:two", "assistant:reply two", "user:three"],
  },
  {
    name: "a compaction without a checkpoint (an older file) keeps its summary first",
    entries: chain(
      msg("u1", user("one")),
      msg("a1", assistant("reply one")),
      msg("u2", user("two")),
      compaction("c1", "u2", "we did one"),
      msg("a2", assistant("reply two")),
    ),
    leafId: "a2",
    expected: ["compactionSummary:we did one", "user:two", "assistant:reply two"],
  },
  {
    name: "an older compaction inside the kept range adds nothing",
    entries: chain(
      msg("u1", user("one")),
      compaction("c1", "u1", "first summary"),
      msg("u2", user("two")),
      compaction("c2", "c1", "second summary"),
      msg("u3", user("three")),
    ),
    leafId: "u3",
    expected: ["compactionSummary:second summary", "user:two", "user:three"],
  },
  {
    name: "edits inside the kept range and after the compaction both apply",
    entries: chain(
      msg("u1", user("one")),
      msg("a1", assistant("reply one")),
      edit("e1", "a1", { content: "edited early" }),
      msg("u2", user("two")),
      msg("a2", assistant("reply two")),
      compaction("c1", "a1", "summary"),
      edit("e2", "a2", null),
    ),
    leafId: "e2",
    expected: ["compactionSummary:summary", "assistant:edited early", "user:two"],
  },
  {
    name: "custom messages, branch summaries and bash executions: null omits any, a replacement only the editable",
    entries: chain(
      { type: "custom_message", id: "m1", customType: "note", content: "a note", display: true },
      { type: "branch_summary", id: "b1", fromId: "x", summary: "left branch" },
      msg("x1", {
        role: "bashExecution",
        command: "ls",
        output: "a b",
        exitCode: 0,
        cancelled: false,
        truncated: false,
        timestamp: 5,
      }),
      edit("e1", "m1", { content: "a shorter note" }),
      edit("e2", "b1", { content: "ignored" }),
      edit("e3", "x1", null),
      { type: "custom", id: "k1", customType: "state", data: { n: 1 } },
    ),
    leafId: "k1",
    expected: ["custom:a shorter note", "branchSummary:left branch"],
  },
];

/** A projected message in brief, as `expected` names it. */
export function brief(message: AgentMessage): string {
  const m = message as { role: string; content?: unknown; summary?: string };
  if (typeof m.summary === "string") return `${m.role}:${m.summary}`;
  if (typeof m.content === "string") return `${m.role}:${m.content}`;
  const text = Array.isArray(m.content)
    ? (m.content.find((b: { type?: string }) => b.type === "text") as { text?: string } | undefined)?.text
    : undefined;
  return `${m.role}:${text ?? ""}`;
}
