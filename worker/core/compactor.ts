/**
 * Compaction runs of the session layer: summarize the older part of the
 * conversation with the current model, record a compaction entry and report
 * `compaction_start` / `compaction_end`. The plan and the summary request are pure
 * (session/compaction.ts); this file does the I/O around them.
 */
import { getCurrentSystemMessage } from "../providers/transcript.js";
import type { CompactionResult, WorkerEvent } from "../../shared/schema/events.js";
import type { AgentMessage, AssistantMessage, Model, Usage } from "../../shared/schema/messages.js";
import { emptyUsage } from "../../shared/schema/messages.js";
import { userMessage } from "../agent/agent.js";
import { estimateContextTokens, prepareCompaction, type CompactionPlan } from "../session/compaction.js";
import {
  NO_PRIOR_HISTORY,
  SPLIT_TURN_HEADING,
  SUMMARY_SYSTEM_PROMPT,
  buildSummaryRequest,
  buildTurnPrefixRequest,
} from "../session/summary-request.js";
import type { SessionEntry } from "../../shared/schema/session.js";
import type { SessionStore } from "../session/session-file.js";
import { formatFileLists } from "../session/tree.js";
import type { Provider } from "../types.js";

/** Why a compaction runs. */
export type CompactionReason = "manual" | "threshold" | "overflow";

/** The model a summary is asked of. */
export interface SummaryModel {
  model: Model;
  provider: Provider;
  apiKey: string | undefined;
}

/** A manual compaction an extension's `session_before_compact` cancelled. */
class CompactionCancelled extends Error {
  constructor() {
    super("compaction was cancelled by an extension");
  }
}

/** What a compaction needs from the session. */
export interface CompactionDeps extends SummaryModel {
  store: SessionStore;
  keepTokens: number;
  emit: (event: Extract<WorkerEvent, { type: "compaction_start" | "compaction_end" }>) => void;
  /** Extensions' `session_before_compact`: may cancel, or supply the compaction. */
  before?: (
    preparation: CompactionPreparation,
    customInstructions: string | undefined,
    signal: AbortSignal,
  ) => Promise<BeforeCompactOutcome | undefined>;
  /** Extensions' `session_compact`, after the entry was written. */
  after?: (entry: SessionEntry, fromExtension: boolean) => Promise<void>;
  /** Extensions' `session_compact_failed` (pi 1.6): cancelled, aborted or failed, with pi's words. */
  failed?: (event: { errorMessage?: string; aborted: boolean; fromExtension: boolean }) => Promise<void>;
}

/** What is about to be compacted (pi's `CompactionPreparation`, the fields we compute). */
export interface CompactionPreparation {
  firstKeptEntryId: string;
  messagesToSummarize: AgentMessage[];
  turnPrefixMessages: AgentMessage[];
  isSplitTurn: boolean;
  tokensBefore: number;
  previousSummary?: string;
}

/** What a `session_before_compact` handler may return. */
export interface BeforeCompactOutcome {
  cancel?: boolean;
  compaction?: { summary: string; firstKeptEntryId?: string; tokensBefore?: number; details?: unknown; usage?: Usage };
}

/** One compaction at a time, abortable. */
export class Compactor {
  private abortController: AbortController | null = null;

  get isCompacting(): boolean {
    return this.abortController !== null;
  }

  /** Abort a compaction (or a branch summary) in progress. */
  abort(): void {
    this.abortController?.abort();
  }

  /** One summary request outside a compaction (a branch summary); abortable like one. */
  async summarizeOnce(deps: SummaryModel, request: string): Promise<string> {
    const controller = new AbortController();
    this.abortController = controller;
    try {
      return await summarize(deps, request, controller.signal);
    } finally {
      this.abortController = null;
    }
  }

