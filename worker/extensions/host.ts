/**
 * What the extension layer needs from the session layer: state to read and actions
 * to take on behalf of `pi.*` and `ctx.*`. The session implements it; tests may
 * implement a part of it.
 */
import type { CompactionResult } from "../../shared/schema/events.js";
import type { AgentMessage, ImageContent, Model, TextContent, ThinkingLevel } from "../../shared/schema/messages.js";
import type { SessionEntry } from "../../shared/schema/session.js";
import type { Provider } from "../types.js";
import type { CustomMessageInput, ExtensionUi } from "./types.js";

/** How a message sent by an extension is delivered while (or after) the agent runs. */
export type DeliverAs = "steer" | "followUp" | "nextTurn";

/** Context-window use as `ctx.getContextUsage()` reports it. */
export interface ContextUsage {
  tokens: number | null;
  contextWindow: number;
  percent: number | null;
}

/** A tool as `pi.getAllTools()` lists it. */
export interface ToolInfo {
  name: string;
  description: string;
  parameters: unknown;
  /** pi 1.6's exposure, for tools that set one (`deferred` ones are found by `tool_search`). */
  exposure?: string;
  namespace?: { name: string; aliases?: string[]; description?: string; instructions?: string };
  sourceInfo: { path: string; source: string; scope: string; origin: string };
}

/** Options of `ctx.newSession`. */
export interface NewSessionOptions {
  parentSession?: string;
  setup?: (sessionManager: unknown) => Promise<void> | void;
  withSession?: (ctx: unknown) => Promise<void> | void;
}

/** How the worker runs, as `ctx.mode` says it. */
export type RunMode = "rpc" | "json" | "print" | "tui";

/** A model of the session's scope (`--models`, `enabledModels`), with the level its pattern pinned. */
export interface ScopedModel {
  model: Model;
  thinkingLevel?: ThinkingLevel;
}

/** The session as extensions reach it. */
export interface ExtensionHost {
  readonly cwd: string;
  /** `ctx.mode`. */
  mode(): RunMode;
  /** Whether the project's own resources may load (`--trust`, a recorded decision). */
  isProjectTrusted(): boolean;
  /** `ctx.scopedModels`: empty when nothing limits the models. */
  scopedModels(): ScopedModel[];
  /** The effective settings (global and project merged), a copy. */
  settings(): Record<string, unknown>;
  /** Whether a client can answer dialogs (RPC and the TUI; not print mode). */
  hasUI(): boolean;
  ui(): ExtensionUi;

  // State
  model(): Model;
  models(): Model[];
  apiKeyFor(model: Model): string | undefined;
  provider(model: Model): Provider;
  thinkingLevel(): ThinkingLevel;
  systemPrompt(): string;
  messages(): readonly AgentMessage[];
  isIdle(): boolean;
  hasPendingMessages(): boolean;
  signal(): AbortSignal | undefined;
  contextUsage(): ContextUsage | undefined;
  sessionFile(): string | undefined;
  sessionId(): string;
  sessionName(): string | undefined;
  entries(): readonly SessionEntry[];
  branch(): SessionEntry[];
  leafId(): string | null;
  sessionDir(): string;

  // Actions
  sendUserMessage(content: string | (TextContent | ImageContent)[], deliverAs?: DeliverAs): Promise<void>;
  sendMessage(message: CustomMessageInput, options: { deliverAs?: DeliverAs; triggerTurn?: boolean }): Promise<void>;
  appendEntry(customType: string, data: unknown): void;
  setSessionName(name: string): void;
  setLabel(entryId: string, label: string | undefined): void;
  setModel(provider: string, modelId: string): Model;
  setThinkingLevel(level: ThinkingLevel): void;
  activeToolNames(): string[];
  setActiveTools(names: string[]): void;
  allTools(): ToolInfo[];
  /** The tool list or prompt changed (a tool registered after start-up). */
  toolsChanged(): void;
  /** An extension registered or removed a provider: rebuild the model list. */
  providersChanged(): void;
  /** pi's `ctx.reload()`: settings, skills, prompts, context files and extensions read again. */
  reload(): Promise<void>;
  abort(): Promise<void>;
  requestShutdown(): void;
  compact(customInstructions?: string): Promise<CompactionResult>;
  waitForIdle(): Promise<void>;
  newSession(options?: NewSessionOptions): Promise<{ cancelled: boolean }>;
  fork(entryId: string, position?: "before" | "at"): Promise<{ cancelled: boolean }>;
  switchSession(path: string): Promise<{ cancelled: boolean }>;
  /** pi's tree navigation: move the leaf, optionally summarizing the branch left. */
  navigateTree(
    targetId: string,
    options?: { summarize?: boolean; customInstructions?: string; replaceInstructions?: boolean; label?: string },
  ): Promise<{ cancelled: boolean }>;
}
