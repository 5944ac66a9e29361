/**
 * Builds one streaming assistant message and the wire events that describe it.
 * Providers translate their SDK's stream into calls on this builder, so every
 * provider produces the same event shapes (those of pi 0.73.1).
 */
import type { AssistantMessage, Model, StopReason, ToolCall, Usage } from "../../shared/schema/messages.js";
import { emptyUsage } from "../../shared/schema/messages.js";
import type { ProviderEvent } from "../types.js";
import type { RetryHint } from "./retry-delay.js";
import { parseToolCallArguments } from "./tool-arguments.js";

/** A tool call while its arguments stream: pi shows `partialArgs` until the call ends. */
type StreamingToolCall = ToolCall & { partialArgs?: string };

/**
 * Accumulates text, thinking and tool-call blocks. Each method returns the event to
 * yield; `partial` is the live message object (serialise it before the next call).
 */
export class MessageBuilder {
  readonly message: AssistantMessage;
  private open: { kind: "text" | "thinking" | "toolcall"; index: number } | null = null;
  private hasStarted = false;

  constructor(api: string, provider: string, model: string) {
    this.message = {
      role: "assistant",
      content: [],
      api,
      provider,
      model,
      usage: emptyUsage(),
      stopReason: "stop",
      timestamp: Date.now(),
    };
  }

  /** The kind of block open now, if any. */
  openKind(): "text" | "thinking" | "toolcall" | null {
    return this.open?.kind ?? null;
  }

  /** Whether `start()` was called: the response came and its stream is being read. */
  get started(): boolean {
    return this.hasStarted;
  }

  start(): ProviderEvent {
    this.hasStarted = true;
    return { type: "start", partial: this.message };
  }

  /** Close whichever block is open; returns its end event, if any. */
  closeOpen(): ProviderEvent | null {
    const open = this.open;
    if (!open) return null;
    this.open = null;
    const block = this.message.content[open.index];
    if (open.kind === "text" && block.type === "text") {
      return { type: "text_end", contentIndex: open.index, content: block.text, partial: this.message };
    }
    if (open.kind === "thinking" && block.type === "thinking") {
      return { type: "thinking_end", contentIndex: open.index, content: block.thinking, partial: this.message };
    }
    const call = block as StreamingToolCall;
    // As pi 1.6: one full parse of the finished text; a text that is no JSON object leaves
    // `{}` and the error the loop answers the model with.
    const parsed = parseToolCallArguments(call.partialArgs ?? "");
    call.arguments = parsed.arguments;
    if (parsed.argumentsError !== undefined) call.argumentsError = parsed.argumentsError;
    delete call.partialArgs;
    return {
      type: "toolcall_end",
      contentIndex: open.index,
      toolCall: {
        type: "toolCall",
        id: call.id,
        name: call.name,
        arguments: call.arguments,
        ...(call.argumentsError !== undefined ? { argumentsError: call.argumentsError } : {}),
      },
      partial: this.message,
    };
  }

  /** Append text, opening a text block if needed. Returns the events in order. */
  text(delta: string): ProviderEvent[] {
    const out: ProviderEvent[] = [];
    if (this.open?.kind !== "text") {
      const end = this.closeOpen();
      if (end) out.push(end);
      this.message.content.push({ type: "text", text: "" });
      this.open = { kind: "text", index: this.message.content.length - 1 };
      out.push({ type: "text_start", contentIndex: this.open.index, partial: this.message });
    }
    const index = this.open!.index;
    if (delta.length > 0) {
      const block = this.message.content[index] as { text: string };
      block.text += delta;
      out.push({ type: "text_delta", contentIndex: index, delta, partial: this.message });
    }
    return out;
  }

  /** Append thinking text, opening a thinking block if needed. */
  thinking(delta: string, signature?: string): ProviderEvent[] {
    const out: ProviderEvent[] = [];
    if (this.open?.kind !== "thinking") {
      const end = this.closeOpen();
      if (end) out.push(end);
      this.message.content.push({ type: "thinking", thinking: "" });
      this.open = { kind: "thinking", index: this.message.content.length - 1 };
      out.push({ type: "thinking_start", contentIndex: this.open.index, partial: this.message });
    }
    const index = this.open!.index;
    const block = this.message.content[index] as { thinking: string; thinkingSignature?: string };
    if (signature !== undefined) block.thinkingSignature = (block.thinkingSignature ?? "") + signature;
    if (delta.length > 0) {
      block.thinking += delta;
      out.push({ type: "thinking_delta", contentIndex: index, delta, partial: this.message });
    }
    return out;
  }

