/**
 * `pi -p "task"`: one run, then exit. Text mode prints the final assistant text;
 * JSON mode (`--mode json`) prints a session header and then every event as JSONL.
 * Exit code 0 on success, 1 when the run ended in an error or was aborted.
 */
import type { Writable } from "node:stream";
import { isoTimestamp } from "../../shared/iso-time.js";
import { JsonlWriter } from "../../shared/jsonl.js";
import type { AssistantMessage, ImageContent } from "../../shared/schema/messages.js";
import type { AgentSession } from "../core/agent-session.js";
import { toWireEvent } from "./wire-event.js";

/** Options of one print-mode run. */
export interface PrintOptions {
  prompt: string;
  /** Attached to the prompt (`pi @shot.png "..."`). */
  images?: ImageContent[];
  json: boolean;
  stdout: Writable;
  stderr: Writable;
}

/** Run the prompt to completion; resolves with the exit code. */
export async function runPrintMode(session: AgentSession, opts: PrintOptions): Promise<number> {
  const writer = opts.json ? new JsonlWriter(opts.stdout) : null;
  if (writer) {
    void writer.write({
      type: "session",
      version: 3,
      id: session.sessionId,
      timestamp: isoTimestamp(new Date()),
      cwd: session.cwd,
    });
  }
  let last: AssistantMessage | null = null;
  let settled: () => void = () => undefined;
  const settling = new Promise<void>((resolve) => {
    settled = resolve;
  });
  const unsubscribe = session.subscribe((event) => {
    if (event.type === "agent_settled") settled();
    void writer?.write(toWireEvent(event));
    if (event.type === "message_end" && event.message.role === "assistant") last = event.message;
    if (!writer && event.type === "auto_retry_start") {
      opts.stderr.write(
        `pi: ${event.errorMessage}; retrying in ${Math.round(event.delayMs / 1000)}s (attempt ${event.attempt}/${event.maxAttempts})\n`,
      );
    }
  });
  let run: Promise<void> | undefined;
  try {
    run = (await session.prompt(opts.prompt, opts.images)).done;
    await run;
    // pi 1.6: agent_before_settle handlers may still write entries and run once more.
    if (session.settling) await settling;
  } catch (err) {
    unsubscribe();
    opts.stderr.write(`pi: ${(err as Error).message}\n`);
    return 1;
  }
  unsubscribe();
  await writer?.flush();
  const final = last as AssistantMessage | null;
  // An extension command (`/hello Ada`) that started no run: done, with nothing to print.
  // One that sent a message (`pi.sendUserMessage`) had its run awaited above and prints
  // its reply (pi 0.73.1 exits before that run ends and prints nothing).
  if (run === undefined) return 0;
  if (!final) return 1;
  if (!writer) {
    const text = final.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    if (text.length > 0) await writeAll(opts.stdout, text.endsWith("\n") ? text : `${text}\n`);
  }
  if (final.stopReason === "error" || final.stopReason === "aborted") {
    opts.stderr.write(
      `pi: the run ended with ${final.stopReason === "error" ? "an error" : "an abort"}: ${final.errorMessage ?? "no details"}\n`,
    );
    return 1;
  }
  return 0;
}

function writeAll(stream: Writable, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (stream.write(text)) resolve();
    else stream.once("drain", () => resolve());
  });
}
