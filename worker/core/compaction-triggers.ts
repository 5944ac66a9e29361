/**
 * When a session compacts, and with what: by hand (`compact`), past the context threshold
 * after a turn, and after a context overflow (then the request is sent once more). Each
 * runs the Compactor with the session's store, a summary model, the extensions'
 * `session_before_compact` / `session_compact` / `session_compact_failed`, and puts the
 * compacted context in place of the agent's.
 */
import type { CompactionResult, WorkerEvent } from "../../shared/schema/events.js";
import type { Agent } from "../agent/agent.js";
import type { AfterResponseContext } from "../agent/types.js";
import type { ExtensionHooks } from "../extensions/hooks.js";
import { isVirtualModel } from "../extensions/virtual-models.js";
import type { Settings } from "../resources/settings.js";
import type { AssistantMessage } from "../../shared/schema/messages.js";
import {
  contextTokensOf,
  estimateFromUsage,
  estimateProjectedContextTokens,
  shouldCompact,
} from "../session/compaction.js";
import { buildSessionProjection } from "../session/context.js";
import type { SessionStore } from "../session/session-file.js";
import { type BeforeCompactOutcome, type CompactionReason, Compactor, type SummaryModel } from "./compactor.js";
import type { WorkerOptions } from "./worker-options.js";

/** pi's default `compaction.reserveTokens`: compact when fewer are left in the window. */
const DEFAULT_RESERVE_TOKENS = 16_384;
/** pi's default `compaction.keepRecentTokens`: the recent part a compaction keeps whole. */
const DEFAULT_KEEP_TOKENS = 20_000;

/** What the triggers read and change of their session. */
export interface CompactionTriggersHost {
  agent(): Agent;
  /** The session (kept in memory with `--no-session`: it compacts all the same, as pi's). */
  store(): SessionStore;
  extensions(): ExtensionHooks;
  /** The model a summary goes to (a virtual selection's router decides), and how it is called. */
  summaryModel(): Promise<SummaryModel>;
  readonly options: WorkerOptions;
  settings(): Settings;
  /** Whether automatic compaction is on (`set_auto_compaction`, the setting). */
  autoCompaction(): boolean;
  emit(event: WorkerEvent): void;
}

/** A session's compactions: one at a time, abortable. */
export class CompactionTriggers {
  private readonly compactor = new Compactor();
  /** Whether the request in flight was already repeated after an overflow compaction. */
  private overflowRetried = false;

  constructor(private readonly host: CompactionTriggersHost) {}

  /** A compaction or a branch summary is going. */
  get isCompacting(): boolean {
    return this.compactor.isCompacting;
  }

  /** Abort a compaction (or a branch summary) in progress. */
  abort(): void {
    this.compactor.abort();
  }

  /** One summary request outside a compaction (a branch summary), abortable like one. */
  async summarize(request: string): Promise<string> {
    return this.compactor.summarizeOnce(await this.host.summaryModel(), request);
  }

  /** `compact`: summarize the older part of the conversation now; throws when there is nothing to compact. */
  async manual(customInstructions?: string): Promise<CompactionResult> {
    const result = await this.run("manual", customInstructions, false);
    if (!result)
      throw new Error("nothing to compact yet: the conversation is shorter than the part that is always kept");
    return result;
  }

  /**
   * For the agent's `afterResponse` hook: a context overflow is compacted once per request;
   * true when it was, and the request is to be sent once more.
   */
  async recoverOverflow(ctx: AfterResponseContext): Promise<boolean> {
    if (ctx.repeats === 0) this.overflowRetried = false;
    if (!ctx.failure?.contextOverflow || this.overflowRetried || ctx.signal.aborted) return false;
    this.overflowRetried = true;
    return (await this.run("overflow", undefined, true)) !== null;
  }

