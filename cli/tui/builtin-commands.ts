/**
 * The built-in slash commands and `!cmd` of `pi` on a terminal, performed on the
 * in-process session: what each does to it, what it says in the transcript, and the
 * pickers (model, thinking level, session, fork point, tree entry) it opens as dialogs.
 * Which line is which command is `slash-commands.ts`'s pure part.
 */
import { resolve } from "node:path";
import { THINKING_LEVELS, type ThinkingLevel } from "../../shared/schema/messages.js";
import type { AgentSession } from "../../worker/core/agent-session.js";
import { recordTrust } from "../../worker/extensions/trust.js";
import { isKnownEntry } from "../../worker/session/entries.js";
import type { TreeNode } from "../../worker/session/tree.js";
import { contentText } from "../commands/transcript.js";
import { bashLines, historyLines } from "./history-lines.js";
import { sessionChoices } from "./session-choices.js";
import type { LineIntent, SlashCommand } from "./slash-commands.js";
import type { LineKind, TranscriptLine } from "./state.js";
import { formatTokens } from "./text.js";

/** What the commands need of the view around them. */
export interface CommandView {
  /** Dialogs in the view (the extensions' UI). */
  select(title: string, options: string[]): Promise<string | undefined>;
  input(title: string, placeholder?: string): Promise<string | undefined>;
  /** Lines added to the transcript. */
  show(lines: TranscriptLine[]): void;
  /** The transcript replaced by these lines. */
  replace(lines: TranscriptLine[]): void;
  /** Text put into the editor (a fork's message, pulled-back queued messages). */
  setEditor(text: string): void;
  /** The terminal's clipboard (OSC 52). */
  copy(text: string): void;
  showHotkeys(): void;
  /** Read keybindings.json again (`/reload`). */
  reloadKeys(): void;
  quit(): void;
}

/** Run a `!cmd` / `!!cmd` or a built-in; failures are said in the transcript, never thrown. */
export async function runLine(
  runtime: AgentSession,
  view: CommandView,
  intent: Exclude<LineIntent, { kind: "prompt" }>,
): Promise<void> {
  const say = (text: string, kind: LineKind = "notice") => view.show([{ kind, text }]);
  try {
    if (intent.kind === "bash") {
      view.show([
        { kind: "tool", text: `$ ${intent.command}${intent.excludeFromContext ? "  (not sent to the model)" : ""}` },
      ]);
      const r = await runtime.bash(intent.command, { excludeFromContext: intent.excludeFromContext });
      view.show(bashLines(intent.command, r.output, r.exitCode, r.cancelled, intent.excludeFromContext).slice(1));
      return;
    }
    await runBuiltin(runtime, view, intent.command, intent.args, say);
  } catch (err) {
    const what = intent.kind === "bash" ? `!${intent.command}` : `/${intent.command.name}`;
    say(`${what} failed: ${err instanceof Error ? err.message : String(err)}`, "error");
  }
}

/** The conversation drawn anew (after the session changed under the view). */
function redraw(runtime: AgentSession, view: CommandView, notice?: string): void {
  const lines = historyLines(runtime.messages());
  view.replace(notice ? [...lines, { kind: "notice", text: notice }] : lines);
}

