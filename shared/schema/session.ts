/**
 * A session file, line by line, in pi's v3 format (pi 1.6.0's docs/session-format.md and
 * session-manager.d.ts): one `session` header, then entries linked by `id`/`parentId`
 * into a tree, one schema per entry type. Schemas are open (extra fields pass) so files
 * written by a newer pi still load; entry types we do not know are kept as they are and
 * skipped when building the model's context. The worker's store reads and writes these;
 * the CLI reads session files through them.
 */
import type { Static } from "typebox";
import * as Type from "typebox/type";
import { checker, type CheckResult } from "../validate.js";
import {
  AgentMessage,
  ImageContent,
  SystemMessage,
  TextContent,
  ThinkingContent,
  ThinkingLevel,
  ToolCall,
  Usage,
} from "./messages.js";

/** The format version we write. Version 2 differs only in message roles we keep opaque, so it loads too. */
export const SESSION_VERSION = 3;

/** First line of every session file; not part of the tree. */
export const SessionHeader = Type.Object({
  type: Type.Literal("session"),
  version: Type.Number(),
  id: Type.String(),
  timestamp: Type.String(),
  cwd: Type.String(),
  parentSession: Type.Optional(Type.String()),
});
export type SessionHeader = Static<typeof SessionHeader>;

const base = {
  id: Type.String({ minLength: 1 }),
  parentId: Type.Union([Type.String(), Type.Null()]),
  timestamp: Type.String(),
};

/** Fields every entry carries; `parentId` is null only for a root. */
export const EntryBase = Type.Object({ type: Type.String(), ...base });
export type EntryBase = Static<typeof EntryBase>;

/** One conversation message (user, assistant, tool result, bash execution). */
export const MessageEntry = Type.Object({
  type: Type.Literal("message"),
  ...base,
  message: AgentMessage,
});
export type MessageEntry = Static<typeof MessageEntry>;

/** The user switched models; the context's model is the last one on the path. */
export const ModelChangeEntry = Type.Object({
  type: Type.Literal("model_change"),
  ...base,
  provider: Type.String(),
  modelId: Type.String(),
});
export type ModelChangeEntry = Static<typeof ModelChangeEntry>;

/** The user changed the thinking level. */
export const ThinkingLevelChangeEntry = Type.Object({
  type: Type.Literal("thinking_level_change"),
  ...base,
  thinkingLevel: ThinkingLevel,
});
export type ThinkingLevelChangeEntry = Static<typeof ThinkingLevelChangeEntry>;

/** The session's display name (pi's `/name`); an empty or missing name clears it. */
export const SessionInfoEntry = Type.Object({
  type: Type.Literal("session_info"),
  ...base,
  name: Type.Optional(Type.String()),
});
export type SessionInfoEntry = Static<typeof SessionInfoEntry>;

/** Everything on the path before `firstKeptEntryId` is replaced by `summary` in the context. */
export const CompactionEntry = Type.Object({
  type: Type.Literal("compaction"),
  ...base,
  summary: Type.String(),
  firstKeptEntryId: Type.String(),
  tokensBefore: Type.Number(),
  details: Type.Optional(Type.Unknown()),
  /** Whether an extension's session_before_compact supplied the summary (pi writes it on every compaction). */
  fromHook: Type.Optional(Type.Boolean()),
  /** pi 1.6: the prompt and tools replayed up to here; the compacted context starts with it. */
  systemMessage: Type.Optional(SystemMessage),
  /** pi 1.6: what making the summary cost (counted in the session's totals). */
  usage: Type.Optional(Usage),
});
export type CompactionEntry = Static<typeof CompactionEntry>;

/**
 * The branch that was left when navigating the tree, summarized; hangs from the
 * navigation target and is part of the model's context on its branch (pi's entry).
 * `fromId` is the leaf that was left, whose path was summarized ("root" when there was none).
 */
export const BranchSummaryEntry = Type.Object({
  type: Type.Literal("branch_summary"),
  ...base,
  fromId: Type.String(),
  summary: Type.String(),
  details: Type.Optional(Type.Unknown()),
  /** pi 1.6: what making the summary cost. */
  usage: Type.Optional(Usage),
  fromHook: Type.Optional(Type.Boolean()),
});
export type BranchSummaryEntry = Static<typeof BranchSummaryEntry>;

