/**
 * pi-ai 1.x's transcript helpers for extensions (`@earendil-works/pi-ai`): since pi 0.86 a
 * custom provider's stream gets the system prompt and the tools as system messages at
 * the head of `context.messages` (a `TranscriptContext`), and reads them back with
 * `getCurrentSystemPrompt` / `getCurrentTools`. Pure functions, as pi-ai's, plus `uuidv7`.
 */

import type { SystemMessage, ToolDeclaration } from "../../shared/schema/messages.js";

export type { SystemMessage, ToolDeclaration };

type Message = { role: string; [key: string]: unknown };

/** A context in either shape: pi 1.x's (`messages` only) or 0.73's (`systemPrompt` and `tools` beside them). */
export interface AnyContext {
  systemPrompt?: string;
  tools?: ToolDeclaration[];
  messages: Message[];
}

const isSystem = (m: Message): m is Message & SystemMessage => m.role === "system";

/** Text of message content: a string, or its text blocks joined by `separator`. */
export function contentText(content: SystemMessage["content"], separator = "\n"): string {
  if (typeof content === "string") return content;
  return content
    .filter((b) => b.type === "text")
    .map((b) => b.text ?? "")
    .join(separator);
}

/** `text.slice(start, end)` as a string of its own (V8 keeps a long slice as a view of the whole text). */
export function ownedSlice(text: string, start: number, end = text.length): string {
  return `${text.slice(start, end)} `.slice(0, -1);
}

/** A later system message for APIs that take system messages mid-conversation: section changes framed by name. */
export function renderSystemMessageUpdate(message: SystemMessage): string {
  const parts: string[] = [];
  const text = contentText(message.content);
  if (text.length > 0) parts.push(text);
  for (const [name, value] of Object.entries(message.sections ?? {})) {
    parts.push(
      value === null
        ? `Removed system prompt section "${name}".`
        : `Updated system prompt section "${name}":\n\n${value}`,
    );
  }
  return parts.join("\n\n");
}

/** A system message as a whole prompt: its content, then its sections. */
export function getSystemMessageText(message: SystemMessage): string {
  const parts = [contentText(message.content)];
  for (const text of Object.values(message.sections ?? {})) if (text !== null) parts.push(text);
  return parts.filter((p) => p.length > 0).join("\n\n");
}

/** The leading system message for a prompt and tools; undefined when both are empty. */
export function createInitialSystemMessage(
  systemPrompt: string | undefined,
  tools: ToolDeclaration[] | undefined,
): SystemMessage | undefined {
  const hasPrompt = systemPrompt !== undefined && systemPrompt.length > 0;
  const hasTools = tools !== undefined && tools.length > 0;
  if (!hasPrompt && !hasTools) return undefined;
  return { role: "system", content: systemPrompt ?? "", ...(hasTools ? { toolsAdded: tools } : {}), timestamp: 0 };
}

/**
 * `systemPrompt` and `tools` folded into a leading system message. A transcript that already
 * starts with one is left as it is, so normalizing twice adds nothing.
 */
export function normalizeContext(context: AnyContext): { messages: Message[] } {
  if (context.messages[0] && isSystem(context.messages[0])) return { messages: context.messages };
  const head = createInitialSystemMessage(context.systemPrompt, context.tools);
  return { messages: head ? [head as unknown as Message, ...context.messages] : context.messages };
}

/** The leading system message, if the transcript starts with one. */
export function getInitialSystemMessage(messages: Message[]): SystemMessage | undefined {
  const first = messages[0];
  return first && isSystem(first) ? first : undefined;
}

/** The transcript without its leading system message. */
export function withoutInitialSystemMessage(messages: Message[]): Message[] {
  return getInitialSystemMessage(messages) ? messages.slice(1) : messages;
}

/** The tools after every system message's additions and removals, in order. */
export function getCurrentTools(messages: Message[]): ToolDeclaration[] {
  const tools = new Map<string, ToolDeclaration>();
  for (const m of messages) {
    if (!isSystem(m)) continue;
    for (const t of m.toolsRemoved ?? []) tools.delete(t.name);
    for (const t of m.toolsAdded ?? []) tools.set(t.name, t);
  }
  return [...tools.values()];
}

