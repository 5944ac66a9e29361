/**
 * What one task's event stream says: turns, tool calls, the tool running now, tokens,
 * the last assistant text, the files edit/write touched, and when the run is over.
 * Pure: it folds events into counters and never does I/O.
 */
import type { TokenCounts } from "./types.js";

/** How a worker's run ended, as far as the events tell. */
export type RunEnd = { kind: "ended" } | { kind: "exited"; reason: string };

/** Folds one agent's events (as the supervisor streams them) into the numbers of a task. */
export class RunTracker {
  turns = 0;
  toolCalls = 0;
  tool: string | null = null;
  tokens: TokenCounts = { input: 0, output: 0, total: 0 };
  finalText = "";
  /** `stopReason` of the last assistant message, and its error message if any. */
  stopReason: string | null = null;
  errorMessage: string | null = null;
  /** Paths given to edit/write calls, in first-seen order. */
  readonly touched = new Set<string>();
  private running = new Map<string, string>();
  private started = false;

  /** Apply one event; returns how the run ended when this event ends it, else null. */
  apply(event: Record<string, unknown>): RunEnd | null {
    switch (event.type) {
      case "agent_start":
        this.started = true;
        return null;
      case "turn_start":
        this.turns++;
        return null;
      case "tool_execution_start": {
        this.toolCalls++;
        const name = String(event.toolName ?? "tool");
        this.running.set(String(event.toolCallId ?? this.toolCalls), name);
        this.tool = name;
        const args = event.args as { path?: unknown } | undefined;
        if ((name === "edit" || name === "write") && typeof args?.path === "string") this.touched.add(args.path);
        return null;
      }
      case "tool_execution_end":
        this.running.delete(String(event.toolCallId));
        this.tool = [...this.running.values()].pop() ?? null;
        return null;
      case "message_end":
        this.onMessage(event.message);
        return null;
      case "agent_end":
        this.tool = null;
        this.running.clear();
        return this.started ? { kind: "ended" } : null;
      case "worker_exited":
        this.tool = null;
        return { kind: "exited", reason: `the worker exited (${describeWorkerExit(event)})` };
      default:
        return null;
    }
  }

  private onMessage(message: unknown): void {
    const m = message as { role?: unknown; content?: unknown; usage?: Record<string, unknown>; stopReason?: unknown; errorMessage?: unknown } | undefined;
    if (m?.role !== "assistant") return;
    const usage = m.usage ?? {};
    const input = num(usage.input);
    const output = num(usage.output);
    this.tokens = {
      input: this.tokens.input + input,
      output: this.tokens.output + output,
      total: this.tokens.total + (typeof usage.totalTokens === "number" ? usage.totalTokens : input + output),
    };
    this.stopReason = typeof m.stopReason === "string" ? m.stopReason : null;
    this.errorMessage = typeof m.errorMessage === "string" ? m.errorMessage : null;
    const text = Array.isArray(m.content)
      ? m.content
          .filter((c): c is { type: "text"; text: string } => (c as { type?: unknown })?.type === "text" && typeof (c as { text?: unknown }).text === "string")
          .map((c) => c.text)
          .join("")
          .trim()
      : "";
    if (text !== "") this.finalText = text;
  }
}

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

function describeWorkerExit(event: Record<string, unknown>): string {
  const parts = [
    typeof event.code === "number" ? `code ${event.code}` : null,
    typeof event.signal === "string" ? `signal ${event.signal}` : null,
    typeof event.message === "string" ? event.message : null,
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(", ") : String(event.reason ?? "unknown reason");
}