/**
 * pi 1.6's append-only edit of an earlier entry's contribution to the model's context:
 * `replacement: null` leaves the target out, `{content}` replaces its content. The raw
 * entry stays as it was; the latest edit of a target on the active branch wins.
 */
export const ContextEditEntry = Type.Object({
  type: Type.Literal("context_edit"),
  ...base,
  targetId: Type.String(),
  replacement: Type.Union([
    Type.Null(),
    Type.Object({
      content: Type.Union([
        Type.String(),
        Type.Array(Type.Union([TextContent, ImageContent, ThinkingContent, ToolCall])),
      ]),
    }),
  ]),
});
export type ContextEditEntry = Static<typeof ContextEditEntry>;

/**
 * pi 1.6: usage the model was paid for outside a reply (`kind` says what, e.g.
 * `cache_warm`); counted in the session's totals, never part of the context or the tree's view.
 */
export const UsageEntry = Type.Object({
  type: Type.Literal("usage"),
  ...base,
  kind: Type.String(),
  provider: Type.String(),
  model: Type.String(),
  usage: Usage,
  note: Type.Optional(Type.String()),
});
export type UsageEntry = Static<typeof UsageEntry>;

/** Extension state (`pi.appendEntry`): kept in the tree, never sent to the model. */
export const CustomEntry = Type.Object({
  type: Type.Literal("custom"),
  ...base,
  customType: Type.String(),
  data: Type.Optional(Type.Unknown()),
});
export type CustomEntry = Static<typeof CustomEntry>;

/** An extension's message (`pi.sendMessage`): part of the model's context as user content. */
export const CustomMessageEntry = Type.Object({
  type: Type.Literal("custom_message"),
  ...base,
  customType: Type.String(),
  content: Type.Union([Type.String(), Type.Array(Type.Union([TextContent, ImageContent]))]),
  display: Type.Boolean(),
  details: Type.Optional(Type.Unknown()),
});
export type CustomMessageEntry = Static<typeof CustomMessageEntry>;

/** A user's bookmark on another entry; an empty or missing label clears it. */
export const LabelEntry = Type.Object({
  type: Type.Literal("label"),
  ...base,
  targetId: Type.String(),
  label: Type.Optional(Type.String()),
});
export type LabelEntry = Static<typeof LabelEntry>;

/** The entries pi 1.6.0 writes, each validated by its schema. */
export type KnownEntry =
  | MessageEntry
  | ModelChangeEntry
  | ThinkingLevelChangeEntry
  | SessionInfoEntry
  | UsageEntry
  | CompactionEntry
  | BranchSummaryEntry
  | CustomEntry
  | CustomMessageEntry
  | LabelEntry
  | ContextEditEntry;

/**
 * An entry we keep but do not interpret (a type a newer pi added, a message with a role
 * we do not model, or a known entry that failed its schema). It stays in the tree so
 * its children keep their parent, and is copied verbatim by fork and clone.
 */
export type OtherEntry = EntryBase & Record<string, unknown>;

/** Any line of a session file after the header. Narrow with `isKnownEntry` (worker/session/entries.ts) or `checkSessionEntry`. */
export type SessionEntry = KnownEntry | OtherEntry;

/** Schema of each known entry type, by `type`. */
export const KNOWN_ENTRY_SCHEMAS = {
  message: MessageEntry,
  model_change: ModelChangeEntry,
  thinking_level_change: ThinkingLevelChangeEntry,
  session_info: SessionInfoEntry,
  usage: UsageEntry,
  compaction: CompactionEntry,
  branch_summary: BranchSummaryEntry,
  custom: CustomEntry,
  custom_message: CustomMessageEntry,
  label: LabelEntry,
  context_edit: ContextEditEntry,
} as const;

/**
 * One parsed line after the header, checked against the schema of its `type`: the entry,
 * or errors naming each wrong field (an unknown `type` is an error too). For readers of
 * whole entries outside the store (the CLI, tests); the store keeps an entry that fails
 * as opaque instead.
 */
export function checkSessionEntry(value: unknown): CheckResult<KnownEntry> {
  const base = checker(EntryBase)(value);
  if (!base.ok) return base;
  const type = base.value.type;
  if (!Object.hasOwn(KNOWN_ENTRY_SCHEMAS, type))
    return { ok: false, errors: [`/type: "${type}" is not an entry type of pi 1.6.0's session format`] };
  return checker(KNOWN_ENTRY_SCHEMAS[type as keyof typeof KNOWN_ENTRY_SCHEMAS])(value);
}