async function runBuiltin(
  runtime: AgentSession,
  view: CommandView,
  command: SlashCommand,
  args: string,
  say: (text: string, kind?: LineKind) => void,
): Promise<void> {
  if (command.unavailable) return say(`/${command.name}: ${command.unavailable}`);
  switch (command.name) {
    case "quit":
      return view.quit();
    case "hotkeys":
      return view.showHotkeys();
    case "new": {
      const r = await runtime.newSession();
      if (r.cancelled) return say("/new was cancelled by an extension");
      return redraw(runtime, view, "✓ New session started");
    }
    case "name": {
      if (!args)
        return say(
          runtime.sessionName ? `Session name: ${runtime.sessionName}` : "The session has no name: /name NAME sets one",
        );
      runtime.setSessionName(args);
      return say(`Session name set: ${args.trim()}`);
    }
    case "session":
      return say(sessionInfo(runtime));
    case "model": {
      const models = runtime.availableModels().map((m) => `${m.provider}/${m.id}`);
      const wanted = args || (await view.select("Select model", models));
      if (!wanted) return;
      const match = models.find((m) => m === wanted) ?? models.find((m) => m.split("/").slice(1).join("/") === wanted);
      if (!match) return say(`/model: no model "${wanted}"; the models are ${models.join(", ")}`, "error");
      const slash = match.indexOf("/");
      const model = runtime.setModel(match.slice(0, slash), match.slice(slash + 1));
      return say(`Model: ${model.provider}/${model.id}`);
    }
    case "scoped-models": {
      const patterns = runtime.resources.settings.enabledModels ?? [];
      return say(
        patterns.length > 0
          ? `Ctrl+P cycles through: ${patterns.join(", ")} (set with --models or the enabledModels setting)`
          : "Ctrl+P cycles through every available model; --models or the enabledModels setting narrows it",
      );
    }
    case "thinking": {
      const levels = runtime.availableThinkingLevels();
      const wanted = args || (await view.select("Thinking level", levels));
      if (!wanted) return;
      if (!THINKING_LEVELS.includes(wanted as ThinkingLevel))
        return say(`/thinking: "${wanted}" is not a level; the levels are ${levels.join(", ")}`, "error");
      runtime.setThinkingLevel(wanted as ThinkingLevel);
      return say(`Thinking level: ${runtime.state().thinkingLevel}`);
    }
    case "compact": {
      say("Compacting…");
      const r = await runtime.compact(args || undefined);
      return redraw(runtime, view, `✓ Compacted: ${formatTokens(r.tokensBefore)} tokens before`);
    }
    case "export": {
      if (args.endsWith(".jsonl")) return say(`Session exported to: ${runtime.exportJsonl(args).path}`);
      const { path } = runtime.exportHtml(args ? resolve(runtime.cwd, args) : undefined);
      return say(`Session exported to: ${path}`);
    }
    case "copy": {
      const text = runtime.lastAssistantText();
      if (!text) return say("No agent message to copy yet", "error");
      view.copy(text);
      return say("Copied last agent message to clipboard");
    }
    case "reload":
      await runtime.reload();
      view.reloadKeys();
      return say("✓ Reloaded keybindings, extensions, skills, prompts and context files");
    case "settings":
      return settings(runtime, view, say);
    case "trust": {
      const choice = await view.select(`Trust ${runtime.cwd}? (its .pi/ extensions, settings, …)`, [
        "Trust this project",
        "Do not trust this project",
      ]);
      if (!choice) return;
      recordTrust(runtime.home, runtime.cwd, choice.startsWith("Trust"));
      return say(
        `${choice.startsWith("Trust") ? "Trusted" : "Not trusted"}: recorded for the next pi here (/reload or restart to apply)`,
      );
    }
    case "resume": {
      const choices = sessionChoices(runtime.sessionDir, runtime.sessionFile);
      if (choices.length === 0) return say(`No sessions to resume in ${runtime.sessionDir}`);
      const labels = distinct(choices.map((c) => c.label));
      const picked = await view.select("Resume session", labels);
      if (!picked) return;
      const target = choices[labels.indexOf(picked)]!;
      const r = await runtime.switchSession(target.path);
      if (r.cancelled) return say("/resume was cancelled by an extension");
      return redraw(runtime, view, `✓ Resumed session ${target.path}`);
    }
    case "fork": {
      const points = runtime.forkMessages();
      if (points.length === 0) return say("No user message to fork from yet");
      const labels = distinct(points.map((p) => oneLine(p.text)));
      const picked = await view.select("Fork from message", labels);
      if (!picked) return;
      const r = await runtime.fork(points[labels.indexOf(picked)]!.entryId);
      if (r.cancelled) return say("/fork was cancelled by an extension");
      redraw(runtime, view, "✓ Forked to a new session");
      if (r.text) view.setEditor(r.text);
      return;
    }
    case "clone": {
      const r = await runtime.clone();
      if (r.cancelled) return say("/clone was cancelled by an extension");
      return redraw(runtime, view, "✓ Cloned to a new session");
    }
    case "tree":
      return tree(runtime, view, say);
  }
}