  /** Open a new tool-call block. */
  toolCallStart(id: string, name: string): ProviderEvent[] {
    const out: ProviderEvent[] = [];
    const end = this.closeOpen();
    if (end) out.push(end);
    const call: StreamingToolCall = { type: "toolCall", id, name, arguments: {}, partialArgs: "" };
    this.message.content.push(call);
    this.open = { kind: "toolcall", index: this.message.content.length - 1 };
    out.push({ type: "toolcall_start", contentIndex: this.open.index, partial: this.message });
    return out;
  }

  /** Append raw JSON text to the open tool call's arguments. */
  toolCallDelta(delta: string): ProviderEvent[] {
    if (this.open?.kind !== "toolcall") return [];
    const call = this.message.content[this.open.index] as StreamingToolCall;
    call.partialArgs = (call.partialArgs ?? "") + delta;
    // The arguments parsed so far, as pi shows them while they stream.
    call.arguments = parsePartialJson(call.partialArgs);
    return [{ type: "toolcall_delta", contentIndex: this.open.index, delta, partial: this.message }];
  }

  /** Record token counts (absent ones keep their value) and price them with the model's per-million costs. */
  setUsage(usage: Partial<Omit<Usage, "cost">>, price: Model["cost"]): void {
    const u = this.message.usage;
    Object.assign(u, usage);
    u.reasoning ??= 0;
    u.totalTokens = u.input + u.output + u.cacheRead + u.cacheWrite;
    u.cost.input = (u.input * price.input) / 1e6;
    u.cost.output = (u.output * price.output) / 1e6;
    u.cost.cacheRead = (u.cacheRead * price.cacheRead) / 1e6;
    u.cost.cacheWrite = (u.cacheWrite * price.cacheWrite) / 1e6;
    u.cost.total = u.cost.input + u.cost.output + u.cost.cacheRead + u.cost.cacheWrite;
    u.cost.totalFromProvider = false;
  }

  setResponseId(id: string | undefined): void {
    if (id) this.message.responseId = id;
  }

  /**
   * Finish successfully. `stopReason` becomes `toolUse` when the message has tool calls.
   * On `length` the last tool call was cut off by the output limit: as in pi 1.6 its
   * text is parsed as any other (so it has `argumentsError`); the agent loop runs none
   * of the message's calls.
   */
  done(reason: StopReason = "stop"): ProviderEvent[] {
    const out: ProviderEvent[] = [];
    const end = this.closeOpen();
    if (end) out.push(end);
    const hasCalls = this.message.content.some((c) => c.type === "toolCall");
    this.message.stopReason = hasCalls && reason === "stop" ? "toolUse" : reason;
    out.push({ type: "done", message: this.message });
    return out;
  }

  /** Finish with an error or an abort. Open blocks are closed; a half-streamed tool call is dropped. */
  fail(
    errorMessage: string,
    opts: { aborted?: boolean; retryable?: boolean; contextOverflow?: boolean; retryHint?: RetryHint } = {},
  ): ProviderEvent[] {
    const out: ProviderEvent[] = [];
    if (this.open?.kind === "toolcall") {
      this.message.content.splice(this.open.index, 1);
      this.open = null;
    }
    const end = this.closeOpen();
    if (end) out.push(end);
    this.message.stopReason = opts.aborted ? "aborted" : "error";
    this.message.errorMessage = errorMessage;
    out.push({
      type: "error",
      message: this.message,
      retryable: !opts.aborted && (opts.retryable ?? false),
      contextOverflow: opts.contextOverflow,
      ...(opts.retryHint ? { retryHint: opts.retryHint } : {}),
    });
    return out;
  }
}

/**
 * The arguments a cut-off JSON text had so far: open strings, arrays and objects are
 * closed, a dangling key or separator dropped. Pure; `{}` when nothing usable came.
 */
export function parsePartialJson(raw: string): Record<string, unknown> {
  const complete = parseToolCallArguments(raw);
  if (complete.argumentsError === undefined) return complete.arguments;
  const closers: string[] = [];
  let inString = false;
  let escaped = false;
  for (const ch of raw) {
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === "{") closers.push("}");
    else if (ch === "[") closers.push("]");
    else if (ch === "}" || ch === "]") closers.pop();
  }
  let text = raw;
  if (inString) text += escaped ? '\\"' : '"';
  // Drop what cannot stand before a closer: a trailing comma or colon, or a key with no value.
  for (let attempt = 0; attempt < 4; attempt++) {
    const candidate = text.replace(/[\s,:]+$/, "") + closers.slice().reverse().join("");
    try {
      const value = JSON.parse(candidate);
      return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
    } catch {
      text = text.replace(/[\s,]*"(?:[^"\\]|\\.)*"\s*:?\s*$/, "").replace(/[\s,:]+$/, "");
    }
  }
  return {};
}