  /**
   * Compact and return the compacted context (null when there is nothing to
   * compact, or when an automatic compaction failed). A manual one rethrows.
   */
  async run(
    deps: CompactionDeps,
    reason: CompactionReason,
    customInstructions: string | undefined,
    willRetry: boolean,
  ): Promise<{ result: CompactionResult; messages: AgentMessage[] } | null> {
    const plan = prepareCompaction(deps.store.pathToLeaf(), deps.keepTokens);
    if (!plan) return null;
    const controller = new AbortController();
    this.abortController = controller;
    deps.emit({ type: "compaction_start", reason });
    let fromExtension = false;
    try {
      const preparation: CompactionPreparation = {
        firstKeptEntryId: plan.firstKeptEntryId,
        messagesToSummarize: plan.messagesToSummarize,
        turnPrefixMessages: plan.turnPrefixMessages,
        isSplitTurn: plan.isSplitTurn,
        tokensBefore: plan.tokensBefore,
      };
      const outcome = await deps.before?.(preparation, customInstructions, controller.signal);
      if (outcome?.cancel) {
        deps.emit({ type: "compaction_end", reason, result: null, aborted: true, willRetry: false });
        await deps.failed?.({ aborted: true, fromExtension: false });
        if (reason === "manual") throw new CompactionCancelled();
        return null;
      }
      const supplied = outcome?.compaction;
      fromExtension = supplied !== undefined;
      // What the summary requests used (pi 1.6 reports it; an extension's summary has none).
      const spent: Usage[] = [];
      // pi's own summary ends with the file lists; an extension's is kept as given.
      const summary =
        supplied?.summary ??
        (await summarizePlan({ ...deps, spent }, plan, customInstructions, controller.signal)) +
          formatFileLists(plan.files);
      const firstKeptEntryId = supplied?.firstKeptEntryId ?? plan.firstKeptEntryId;
      const tokensBefore = supplied?.tokensBefore ?? plan.tokensBefore;
      // pi 1.6 keeps what the summary cost on the entry (get_session_stats counts it): an extension's says its own.
      const usage = supplied ? supplied.usage : spent.length > 0 ? sumUsage(spent) : undefined;
      // pi's details: the files the summarized part read and changed, so later summaries keep them.
      // An extension's own compaction keeps only the details it gave, as in pi.
      const details = supplied ? supplied.details : plan.files;
      // pi 1.6: the prompt and tools the model has, replayed, so the compacted context starts with them.
      const checkpoint = getCurrentSystemMessage(
        deps.store.buildContext().messages as Parameters<typeof getCurrentSystemMessage>[0],
      );
      const entry = deps.store.append({
        type: "compaction",
        summary,
        firstKeptEntryId,
        tokensBefore,
        details,
        fromHook: supplied !== undefined,
        ...(checkpoint ? { systemMessage: { ...checkpoint, timestamp: Date.now() } } : {}),
        ...(usage !== undefined ? { usage } : {}),
      });
      const messages = deps.store.buildContext().messages;
      const result: CompactionResult = {
        summary,
        firstKeptEntryId,
        tokensBefore,
        estimatedTokensAfter: estimateContextTokens(messages),
        ...(usage !== undefined ? { usage } : {}),
        details,
      };
      await deps.after?.(entry as SessionEntry, supplied !== undefined);
      deps.emit({ type: "compaction_end", reason, result, aborted: false, willRetry });
      return { result, messages };
    } catch (err) {
      // Told already (compaction_end, session_compact_failed): the caller hears the refusal.
      if (err instanceof CompactionCancelled) throw err;
      const aborted = controller.signal.aborted;
      // pi 1.6's words, by what was compacting.
      const errorMessage = aborted
        ? undefined
        : `${reason === "manual" ? "Compaction failed" : reason === "overflow" ? "Context overflow recovery failed" : "Auto-compaction failed"}: ${(err as Error).message}`;
      deps.emit({
        type: "compaction_end",
        reason,
        result: null,
        aborted,
        willRetry: false,
        ...(errorMessage ? { errorMessage } : {}),
      });
      await deps.failed?.({ ...(errorMessage ? { errorMessage } : {}), aborted, fromExtension });
      if (reason === "manual") throw err;
      return null;
    } finally {
      this.abortController = null;
    }
  }
}

/**
 * The summary of a plan. A cut inside a turn takes two requests at once, as in pi: the
 * history before the turn and the turn's prefix, joined under one heading.
 */
async function summarizePlan(
  deps: SummaryModel & { spent?: Usage[] },
  plan: CompactionPlan,
  customInstructions: string | undefined,
  signal: AbortSignal,
): Promise<string> {
  if (!plan.isSplitTurn || plan.turnPrefixMessages.length === 0) {
    return summarize(deps, buildSummaryRequest(plan.messagesToSummarize, customInstructions), signal);
  }
  const [history, prefix] = await Promise.all([
    plan.messagesToSummarize.length > 0
      ? summarize(deps, buildSummaryRequest(plan.messagesToSummarize, customInstructions), signal)
      : NO_PRIOR_HISTORY,
    // As pi 1.6, the custom instructions go to both requests.
    summarize(deps, buildTurnPrefixRequest(plan.turnPrefixMessages, customInstructions), signal),
  ]);
  return history + SPLIT_TURN_HEADING + prefix;
}

/** Usages added up, field by field (pi 1.6's compaction `usage`). Pure. */
function sumUsage(usages: Usage[]): Usage {
  const total: Usage = { ...emptyUsage(), reasoning: 0 };
  total.cost.totalFromProvider = false;
  for (const u of usages) {
    total.reasoning = (total.reasoning ?? 0) + (u.reasoning ?? 0);
    total.input += u.input;
    total.output += u.output;
    total.cacheRead += u.cacheRead;
    total.cacheWrite += u.cacheWrite;
    total.totalTokens += u.totalTokens;
    for (const k of ["input", "output", "cacheRead", "cacheWrite", "total"] as const) total.cost[k] += u.cost[k];
  }
  return total;
}

/** One tool-less request to the current model; its text is the summary, its usage joins `deps.spent`. */
async function summarize(
  deps: SummaryModel & { spent?: Usage[] },
  request: string,
  signal: AbortSignal,
): Promise<string> {
  let final: AssistantMessage | null = null;
  for await (const event of deps.provider.stream({
    model: deps.model,
    systemPrompt: SUMMARY_SYSTEM_PROMPT,
    messages: [userMessage(request)],
    tools: [],
    thinkingLevel: "off",
    apiKey: deps.apiKey,
    signal,
  })) {
    if (event.type === "done" || event.type === "error") final = event.message;
  }
  if (!final || final.stopReason === "error" || final.stopReason === "aborted") {
    throw new Error(`the summary request failed: ${final?.errorMessage ?? "no reply"}`);
  }
  deps.spent?.push(final.usage);
  const text = final.content
    .map((c) => (c.type === "text" ? c.text : ""))
    .join("")
    .trim();
  if (!text) throw new Error("the summary request returned no text");
  return text;
}