  /**
   * Between the turns of a run (pi 1.6's `prepareNextTurn`): compact when the projected
   * context leaves less than the reserve of the model's window.
   */
  async betweenTurns(): Promise<void> {
    if (!this.thresholdApplies()) return;
    const path = this.host.store().pathToLeaf();
    if (this.pastThreshold(estimateProjectedContextTokens(buildSessionProjection(path), path)))
      await this.run("threshold", undefined, false);
  }

  /**
   * pi 1.6's `_checkCompaction` past the threshold, on the context's last reply: after a run
   * (no retry follows; an aborted reply is not counted) and before a prompt starts its run
   * (`beforePrompt`: an aborted one is). A reply from before the latest compaction says
   * nothing; with a `context_edit` in the context the projection is estimated whole; an
   * error or a reply without usage counts from the last reply with usage; else its usage.
   */
  async afterReply(beforePrompt = false): Promise<void> {
    if (!this.thresholdApplies()) return;
    const messages = this.host.agent().messages;
    const reply = [...messages].reverse().find((m) => m.role === "assistant") as AssistantMessage | undefined;
    if (!reply || (!beforePrompt && reply.stopReason === "aborted")) return;
    const path = this.host.store().pathToLeaf();
    const compaction = [...path].reverse().find((e) => e.type === "compaction");
    const compactedAt = compaction ? Date.parse(compaction.timestamp) : Number.NEGATIVE_INFINITY;
    if (reply.timestamp <= compactedAt) return;
    const projection = buildSessionProjection(path);
    const direct = contextTokensOf(reply.usage);
    let tokens = direct;
    if (projection.entries.some((e) => e.source.type === "context_edit")) {
      tokens = estimateProjectedContextTokens(projection, path);
    } else if (reply.stopReason === "error" || direct === 0) {
      const estimate = estimateFromUsage(messages);
      // A kept reply's usage counted the context before the compaction.
      if (estimate.usageIndex !== null && messages[estimate.usageIndex].timestamp <= compactedAt) return;
      tokens = estimate.tokens;
    }
    if (this.pastThreshold(tokens)) await this.run("threshold", undefined, false);
  }

  /** As pi 1.6, not without automatic compaction nor against a virtual model's declared window. */
  private thresholdApplies(): boolean {
    return this.host.autoCompaction() && !isVirtualModel(this.host.agent().model);
  }

  /** Whether `tokens` leave less than the reserve of the model's window. */
  private pastThreshold(tokens: number): boolean {
    const reserve =
      this.host.options.compactionReserveTokens ??
      this.host.settings().compaction?.reserveTokens ??
      DEFAULT_RESERVE_TOKENS;
    return shouldCompact(tokens, this.host.agent().model.contextWindow, reserve);
  }

  /**
   * Compact with the summary model and replace the agent's context in place, so a run in
   * progress continues with the compacted context (the original entries stay in the file).
   */
  private async run(
    reason: CompactionReason,
    customInstructions: string | undefined,
    willRetry: boolean,
  ): Promise<CompactionResult | null> {
    const { host } = this;
    const summary = await host.summaryModel();
    const done = await this.compactor.run(
      {
        store: host.store(),
        ...summary,
        keepTokens:
          host.options.compactionKeepTokens ?? host.settings().compaction?.keepRecentTokens ?? DEFAULT_KEEP_TOKENS,
        emit: (e) => host.emit(e),
        before: async (preparation, customInstructions, signal) => {
          const r = await host.extensions().before({
            type: "session_before_compact",
            preparation,
            branchEntries: host.store().pathToLeaf(),
            customInstructions,
            signal,
          });
          return r as BeforeCompactOutcome | undefined;
        },
        after: (compactionEntry, fromExtension) =>
          host.extensions().notify({ type: "session_compact", compactionEntry, fromExtension, reason, willRetry }),
        failed: (event) =>
          host.extensions().notify({ type: "session_compact_failed", reason, willRetry: false, ...event }),
      },
      reason,
      customInstructions,
      willRetry,
    );
    if (!done) return null;
    const messages = host.agent().messages;
    messages.splice(0, messages.length, ...done.messages);
    return done.result;
  }
}
