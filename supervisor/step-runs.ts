/**
 * An agent's run as one transition of the agent table sees it: begun at `agent_start`,
 * settled at its end (idle, with the reason when it was aborted), its tokens counted against
 * the run's limit, and aborted once for a limit of ours (the worker is asked, the reason kept).
 */
import { RUNNING_STATUSES, type AgentStatus } from "../shared/schema/agent.js";
import { countRunTokens } from "./run-limits.js";
import type { StepWriter } from "./step-writer.js";

/** A run starts: the one before it (if any) ends, and the run's timeout is armed. */
export function beginRun(w: StepWriter): void {
  const s = w.s;
  endRun(w);
  const n = ++s.runCounter;
  s.outcome = null;
  const limit = s.record.limits.runTimeoutMs;
  if (limit !== undefined) w.timer("run", limit, { kind: "run_timeout", gen: s.worker!.gen, run: n });
  s.run = { n, tokens: 0, abortReason: null };
}

/** The run ends (settled, or its worker gone): its timeout goes with it. */
export function endRun(w: StepWriter): void {
  if (w.s.run && w.s.record.limits.runTimeoutMs !== undefined) w.cancel("run");
  w.s.run = null;
}

/** The run is over: the agent is idle, with the reason if it was aborted. */
export function settleRun(w: StepWriter, status: AgentStatus): void {
  const reason = w.s.run?.abortReason ?? undefined;
  if (reason) w.s.outcome = { state: "idle", message: `aborted: ${reason}` };
  endRun(w);
  if (RUNNING_STATUSES.has(status)) w.setStatus("idle", reason ? `run aborted: ${reason}` : undefined);
}

/** Count a message's tokens against the run's limit; over it, the run is aborted. */
export function countTokens(w: StepWriter, message: unknown): void {
  const s = w.s;
  if (!s.run) return;
  const { tokens, over } = countRunTokens(s.run, message, s.record.limits.maxTokens);
  if (tokens !== s.run.tokens) s.run = { ...s.run, tokens };
  if (over) abortRun(w, "max_tokens", over);
}

/** Ask the worker to abort the current run and remember why, once. */
export function abortRun(w: StepWriter, limit: string, reason: string): void {
  const s = w.s;
  if (!s.run || s.run.abortReason || !s.worker) return;
  s.run = { ...s.run, abortReason: reason };
  w.report({ type: "limit_exceeded", limit, message: reason });
  w.send({ id: w.requestId("abort"), type: "abort" });
}
