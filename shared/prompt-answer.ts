/**
 * What a worker's answer to `prompt` says became of it. pi 1.x answers
 * `data: {disposition: "started" | "queued" | "handled"}` (and such a worker ends its runs
 * with `agent_settled`); our worker answers that too, plus `running` (before it spoke 1.x
 * it answered `data: {running}` alone); pi 0.73 answers without data (a run is then
 * assumed, as pi's own clients assume it).
 */

/** The `data` of our worker's `prompt` answer. */
export interface PromptAnswerData {
  disposition: PromptDisposition;
  /**
   * A run is going when the answer leaves (it started, takes the prompt queued, or an
   * extension command started one of its own): its `agent_settled` follows.
   */
  running: boolean;
}

/** What became of a prompt: a run started, it was queued behind the current run, or a command or input handler took it. */
export type PromptDisposition = "started" | "queued" | "handled";

/** The answer read: what became of the prompt, and whether the worker settles its runs (`agent_settled`). */
export interface PromptAnswer {
  disposition: PromptDisposition;
  settles: boolean;
}

/** Read an accepted prompt's answer. Pure. */
export function readPromptAnswer(response: { success: boolean; data?: unknown }): PromptAnswer {
  const data = (response.success ? response.data : undefined) as
    | { disposition?: unknown; running?: unknown }
    | undefined;
  const d = data?.disposition;
  // Ours says when a command it handled started a run of its own: that run is waited for.
  if (d === "handled" && data?.running === true) return { disposition: "started", settles: true };
  if (d === "started" || d === "queued" || d === "handled") return { disposition: d, settles: true };
  return { disposition: data?.running === false ? "handled" : "started", settles: false };
}
