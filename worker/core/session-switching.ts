/**
 * Which session file a worker is on, and moving between them as pi does: the one it starts
 * with (`--session`, `--fork`, `--continue`, `--session-id`), `new_session`, `switch_session`,
 * `fork`, `clone`, and `navigate_tree` within one file (with a branch summary). Extensions
 * may cancel each move (`session_before_*`) and see the session shut down and start again.
 */
import { statSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { ensureHome } from "../../shared/paths.js";
import type { AgentMessage } from "../../shared/schema/messages.js";
import type { Agent } from "../agent/agent.js";
import type { ExtensionHooks } from "../extensions/hooks.js";
import type { NewSessionOptions } from "../extensions/host.js";
import type { ExtensionEvent } from "../extensions/types.js";
import { serializeForSummary } from "../session/summary-request.js";
import type { SessionEntry } from "../../shared/schema/session.js";
import { branchInMemory, cloneSession, forkMessages, forkSession } from "../session/fork.js";
import { findSessionById, latestSession, resolveSessionArg } from "../session/locate.js";
import { SessionStore } from "../session/session-file.js";
import {
  BRANCH_SUMMARY_PREAMBLE,
  branchBeingLeft,
  branchMessages,
  buildBranchSummaryRequest,
  earlierFileLists,
  fileLists,
  formatFileLists,
  navigationLeaf,
  type TreeNode,
} from "../session/tree.js";
import type { ModelSelection } from "./model-selection.js";
import type { WorkerOptions } from "./worker-options.js";

/** Why extensions see a session start or end when it is replaced. */
type SwitchReason = "new" | "resume" | "fork";

/** Where a worker keeps its sessions, and how it tells a human. */
interface SessionPlace {
  cwd: string;
  home: string;
  sessionDir: string;
  warn: (message: string) => void;
}

/**
 * The session a worker starts on, as its flags say: with `--no-session` a new one kept in
 * memory (with the id of `--session-id`); otherwise a file. A path to a file that does
 * not exist yet starts a new session there.
 */
export function openInitialSession(o: WorkerOptions, at: SessionPlace): SessionStore {
  const { cwd, sessionDir, warn } = at;
  if (o.noSession) return SessionStore.inMemory({ cwd, id: o.sessionId }, { warn });
  ensureHome(at.home);
  if (o.session) {
    const path = resolve(cwd, o.session);
    if (startsNewSessionAt(o.session, path)) {
      return SessionStore.create({ dir: dirname(path), cwd, fileName: basename(path) }, { warn });
    }
    return SessionStore.open(resolveSessionArg(o.session, sessionDir), { warn });
  }
  if (o.forkFrom) {
    if (o.sessionId && findSessionById(sessionDir, o.sessionId, cwd))
      throw new Error(`a session with id "${o.sessionId}" already exists in ${sessionDir}; fork under another id`);
    const source = SessionStore.open(resolveSessionArg(o.forkFrom, sessionDir), { warn });
    try {
      return SessionStore.open(cloneSession(source, sessionDir, o.sessionId), { warn });
    } finally {
      source.close();
    }
  }
  if (o.continueSession) {
    const latest = latestSession(sessionDir, cwd);
    if (latest) return SessionStore.open(latest, { warn });
  }
  if (o.sessionId) {
    const existing = findSessionById(sessionDir, o.sessionId, cwd);
    if (existing) return SessionStore.open(existing, { warn });
    warn(`no session of this project has the id "${o.sessionId}"; starting a new session with that id`);
  }
  return SessionStore.create({ dir: sessionDir, cwd, id: o.sessionId }, { warn });
}

/**
 * Whether `--session ARG` / `switch_session` starts a new session at `path` (ARG resolved):
 * ARG names a file (a path, not an id prefix) that does not exist yet, or that is empty,
 * as a new session's file is when the disk refused its first write before the worker
 * ended (pi, too, starts a new session in an empty file).
 */
function startsNewSessionAt(arg: string, path: string): boolean {
  if (!arg.includes("/") && !arg.endsWith(".jsonl")) return false;
  try {
    const stat = statSync(path);
    return stat.isFile() && stat.size === 0;
  } catch {
    return true;
  }
}

/** What moving between sessions reads and changes of the session layer. */
export interface SessionSwitchingHost {
  agent(): Agent;
  readonly cwd: string;
  readonly sessionDir: string;
  readonly models: ModelSelection;
  /** The current session (kept in memory with `--no-session`). */
  store(): SessionStore;
  /** Make `store` the current session; a fresh one records the model and thinking level. */
  attachStore(store: SessionStore, fresh: boolean): void;
  /** Throws saying `what` cannot happen while a run or a compaction is going. */
  requireIdle(what: string): void;
  extensions(): ExtensionHooks;
  /** `session_start` (and `resources_discover`) after a move. */
  startExtensions(reason: SwitchReason, previousSessionFile?: string): Promise<void>;
  /** Bring back the tools the loaded branch declares. */
  restoreTools(): void;
  /** Write a message as the session file keeps it. */
  persist(message: AgentMessage): void;
  /** A branch summary of `request` by the current model (a virtual selection's router picks it). */
  summarize(request: string): Promise<string>;
  warn(message: string): void;
}

/** `new_session`, `switch_session`, `fork`, `clone` and the session tree (see the file's comment). */
export class SessionSwitching {
  constructor(private readonly host: SessionSwitchingHost) {}

  private get agent(): Agent {
    return this.host.agent();
  }

  private get store(): SessionStore {
    return this.host.store();
  }

  private get extensions(): ExtensionHooks {
    return this.host.extensions();
  }

  private get cwd(): string {
    return this.host.cwd;
  }

  private get sessionDir(): string {
    return this.host.sessionDir;
  }

  private warn(message: string): void {
    this.host.warn(message);
  }

  /** Drop queued messages; a `queue_update` only when something was queued (pi sends none otherwise). */
  private clearQueues(): void {
    if (this.agent.pendingMessageCount > 0) this.agent.clearQueues();
  }

  /** Load a session's conversation into the agent. */
  private loadFrom(store: SessionStore): void {
    const ctx = store.buildContext();
    this.clearQueues();
    this.agent.messages = ctx.messages;
    this.host.restoreTools();
    this.host.models.restore(ctx);
    this.host.attachStore(store, false);
  }

  /**
   * Replace the session as pi does: `session_before_*` may cancel; otherwise the old
   * session's extensions see `session_shutdown`, the new one is loaded and they see
   * `session_start` with the reason.
   */
  private async replaceSession<T>(
    before: ExtensionEvent,
    reason: SwitchReason,
    open: () => { store: SessionStore; fresh: boolean; result: T },
  ): Promise<T | { cancelled: true }> {
    if ((await this.extensions.before(before))?.cancel === true) return { cancelled: true };
    const previousSessionFile = this.store.path;
    const next = open();
    await this.extensions.sessionShutdown(reason, next.store.path);
    if (next.fresh) {
      this.agent.clearQueues();
      this.agent.messages = [];
      this.host.attachStore(next.store, true);
    } else {
      this.loadFrom(next.store);
    }
    await this.host.startExtensions(reason, previousSessionFile);
    return next.result;
  }

  /** `new_session`: a fresh, empty session (a file; in memory with `--no-session`, as pi's). */
  async newSession(parentSession?: string, setup?: NewSessionOptions["setup"]): Promise<{ cancelled: boolean }> {
    this.host.requireIdle("start a new session");
    const outcome = await this.replaceSession({ type: "session_before_switch", reason: "new" }, "new", () => ({
      store: this.store.hasFile()
        ? SessionStore.create({ dir: this.sessionDir, cwd: this.cwd, parentSession }, { warn: this.warn })
        : SessionStore.inMemory({ cwd: this.cwd, parentSession }, { warn: this.warn }),
      fresh: true,
      result: { cancelled: false },
    }));
    if (!outcome.cancelled && setup) await setup(this.setupView());
    return outcome;
  }

  /**
   * `switch_session`: continue another session file. A path to a file that does not
   * exist starts a new session there, as pi 1.6 does (and as `--session PATH` does).
   */
  async switchSession(path: string): Promise<{ cancelled: boolean }> {
    this.host.requireIdle("switch sessions");
    const full = resolve(this.cwd, path);
    const missing = startsNewSessionAt(path, full);
    const target = missing ? full : resolveSessionArg(path, this.sessionDir);
    return this.replaceSession(
      { type: "session_before_switch", reason: "resume", targetSessionFile: target },
      "resume",
      () => {
        if (!missing)
          return { store: SessionStore.open(target, { warn: this.warn }), fresh: false, result: { cancelled: false } };
        // A new session there, as a new pi starts: the thinking level of the flags or settings.
        this.host.models.startFresh();
        return {
          store: SessionStore.create(
            { dir: dirname(full), cwd: this.cwd, fileName: basename(full) },
            { warn: this.warn },
          ),
          fresh: true,
          result: { cancelled: false },
        };
      },
    );
  }

  /**
   * `fork`: a new session holding the path before a user message; returns that message's
   * text. A fork an extension cancelled has no text (pi's response leaves it out).
   */
  async fork(entryId: string): Promise<{ text?: string; cancelled: boolean }> {
    this.host.requireIdle("fork");
    const outcome = await this.replaceSession(
      { type: "session_before_fork", entryId, position: "before" },
      "fork",
      () => {
        const store = this.store;
        if (!store.hasFile()) {
          const fork = branchInMemory(store, entryId);
          return { store: fork.store, fresh: false, result: { text: fork.text, cancelled: false } };
        }
        const { path, text } = forkSession(store, entryId, this.sessionDir);
        return {
          store: SessionStore.open(path, { warn: this.warn }),
          fresh: false,
          result: { text, cancelled: false },
        };
      },
    );
    return outcome;
  }

  /** `clone`: a new session with the whole current path. */
  async clone(): Promise<{ cancelled: boolean }> {
    this.host.requireIdle("clone");
    // pi's words: its RPC clone needs an entry to clone at.
    const store = this.store;
    if (store.leafId === null) throw new Error("Cannot clone session: no current entry selected");
    return this.replaceSession({ type: "session_before_fork", entryId: store.leafId, position: "at" }, "fork", () => ({
      store: store.hasFile()
        ? SessionStore.open(cloneSession(store, this.sessionDir), { warn: this.warn })
        : branchInMemory(store).store,
      fresh: false,
      result: { cancelled: false },
    }));
  }

  /** What `ctx.newSession({ setup })` may write into the new session. */
  private setupView() {
    return {
      appendMessage: (message: AgentMessage) => {
        this.agent.messages.push(message);
        this.host.persist(message);
      },
      appendCustomEntry: (customType: string, data?: unknown) =>
        this.store.append({ type: "custom", customType, ...(data !== undefined ? { data } : {}) }),
      getSessionFile: () => this.store.path,
    };
  }

  /** `get_fork_messages`: the user messages one can fork from. */
  forkMessages(): { entryId: string; text: string }[] {
    return forkMessages(this.store.entries);
  }

  /** `get_tree`: every entry as a forest, and the current leaf. */
  tree(): { tree: TreeNode[]; leafId: string | null } {
    return { tree: this.store.tree(), leafId: this.store.leafId };
  }

  /**
   * `get_entries`: every entry in append order (no header), or those after `since`; and
   * the current leaf. An unknown `since` fails, as in pi.
   */
  getEntries(since?: string): { entries: readonly SessionEntry[]; leafId: string | null } {
    const { entries, leafId } = this.store;
    if (since === undefined) return { entries, leafId };
    const at = entries.findIndex((e) => e.id === since);
    if (at < 0) throw new Error(`Entry not found: ${since}`);
    return { entries: entries.slice(at + 1), leafId };
  }

  /**
   * `navigate_tree` (pi's `navigateTree`): move the leaf to `targetId`. With `summarize`,
   * the branch being left is summarized by the current model into a `branch_summary`
   * at the new position, so the model keeps what was learnt there. Navigating to a
   * user message puts the leaf before it and returns its text to edit.
   */
  async navigateTree(
    targetId: string,
    options: { summarize?: boolean; customInstructions?: string; replaceInstructions?: boolean; label?: string } = {},
  ): Promise<{ cancelled: boolean; editorText?: string; summaryEntry?: unknown }> {
    this.host.requireIdle("navigate the session tree");
    const store = this.store;
    const oldLeaf = store.leafId;
    if (targetId === oldLeaf) return { cancelled: false };
    const target = store.getEntry(targetId);
    if (!target) throw new Error(`Entry ${targetId} not found`);
    const { entries } = branchBeingLeft(store.entriesById, oldLeaf, targetId);
    const { leafId, editorText } = navigationLeaf(target);
    // pi's session_before_tree: an extension may cancel, or supply the branch summary.
    const before = (await this.extensions.before({
      type: "session_before_tree",
      preparation: {
        targetId,
        oldLeafId: oldLeaf,
        entriesToSummarize: entries,
        userWantsSummary: options.summarize === true,
      },
      signal: new AbortController().signal,
    })) as { cancel?: boolean; summary?: { summary: string; details?: unknown } } | undefined;
    if (before?.cancel === true) return { cancelled: true };
    let summaryEntry: unknown;
    const supplied = typeof before?.summary?.summary === "string" ? before.summary : undefined;
    if (options.summarize && entries.length > 0) {
      const messages = branchMessages(entries);
      const lists = fileLists(messages, earlierFileLists(entries));
      const request = buildBranchSummaryRequest(
        serializeForSummary(messages),
        options.customInstructions,
        options.replaceInstructions,
      );
      const text = supplied?.summary ?? (await this.host.summarize(request));
      const entry = store.branchWithSummary(
        leafId,
        BRANCH_SUMMARY_PREAMBLE + text + formatFileLists(lists),
        supplied?.details ?? lists,
        supplied !== undefined,
      );
      if (options.label) store.setLabel(entry.id, options.label);
      summaryEntry = entry;
    } else {
      store.setLeaf(leafId);
      if (options.label) store.setLabel(targetId, options.label);
    }
    this.clearQueues();
    this.agent.messages = store.buildContext().messages;
    this.host.restoreTools();
    await this.extensions.notify({
      type: "session_tree",
      newLeafId: store.leafId,
      oldLeafId: oldLeaf,
      summaryEntry,
      fromExtension: supplied !== undefined,
    });
    return {
      cancelled: false,
      ...(editorText !== undefined ? { editorText } : {}),
      ...(summaryEntry ? { summaryEntry } : {}),
    };
  }
}