/** Every system message replayed into one: contents appended, sections patched by name, current tools. */
export function getCurrentSystemMessage(messages: Message[]): SystemMessage | undefined {
  const content: string[] = [];
  const sections = new Map<string, string>();
  let timestamp: number | undefined;
  for (const m of messages) {
    if (!isSystem(m)) continue;
    timestamp ??= m.timestamp;
    const text = contentText(m.content);
    if (text.length > 0) content.push(text);
    for (const [name, value] of Object.entries(m.sections ?? {})) {
      if (value === null) sections.delete(name);
      else sections.set(name, value);
    }
  }
  const tools = getCurrentTools(messages);
  if (timestamp === undefined && tools.length === 0) return undefined;
  return {
    role: "system",
    content: content.join("\n\n"),
    ...(sections.size > 0 ? { sections: Object.fromEntries(sections) } : {}),
    ...(tools.length > 0 ? { toolsAdded: tools } : {}),
    timestamp: timestamp ?? 0,
  };
}

/** The system prompt's text after every system message. */
export function getCurrentSystemPrompt(messages: Message[]): string {
  const m = getCurrentSystemMessage(messages);
  return m ? getSystemMessageText(m) : "";
}

/** The transcript for APIs without mid-conversation system messages: one replayed system message leads. */
export function collapseSystemMessages(context: AnyContext): { messages: Message[] } {
  const { messages } = normalizeContext(context);
  const head = getCurrentSystemMessage(messages);
  const rest = messages.filter((m) => !isSystem(m));
  return { messages: head ? [head as unknown as Message, ...rest] : rest };
}

/** Later system messages kept in place when the model takes them, else collapsed. */
export function resolveTranscript(
  context: AnyContext,
  supportsMidConvoSystemMessages: boolean,
): { messages: Message[] } {
  return supportsMidConvoSystemMessages ? normalizeContext(context) : collapseSystemMessages(context);
}

/** A tool without its executable and display-only fields. */
export function toToolDeclaration(tool: ToolDeclaration): ToolDeclaration {
  return {
    name: tool.name,
    description: tool.description,
    parameters: JSON.parse(JSON.stringify(tool.parameters)) as unknown,
    ...(tool.constrainedSampling === undefined ? {} : { constrainedSampling: tool.constrainedSampling }),
  };
}

/** Whether two tools declare the same interface to the model. */
export function declarationsEqual(a: ToolDeclaration, b: ToolDeclaration): boolean {
  return JSON.stringify(toToolDeclaration(a)) === JSON.stringify(toToolDeclaration(b));
}

/** What changed between two tool states; a changed definition is a removal and an addition. */
export function getToolStateChanges(
  previous: ToolDeclaration[],
  current: ToolDeclaration[],
): { toolsAdded: ToolDeclaration[]; toolsRemoved: { name: string }[] } {
  const before = new Map(previous.map((t) => [t.name, t]));
  const after = new Map(current.map((t) => [t.name, t]));
  return {
    toolsAdded: current
      .filter((t) => {
        const old = before.get(t.name);
        return old === undefined || !declarationsEqual(old, t);
      })
      .map(toToolDeclaration),
    toolsRemoved: previous
      .filter((t) => {
        const now = after.get(t.name);
        return now === undefined || !declarationsEqual(t, now);
      })
      .map((t) => ({ name: t.name })),
  };
}

/** Every tool any system message declared, in first-declaration order (the last definition of each). */
export function getDeclaredTools(messages: Message[]): ToolDeclaration[] {
  const defs = new Map<string, ToolDeclaration>();
  for (const m of messages) if (isSystem(m)) for (const t of m.toolsAdded ?? []) defs.set(t.name, t);
  return [...defs.values()];
}

/** Index of the last system message with a removal or a redeclaration of a name seen before, or -1 (pi-ai's rule). */
function lastNonAdditiveToolChange(systemMessages: readonly SystemMessage[]): number {
  // A name declared before counts as redeclared even after its removal, as in pi-ai.
  const declared = new Set<string>();
  let last = -1;
  systemMessages.forEach((m, index) => {
    if ((m.toolsRemoved?.length ?? 0) > 0) last = index;
    for (const t of m.toolsAdded ?? []) {
      if (declared.has(t.name)) last = index;
      declared.add(t.name);
    }
  });
  return last;
}

