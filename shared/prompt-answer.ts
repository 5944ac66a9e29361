/**
 * What our worker's answer to `prompt` adds to pi's: `data: {running}`, whether a run is
 * going when the answer leaves, so its `agent_end` follows. Pi answers a prompt without
 * data (its RpcClient ignores the answer's fields), so a client that knows nothing of it
 * loses nothing, and one that does can stop waiting for a run a command never started.
 */

/** The `data` of our `prompt` answer. */
export interface PromptAnswerData {
  /** A run is going (it started, or takes the prompt queued): wait for its `agent_end`. */
  running: boolean;
}

/**
 * Whether an answer to `prompt` says no run is going (an extension command or `input`
 * handler took it without starting one). False for an answer without our data, as pi's
 * workers give: a run is then assumed, as pi's own clients assume it. Pure.
 */
export function startedNoRun(response: { success: boolean; data?: unknown }): boolean {
  return response.success && (response.data as Partial<PromptAnswerData> | undefined)?.running === false;
}
