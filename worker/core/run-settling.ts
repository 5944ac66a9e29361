/**
 * A run from its start to pi 1.6's `agent_settled`: followed through its automatic
 * retries (the failed reply left out of the context by a `context_edit`), then a
 * compaction when the context passed the threshold, then the extensions' `agent_before_settle` (entries added, one more request or the prompts queued
 * meanwhile run), and settled once nothing more happens on its own. An `abort` asked in
 * between makes the settle say aborted.
 */
import type { WorkerEvent } from "../../shared/schema/events.js";
import type { AgentMessage, AssistantMessage } from "../../shared/schema/messages.js";
import type { Agent } from "../agent/agent.js";
import type { ExtensionHooks } from "../extensions/hooks.js";
import type { SessionStore } from "../session/session-file.js";
import type { AutoRetry, RetryTarget } from "./auto-retry.js";
import { previewBoundary } from "./boundary.js";
import type { EventGate } from "./event-gate.js";
import { type BoundaryHost, checkBoundaryDrafts, commitBoundaryDrafts, outcomeOf } from "./turn-boundary.js";

/** What following a run needs of its session. */
export interface RunSettlingHost {
  agent(): Agent;
  retry(): AutoRetry;
  gate(): EventGate;
  extensions(): ExtensionHooks;
  /** The session (kept in memory with `--no-session`). */
  store(): SessionStore;
  /** What an `agent_before_settle` boundary reads and writes. */
  boundaryHost(): BoundaryHost;
  /** pi 1.6's check after a run's agent_end (no retry follows): compact a context past the threshold. */
  compactAfterRun(): Promise<void>;
  emit(event: WorkerEvent): void;
}

/** The runs of a session, followed until they settle. */
export class RunSettling {
  /** The latest run started, followed through its automatic retries. */
  private latest: Promise<void> | null = null;
  /** `agent_before_settle` handlers are running; the run settles after them. */
  private beforeSettle: Promise<boolean> | undefined;
  /** A run started and its `agent_settled` has not gone out yet. */
  private unsettled = false;
  /** `abort` was asked since the last run started: its `agent_settled` says aborted. */
  private abortAsked = false;
  /** The failed response an automatic retry repeats, for a virtual model's router (`reason: "retry"`). */
  private retriedResponse: AssistantMessage | undefined;

  constructor(private readonly host: RunSettlingHost) {}

  /** A run is going, or a failed run waits for its automatic retry (which queues as a run would), or `agent_before_settle` runs. */
  get busy(): boolean {
    return this.host.agent().isStreaming || this.host.retry().waiting || this.beforeSettle !== undefined;
  }

  /** A run's `agent_settled` is still to come (its end, retries or `agent_before_settle` are not over). */
  get settling(): boolean {
    return this.unsettled || this.beforeSettle !== undefined;
  }

  /** The latest run started, through its automatic retries; null before the first. */
  get latestRun(): Promise<void> | null {
    return this.latest;
  }

  /** `abort` was asked: the run going settles as aborted, and skips `agent_before_settle`. */
  noteAbort(): void {
    if (this.unsettled || this.beforeSettle) this.abortAsked = true;
  }

  /** The failed response the next request retries, once (a virtual model's router is told); undefined when it is no retry. */
  takeRetriedResponse(): AssistantMessage | undefined {
    const failed = this.retriedResponse;
    this.retriedResponse = undefined;
    return failed;
  }

  /** Start a run of `messages`; its completion through any automatic retries. */
  start(...messages: AgentMessage[]): Promise<void> {
    // A retry that abort_retry cancelled left its failure here: this run is not that retry.
    this.retriedResponse = undefined;
    const run = this.followRetries(this.host.agent().start(messages).done);
    this.unsettled = true;
    this.latest = run;
    const settle = () => this.settleWhenIdle();
    run.then(settle, settle);
    return run;
  }