/** Whether the transcript's tool history removes or redeclares a tool, which additions in place cannot say. */
export function hasNonAdditiveToolChanges(messages: Message[]): boolean {
  return lastNonAdditiveToolChange(messages.filter(isSystem)) >= 0;
}

/**
 * pi-ai's split of the tool declarations between the request's `tools` and the system
 * messages in place: `"none"`, all current tools in the request; `"changes"`, none there
 * (every system message declares its own); `"additions"`, the tools as of the last removal
 * or redeclaration in the request, and later additions where their messages stand, so a
 * removal invalidates the cached prefix once rather than every later addition doing so.
 * `foldedSystemMessages` is how many leading system messages the request's `tools` covers.
 */
export function resolveTranscriptTools(
  messages: Message[],
  support: "none" | "additions" | "changes",
): { requestTools: ToolDeclaration[]; foldedSystemMessages: number } {
  const system = messages.filter(isSystem);
  if (support === "none") return { requestTools: getCurrentTools(system), foldedSystemMessages: system.length };
  if (support === "changes") return { requestTools: [], foldedSystemMessages: 0 };
  const folded = Math.max(getInitialSystemMessage(messages) ? 1 : 0, lastNonAdditiveToolChange(system) + 1);
  return { requestTools: getCurrentTools(system.slice(0, folded)), foldedSystemMessages: folded };
}

const MAX_UUID_V7_TIMESTAMP = 0xffffffffffff;
let lastTimestamp = -1;
let sequence: bigint | undefined;

/**
 * A time-ordered UUIDv7, as pi-ai makes them: ids made in one millisecond keep their order
 * (a counter seeded at random continues across them). A given timestamp is kept as it is.
 */
export function uuidv7(timestampMs?: number): string {
  const requested = timestampMs ?? Date.now();
  if (!Number.isInteger(requested) || requested < 0 || requested > MAX_UUID_V7_TIMESTAMP)
    throw new RangeError(`UUIDv7 timestamp must be an integer between 0 and ${MAX_UUID_V7_TIMESTAMP}`);
  const ts = timestampMs === undefined ? Math.max(requested, lastTimestamp) : timestampMs;
  if (timestampMs === undefined) lastTimestamp = ts;
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  sequence =
    sequence === undefined
      ? (BigInt(bytes[1]) << 32n) |
        (BigInt(bytes[2]) << 24n) |
        (BigInt(bytes[3]) << 16n) |
        (BigInt(bytes[4]) << 8n) |
        BigInt(bytes[5])
      : (sequence + 1n) & ((1n << 41n) - 1n);
  const t = BigInt(ts);
  for (let i = 5; i >= 0; i--) bytes[i] = Number(t >> BigInt((5 - i) * 8)) & 0xff;
  bytes[6] = 0x70 | Number((sequence >> 37n) & 0x0fn);
  bytes[7] = Number((sequence >> 29n) & 0xffn);
  bytes[8] = 0x80 | Number((sequence >> 23n) & 0x3fn);
  bytes[9] = Number((sequence >> 15n) & 0xffn);
  bytes[10] = Number((sequence >> 7n) & 0xffn);
  bytes[11] = Number((sequence & 0x7fn) << 1n) | (bytes[11] & 0x01);
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The helpers as module members. */
export const TRANSCRIPT_EXPORTS = {
  contentText,
  ownedSlice,
  renderSystemMessageUpdate,
  getSystemMessageText,
  createInitialSystemMessage,
  normalizeContext,
  getInitialSystemMessage,
  withoutInitialSystemMessage,
  getCurrentTools,
  getCurrentSystemMessage,
  getCurrentSystemPrompt,
  collapseSystemMessages,
  resolveTranscript,
  toToolDeclaration,
  declarationsEqual,
  getToolStateChanges,
  getDeclaredTools,
  hasNonAdditiveToolChanges,
  resolveTranscriptTools,
  uuidv7,
};