/** `/session`: file, id, name, messages, tokens, cost, context use, as pi's Session Info. */
function sessionInfo(runtime: AgentSession): string {
  const s = runtime.sessionStats();
  const m = runtime.agent.model;
  return [
    "Session Info",
    ...(runtime.sessionName ? [`Name: ${runtime.sessionName}`] : []),
    `File: ${runtime.sessionFile ?? "(not kept on disk)"}`,
    `ID: ${runtime.sessionId}`,
    `Model: ${m.provider}/${m.id}`,
    `Messages: ${s.totalMessages} (user ${s.userMessages}, assistant ${s.assistantMessages}, tools ${s.toolCalls} calls, ${s.toolResults} results)`,
    `Tokens: input ${s.tokens.input}, output ${s.tokens.output}, cache read ${s.tokens.cacheRead}, cache write ${s.tokens.cacheWrite}, total ${s.tokens.total}`,
    `Cost: $${s.cost.toFixed(4)}`,
    `Context: ${s.contextUsage.tokens ?? 0}/${s.contextUsage.contextWindow} tokens (${(s.contextUsage.percent ?? 0).toFixed(1)}%)`,
  ].join("\n");
}

/** `/settings`: the settings this worker honours that can change for this session. */
async function settings(runtime: AgentSession, view: CommandView, say: (text: string) => void): Promise<void> {
  const state = runtime.state();
  const onOff = (b: boolean | undefined) => (b ? "on" : "off");
  const options = [
    `autoCompaction: ${onOff(runtime.autoCompaction)}`,
    `autoRetry: ${onOff(runtime.autoRetry)}`,
    `steeringMode: ${state.steeringMode ?? "one-at-a-time"}`,
    `followUpMode: ${state.followUpMode ?? "one-at-a-time"}`,
  ];
  const picked = await view.select("Settings (this session; Enter changes one)", options);
  if (!picked) return;
  const key = picked.split(":")[0]!;
  const flip = (mode: string | undefined) => (mode === "all" ? "one-at-a-time" : "all");
  if (key === "autoCompaction") runtime.autoCompaction = !runtime.autoCompaction;
  else if (key === "autoRetry") runtime.autoRetry = !runtime.autoRetry;
  else if (key === "steeringMode") runtime.setSteeringMode(flip(state.steeringMode));
  else if (key === "followUpMode") runtime.setFollowUpMode(flip(state.followUpMode));
  const after = runtime.state();
  const value =
    key === "autoCompaction"
      ? onOff(runtime.autoCompaction)
      : key === "autoRetry"
        ? onOff(runtime.autoRetry)
        : key === "steeringMode"
          ? after.steeringMode
          : after.followUpMode;
  say(`${key}: ${value}`);
}

/** `/tree`: pick an entry of any branch, go there, with or without a summary of the branch left. */
async function tree(runtime: AgentSession, view: CommandView, say: (text: string) => void): Promise<void> {
  const { tree: roots, leafId } = runtime.tree();
  const rows = treeRows(roots, leafId);
  if (rows.length === 0) return say("The session has no messages yet");
  const labels = distinct(rows.map((r) => r.label));
  const picked = await view.select("Session tree: go to", labels);
  if (!picked) return;
  const target = rows[labels.indexOf(picked)]!;
  const how = await view.select("Summarize the branch you leave?", ["No summary", "Summarize"]);
  if (!how) return;
  const r = await runtime.navigateTree(target.id, { summarize: how === "Summarize" });
  if (r.cancelled) return say("/tree was cancelled by an extension");
  redraw(runtime, view, "✓ Moved in the session tree");
  if (r.editorText) view.setEditor(r.editorText);
}

/** The tree's messages as picker rows: indented at each branch point, the current leaf marked. */
export function treeRows(roots: readonly TreeNode[], leafId: string | null): { id: string; label: string }[] {
  const rows: { id: string; label: string }[] = [];
  const walk = (nodes: readonly TreeNode[], depth: number) => {
    const branching = nodes.length > 1;
    for (const node of nodes) {
      const e = node.entry;
      const d = branching ? depth + 1 : depth;
      if (isKnownEntry(e) && e.type === "message" && (e.message.role === "user" || e.message.role === "assistant")) {
        const text = oneLine(contentText(e.message.content)) || "(tool calls)";
        const who = e.message.role === "user" ? "> " : "";
        rows.push({ id: e.id, label: `${"  ".repeat(d)}${who}${text}${e.id === leafId ? "  ← current" : ""}` });
      }
      walk(node.children, d);
    }
  };
  walk(roots, 0);
  return rows;
}

/** Picker labels told apart (the picker numbers them itself): a repeated one gets ` (2)`, ` (3)`…, so the pick maps back to one row. */
function distinct(labels: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return labels.map((label) => {
    const n = (seen.get(label) ?? 0) + 1;
    seen.set(label, n);
    return n === 1 ? label : `${label} (${n})`;
  });
}

function oneLine(text: string): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > 70 ? `${t.slice(0, 69)}…` : t;
}
