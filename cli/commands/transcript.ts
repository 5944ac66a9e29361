/**
 * A readable transcript of agent events for `attach`, `logs` and `prompt --wait`:
 * assistant text as it streams, one line per tool call with a short summary of its
 * arguments, results collapsed to their first line, and supervisor notices. With
 * several agents each line is prefixed by the agent's name.
 */
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";
import type { Colors } from "../context.js";
import type { RunEvent } from "../events/run-view.js";
import { isDialogMethod, dialogQuestion } from "../../shared/schema/rpc.js";
import type { DialogClosedReason } from "../../shared/schema/supervisor-events.js";

/** Why a dialog closed unanswered, as `attach` says it. */
const DIALOG_CLOSED: Record<Exclude<DialogClosedReason, "answered">, string> = {
  timeout: "its timeout passed",
  dismissed: "the extension dismissed it",
  worker_exited: "the worker exited",
};

/** Options of a renderer. */
export interface TranscriptOptions {
  write: (text: string) => void;
  colors: Colors;
  /** Prefix every line with the agent's name (several agents in one stream). */
  prefixAgents?: boolean;
  /** Show prompts, tool calls, errors and supervisor notices (default); false prints only assistant text. */
  verbose?: boolean;
  /**
   * Where a "skipped events" note goes when `verbose` is false (`prompt --wait`: stderr, so
   * stdout stays the reply's text). Without it such notes are not shown either.
   */
  notice?: (line: string) => void;
}

/** Turns a stream of events into text. Feed it messages in order; call `end()` at the end. */
export class TranscriptRenderer {
  private readonly partial = new Map<string, string>();
  /** Agents whose events this renderer has shown. */
  private readonly seen = new Set<string>();
  /** Characters of the current assistant message's text printed so far, per agent. */
  private readonly streamed = new Map<string, number>();
  /**
   * Agents whose stream skipped events since their current message began: the deltas that
   * follow would print the text with a hole, so they wait for the message's end, which
   * carries the whole text, and the part not yet printed is printed then.
   */
  private readonly behind = new Set<string>();

  constructor(private readonly opts: TranscriptOptions) {}

  /** Render one message. */
  feed(message: IpcStreamMessage): void {
    const c = this.opts.colors;
    if (message.type === "lagged") {
      // A gap before the first event is history the supervisor no longer holds (or a new
      // supervisor never held); only a gap after events is this client falling behind.
      const why =
        message.reason === "not_logged"
          ? "lost: the disk was full and their log lines were dropped; no log has them"
          : this.seen.has(message.agent)
            ? "this client fell behind"
            : `no longer held by the supervisor; pi-orch logs ${message.agent} has them`;
      const note = c.yellow(`… skipped events ${message.from}-${message.to} (${why})`);
      this.behind.add(message.agent);
      if (this.opts.verbose !== false) this.line(message.agent, note);
      else this.opts.notice?.(this.opts.prefixAgents ? `[${message.agent}] ${note}` : note);
      return;
    }
    const { agent } = message;
    this.seen.add(agent);
    // Events arrive unchecked from the wire; the renderer reads them as the typed stream and
    // prints nothing for a type it does not know.
    const e = message.event as RunEvent;
    const ui = message.event;
    if (ui.type === "extension_ui_request") {
      // A notice is said to the user, as pi's terminal shows it; the other fire-and-forget
      // requests (status, widget, title, editor text) are the extension's own display.
      if (ui.method === "notify") {
        const kind = ui.notifyType === "warning" || ui.notifyType === "error" ? ui.notifyType : "info";
        const paint = kind === "error" ? c.red : kind === "warning" ? c.yellow : c.dim;
        this.line(agent, paint(`· notice${kind === "info" ? "" : ` (${kind})`}: ${String(ui.message ?? "")}`));
        return;
      }
      // Dialogs: how to answer is prompt's to say.
      if (!isDialogMethod(ui.method)) return;
      this.line(agent, c.yellow(`? asks (${ui.method}): ${dialogQuestion(ui)}`));
      return;
    }
    switch (e.type) {
      case "message_start":
        this.streamed.delete(agent);
        this.behind.delete(agent);
        if (e.message?.role === "user") this.line(agent, c.bold(c.cyan(`> ${contentText(e.message.content)}`)));
        return;
      case "message_update": {
        const delta = e.assistantMessageEvent;
        if (this.behind.has(agent)) return;
        if (delta?.type === "text_delta") {
          this.streamed.set(agent, (this.streamed.get(agent) ?? 0) + String(delta.delta).length);
          this.text(agent, String(delta.delta));
        } else if (delta?.type === "thinking_delta" && this.opts.verbose !== false)
          this.text(agent, c.dim(String(delta.delta)));
        else if (delta?.type === "thinking_end" && this.opts.verbose !== false) this.breakLine(agent);
        return;
      }
      case "message_end": {
        const printed = this.streamed.get(agent) ?? 0;
        const caughtUp = this.behind.delete(agent);
        this.streamed.delete(agent);
        if (e.message?.role !== "assistant") return;
        // After a gap, the text the skipped (or held back) deltas carried, from the whole message.
        if (caughtUp) this.text(agent, contentText(e.message.content).slice(printed));
        this.breakLine(agent);
        if (e.message.stopReason === "error")
          this.line(agent, c.red(`error: ${e.message.errorMessage ?? "the model request failed"}`));
        else if (e.message.stopReason === "aborted") this.line(agent, c.yellow("aborted"));
        return;
      }
      case "tool_execution_start":
        this.line(agent, `${c.cyan("⏺")} ${c.bold(String(e.toolName))}(${summarizeArgs(e.toolName, e.args)})`);
        return;
      case "tool_execution_end":
        this.line(agent, (e.isError ? c.red : c.dim)(`  ⎿ ${collapse(contentText(e.result?.content))}`));
        return;
      case "agent_end":
        this.breakLine(agent);
        return;
      case "agent_status":
        this.line(agent, c.dim(`· ${e.previous} → ${e.status}${e.reason ? ` (${e.reason})` : ""}`));
        return;
      case "worker_started":
        this.line(agent, c.dim(`· worker started, pid ${e.pid}${e.resumed ? `, resuming ${e.resumed}` : ""}`));
        return;
      case "worker_exited":
        this.line(
          agent,
          c.yellow(
            `· worker exited (${e.reason}${e.code !== null && e.code !== undefined ? `, code ${e.code}` : ""}${e.signal ? `, ${e.signal}` : ""})`,
          ),
        );
        return;
      case "run_interrupted":
        this.line(agent, c.yellow(`! run interrupted: ${e.reason}`));
        return;
      case "limit_exceeded":
        this.line(agent, c.yellow(`! limit exceeded (${e.limit}): ${e.message}`));
        return;
      case "rpc_waiting":
        this.line(
          agent,
          c.yellow(
            `· ${e.command} is past its ${e.timeoutMs} ms timeout and waits while the worker waits on ${e.dialogs === 1 ? "a dialog" : `${e.dialogs} dialogs`}`,
          ),
        );
        return;
      case "dialog_closed": {
        // An answer is the person's own doing; the other ways a dialog goes away are news.
        const why: string | undefined = Object.hasOwn(DIALOG_CLOSED, e.reason)
          ? DIALOG_CLOSED[e.reason as keyof typeof DIALOG_CLOSED]
          : undefined;
        if (why) this.line(agent, c.dim(`· dialog closed: ${why}`));
        return;
      }
      case "protocol_error":
      case "supervisor_error":
        this.line(agent, c.red(`! ${e.type.replace("_", " ")}: ${e.message ?? ""}`));
        return;
      case "extension_error":
        this.line(agent, c.red(`! extension error: ${e.error ?? ""}`));
        return;
      case "auto_retry_start":
        this.line(agent, c.yellow(`· retrying (attempt ${e.attempt ?? "?"}): ${e.errorMessage ?? ""}`));
        return;
      case "compaction_start":
        this.line(agent, c.dim(`· compacting the context (${e.reason})`));
        return;
      default:
        return;
    }
  }

