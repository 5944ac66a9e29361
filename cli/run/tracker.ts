/**
 * What one task's event stream says, for `pi-orch run`: turns, tool calls, the tool running
 * now, tokens, the last assistant text, the files edit/write touched, and when the run is
 * over. It reads the stream through the one run view (cli/events/run-view.ts).
 */
import { currentTool, EMPTY_RUN_VIEW, foldRun, learnSettles, type RunEvent, type RunView } from "../events/run-view.js";
import type { TokenCounts } from "./types.js";

/** How a worker's run ended, as far as the events tell. */
export type RunEnd = { kind: "ended" } | { kind: "exited"; reason: string };

/** Folds one agent's events (as the supervisor streams them) into the numbers of a task. */
export class RunTracker {
  private view: RunView = EMPTY_RUN_VIEW;

  get turns(): number {
    return this.view.turns;
  }
  get toolCalls(): number {
    return this.view.toolCalls;
  }
  /** The tool running now (the latest started), or null. */
  get tool(): string | null {
    return currentTool(this.view);
  }
  get tokens(): TokenCounts {
    return this.view.tokens;
  }
  get finalText(): string {
    return this.view.finalText;
  }
  /** `stopReason` of the last assistant message of the run, and its error message if any. */
  get stopReason(): string | null {
    return this.view.lastAssistant?.stopReason ?? null;
  }
  get errorMessage(): string | null {
    return this.view.lastAssistant?.errorMessage ?? null;
  }
  /** Whether a run started (an extension command's prompt may start none). */
  get started(): boolean {
    return this.view.started;
  }
  /** The latest `extension_error`'s message (see RunView.extensionError). */
  get extensionError(): string | null {
    return this.view.extensionError;
  }
  /** Paths given to edit/write calls, in first-seen order. */
  get touched(): ReadonlySet<string> {
    return new Set(this.view.touched);
  }

  /**
   * How the run ended so far, or null while it goes on. A task ends on the worker's
   * agent_settled (or last agent_end) or its exit; the supervisor's status events are
   * the runner's to judge.
   */
  get end(): RunEnd | null {
    const ending = this.view.ending;
    if (ending?.kind === "ended") return { kind: "ended" };
    if (ending?.kind === "exited") return { kind: "exited", reason: ending.reason };
    return null;
  }

  /** The prompt's answer said the worker ends its runs with agent_settled (see learnSettles). */
  learnSettles(): void {
    this.view = learnSettles(this.view);
  }

  /** Apply one event; returns how the run ended when this event ends it, else null. */
  apply(event: RunEvent | Record<string, unknown>): RunEnd | null {
    const before = this.view;
    this.view = foldRun(before, event as RunEvent);
    return this.view.ending === before.ending ? null : this.end;
  }
}