  /** A run with its automatic retries (pi's order: each retry is a new run after agent_end). */
  private followRetries(run: Promise<void>): Promise<void> {
    const gate = this.host.gate();
    // A run is followed until its agent_end went out: the retry is decided there, and a
    // caller waiting for the run (print mode, a command's waitForIdle) sees it whole.
    const out = (done: Promise<void>) => done.then(() => gate.agentEndSent);
    const agent = this.host.agent();
    const target: RetryTarget = {
      omit: (failed) => {
        // A virtual selection's router is told the next request retries this one.
        if (failed.role === "assistant") this.retriedResponse = failed;
        this.omitFromContext(failed);
      },
      start: (prompts) => ({ done: out(agent.start(prompts).done) }),
    };
    // As pi 1.6, after the last agent_end and before agent_before_settle: a context past the
    // threshold is compacted once no retry follows, unless the run was aborted.
    return this.host
      .retry()
      .follow(target, out(run))
      .then(() => {
        const last = [...agent.messages].reverse().find((m) => m.role === "assistant") as AssistantMessage | undefined;
        if (this.abortAsked || last?.stopReason === "aborted") return;
        return this.host.compactAfterRun();
      });
  }

  /**
   * Leave a message out of the model's context for good (pi 1.6's recovery omission): a
   * `context_edit` entry with no replacement names its entry (told as `entry_appended`),
   * and the in-memory context, the projection's cache, drops it. The raw entry stays.
   */
  private omitFromContext(message: AgentMessage): void {
    const messages = this.host.agent().messages;
    const index = messages.lastIndexOf(message);
    if (index >= 0) messages.splice(index, 1);
    const store = this.host.store();
    const path = store.pathToLeaf();
    let at = path.length - 1;
    while (at >= 0 && (path[at] as { message?: unknown }).message !== message) at--;
    const target = path[at];
    if (!target) return;
    const { entry } = store.appendOrKeep({ type: "context_edit", targetId: target.id, replacement: null });
    this.host.emit({ type: "entry_appended", entry });
  }

  /**
   * pi 1.6's `agent_settled`: once per started run, when nothing more happens on its
   * own: its agent_end went out, no retry waits or follows (overflow recovery is inside
   * the run), and no run an extension started meanwhile is going (that one settles later).
   */
  private settleWhenIdle(): void {
    if (!this.unsettled || this.busy || this.beforeSettle) return;
    this.unsettled = false;
    const aborted = this.abortAsked;
    this.abortAsked = false;
    const gate = this.host.gate();
    // pi 1.6: agent_before_settle may add entries and ask for one more request; an aborted run skips it.
    if (!aborted && this.host.extensions().has("agent_before_settle")) {
      this.beforeSettle = this.runBeforeSettle().finally(() => {
        this.beforeSettle = undefined;
      });
      void this.beforeSettle
        .catch((err: unknown) => {
          // A write the disk refused, or anything else: told, and the run still settles.
          this.host.emit({
            type: "extension_error",
            extensionPath: "<boundary>",
            event: "agent_before_settle",
            error: err instanceof Error ? err.message : String(err),
          });
          return false;
        })
        .then((continued) => {
          // A run it started settles on its own.
          if (continued) return this.settleWhenIdle();
          gate.settled(this.abortAsked);
        });
      return;
    }
    gate.settled(aborted);
  }

  /**
   * pi 1.6's `agent_before_settle`: the handlers' entries are written (told as
   * `entry_appended`) and, when one asked to continue and the context can take one more
   * request, a run of that request starts. True when it started one.
   */
  private async runBeforeSettle(): Promise<boolean> {
    const agent = this.host.agent();
    const last = [...agent.messages].reverse().find((m) => m.role === "assistant") as AssistantMessage | undefined;
    const host = this.host.boundaryHost();
    const branch = host.store().pathToLeaf();
    const decision = await this.host
      .extensions()
      .boundary({ type: "agent_before_settle", outcome: outcomeOf(last) }, (drafts) =>
        checkBoundaryDrafts(host, drafts, branch),
      );
    commitBoundaryDrafts(host, decision.entries);
    // Prompts sent while the handlers ran were queued (the session counts as busy): they run now.
    const queued = this.abortAsked ? [] : agent.takeQueued();
    if (queued.length > 0) {
      void this.start(...queued);
      return true;
    }
    if (!decision.continue || this.abortAsked) return false;
    if (!previewBoundary(host.store().pathToLeaf(), [], agent.queuedMessages()).canContinue) {
      this.host.emit({
        type: "extension_error",
        extensionPath: "<boundary>",
        event: "agent_before_settle",
        error: "agent_before_settle requested continuation without runnable model context",
      });
      return false;
    }
    void this.start();
    return true;
  }
}
