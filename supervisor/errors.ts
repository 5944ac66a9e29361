/**
 * Errors the supervisor reports to clients. The `code` travels over IPC as
 * `{code, message}`; the message says what happened and what to do next.
 */

/** Machine-readable error codes of supervisor operations. */
export type OrchErrorCode =
  | "not_found"
  | "ambiguous"
  | "exists"
  | "invalid"
  | "not_running"
  | "busy"
  | "timeout"
  | "worker_exited"
  | "shutting_down"
  | "internal";

/** An error with a stable code and a message meant for the user. */
export class OrchError extends Error {
  constructor(
    readonly code: OrchErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "OrchError";
  }
}
