/**
 * Extension dialogs on the wire (`extension_ui_request` with a method that waits for an
 * answer): which methods they are, and their question as one line. No schema here, so the
 * supervisor's line path and the CLI can use it without building one.
 */

/** The `extension_ui_request` methods that wait for an answer (the rest are the extension's own display). */
export const DIALOG_METHODS = ["select", "confirm", "input", "editor"] as const;
export type DialogMethod = (typeof DIALOG_METHODS)[number];

/** Whether a request's `method` is a dialog waiting for an answer. */
export function isDialogMethod(method: unknown): method is DialogMethod {
  return (DIALOG_METHODS as readonly unknown[]).includes(method);
}

/** A dialog's question as one line: its title and message, whichever it has. */
export function dialogQuestion(request: { title?: unknown; message?: unknown }): string {
  return [request.title, request.message].filter((t) => typeof t === "string" && t !== "").join(": ");
}
