/**
 * The user's own shell commands (pi's `bash` RPC command and `!cmd`): run in the session's
 * folder, or handed to a `user_bash` handler that supplies the result or the operations to
 * run it with; the output is recorded as a bashExecution message for the next prompt.
 */
import type { BashExecutionMessage } from "../../shared/schema/messages.js";
import type { Agent } from "../agent/agent.js";
import type { ExtensionHooks } from "../extensions/hooks.js";
import type { SessionStore } from "../session/session-file.js";
import type { BashOperations } from "../tools/bash.js";
import { plainBashOutput } from "./bash-output.js";

/** The result of the `bash` RPC command. */
export interface BashCommandResult {
  output: string;
  exitCode: number | null;
  cancelled: boolean;
  truncated: boolean;
  fullOutputPath?: string;
}

/** What a user command reads and records of its session. */
export interface UserBashHost {
  cwd(): string;
  extensions(): ExtensionHooks;
  /** The conversation the output joins. */
  agent(): Agent;
  /** The session it is recorded in (kept in memory with `--no-session`). */
  store(): SessionStore;
}

/** One user command at a time, and its abort. */
export class UserBash {
  private controller: AbortController | null = null;

  constructor(private readonly host: UserBashHost) {}

  /** Run `command` (see the file's comment); refused while another one runs. */
  async run(
    command: string,
    options: { excludeFromContext?: boolean; onChunk?: (delta: string) => void },
  ): Promise<BashCommandResult> {
    if (this.controller) throw new Error("a bash command is already running; send abort_bash first");
    const { runBash } = await import("../tools/bash.js");
    const controller = new AbortController();
    this.controller = controller;
    try {
      // pi's user_bash: a handler may return a whole result, or `operations` to run the command with (e.g. over ssh).
      const intercept = await this.host
        .extensions()
        .userBash(command, options.excludeFromContext === true, this.host.cwd());
      const supplied = intercept?.result as Awaited<ReturnType<typeof runBash>> | undefined;
      const operations = intercept?.operations as BashOperations | undefined;
      const raw =
        supplied ??
        (await runBash(command, {
          cwd: this.host.cwd(),
          signal: controller.signal,
          ...(options.onChunk ? { onChunk: (text: string) => emitPlain(text, options.onChunk!) } : {}),
          ...(typeof operations?.exec === "function" ? { operations } : {}),
        }));
      const r = { ...raw, output: plainBashOutput(raw.output) };
      const message: BashExecutionMessage = {
        role: "bashExecution",
        command,
        output: r.output,
        exitCode: r.exitCode,
        cancelled: r.cancelled,
        truncated: r.truncated,
        fullOutputPath: r.fullOutputPath ?? null,
        timestamp: Date.now(),
        ...(options.excludeFromContext ? { excludeFromContext: true } : {}),
      };
      this.host.agent().messages.push(message);
      this.host.store().appendOrKeep({ type: "message", message });
      return {
        output: r.output,
        // pi leaves the exit code out of a cancelled command's result.
        ...(r.cancelled ? {} : { exitCode: r.exitCode }),
        cancelled: r.cancelled,
        truncated: r.truncated,
        ...(r.fullOutputPath ? { fullOutputPath: r.fullOutputPath } : {}),
      } as BashCommandResult;
    } finally {
      this.controller = null;
    }
  }

  /** Cancel the command in progress, if any. */
  abort(): void {
    this.controller?.abort();
  }
}

/**
 * `text` without ANSI sequences and carriage returns, to `send` when anything is left
 * (pi 1.6 streams the RPC bash output sanitized). A sequence cut between two chunks
 * passes through its halves unrecognized; pi holds it back, but output is rarely split there.
 */
function emitPlain(text: string, send: (delta: string) => void): void {
  const plain = plainBashOutput(text);
  if (plain !== "") send(plain);
}