  /** Finish partial lines. */
  end(): void {
    for (const agent of [...this.partial.keys()]) this.breakLine(agent);
  }

  /** A whole line, after finishing the agent's open line. */
  private line(agent: string, text: string): void {
    if (this.opts.verbose === false) return;
    this.breakLine(agent);
    this.emit(agent, `${text}\n`);
  }

  private text(agent: string, text: string): void {
    if (!this.opts.prefixAgents) {
      this.opts.write(text);
      // Without prefixes only whether the line is open matters, so a marker stands for its
      // text instead of a copy that grows with every delta.
      const nl = text.lastIndexOf("\n");
      const open = nl >= 0 ? nl < text.length - 1 : text !== "" || Boolean(this.partial.get(agent));
      this.partial.set(agent, open ? "…" : "");
      return;
    }
    const buffered = (this.partial.get(agent) ?? "") + text;
    const lines = buffered.split("\n");
    this.partial.set(agent, lines.pop()!);
    for (const l of lines) this.emit(agent, `${l}\n`);
  }

  /** End the agent's open line, if any. */
  private breakLine(agent: string): void {
    const open = this.partial.get(agent);
    if (open === undefined) return;
    this.partial.delete(agent);
    if (open === "") return;
    if (this.opts.prefixAgents) this.emit(agent, `${open}\n`);
    else this.opts.write("\n");
  }

  private emit(agent: string, text: string): void {
    if (!this.opts.prefixAgents) {
      this.opts.write(text);
      return;
    }
    const c = this.opts.colors;
    this.opts.write(`${c.dim(`[${agent}]`)} ${text}`);
  }
}

/** `ls -A src`, `src/index.ts`, `"TODO"`: the one argument that says what a tool call does. */
export function summarizeArgs(tool: unknown, args: unknown): string {
  const a = (typeof args === "object" && args !== null ? args : {}) as Record<string, unknown>;
  const pick =
    tool === "bash"
      ? a.command
      : tool === "grep" || tool === "find"
        ? a.pattern
        : (a.path ?? a.file_path ?? a.command ?? a.pattern);
  const text = typeof pick === "string" ? pick : JSON.stringify(args ?? {});
  return truncate(text.replace(/\s+/g, " ").trim(), 80);
}

/** First line of a tool result, with how many lines were left out. */
export function collapse(text: string): string {
  const lines = text.trimEnd().split("\n");
  const first = truncate(lines[0] ?? "", 100) || "(no output)";
  return lines.length > 1 ? `${first} … (+${lines.length - 1} lines)` : first;
}

/** The text of a message content (a string, or an array of text/image parts). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((p: { type?: unknown; text?: unknown } | null) =>
      p?.type === "text" ? String(p.text) : p?.type === "image" ? "[image]" : "",
    )
    .join("");
}

function truncate(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
