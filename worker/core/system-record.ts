/**
 * The system prompt and tool loadout as the session records them (pi 1.6): the transcript's
 * system messages, replayed in order, say what the model has; before a request the wanted
 * prompt sections and tool declarations are compared with that, and only the difference is
 * appended, as one system message. So the start of the conversation is never rewritten, and
 * a fork or a branch brings back the prompt and tools of its point. Pure functions.
 */
import type { AgentMessage, SystemMessage, ToolDeclaration } from "../../shared/schema/messages.js";
import {
  getCurrentSystemMessage,
  getCurrentTools,
  getToolStateChanges,
  toToolDeclaration,
} from "../providers/transcript.js";

type Transcript = Parameters<typeof getCurrentTools>[0];

/**
 * The section patch from what the model has to what is wanted: changed or new sections with
 * their text, gone ones as `null`; undefined when nothing changed (pi's `diffSystemPromptSections`).
 */
export function diffSections(
  previous: Record<string, string | null>,
  wanted: Record<string, string>,
): Record<string, string | null> | undefined {
  const patch: Record<string, string | null> = {};
  for (const [name, text] of Object.entries(wanted)) if (previous[name] !== text) patch[name] = text;
  for (const name of Object.keys(previous)) if (wanted[name] === undefined) patch[name] = null;
  return Object.keys(patch).length > 0 ? patch : undefined;
}

/**
 * The system message to append before the next request, or undefined when the transcript
 * already declares `sections` and `tools`. A changed tool is removed and added again, as pi.
 */
export function systemUpdate(
  transcript: readonly AgentMessage[],
  sections: Record<string, string>,
  tools: readonly { name: string; description: string; parameters?: unknown }[],
  now: number,
): SystemMessage | undefined {
  const messages = transcript as unknown as Transcript;
  const patch = diffSections(getCurrentSystemMessage(messages)?.sections ?? {}, sections);
  const wanted = tools.map((t) => toToolDeclaration({ ...t, parameters: t.parameters ?? {} }));
  const { toolsAdded, toolsRemoved } = getToolStateChanges(getCurrentTools(messages), wanted);
  if (!patch && toolsAdded.length === 0 && toolsRemoved.length === 0) return undefined;
  return {
    role: "system",
    content: "",
    ...(patch ? { sections: patch } : {}),
    ...(toolsAdded.length > 0 ? { toolsAdded } : {}),
    ...(toolsRemoved.length > 0 ? { toolsRemoved } : {}),
    timestamp: now,
  };
}

/**
 * The tools a transcript brings back (pi 1.6's `_restoreToolsFromTranscript`): those its
 * system messages leave declared, then the extension tools it never mentioned (registered
 * after it recorded its loadout, so active as new tools are), then `+name`/`-name`
 * modifiers applied. Undefined when the transcript declares no tools (an older session):
 * the current tools stay.
 */
export function restoredToolNames(
  transcript: readonly AgentMessage[],
  extensionTools: readonly string[],
  modifiers: readonly string[] = [],
): string[] | undefined {
  const systems = transcript.filter((m): m is SystemMessage => m.role === "system");
  const mentioned = new Set(
    systems.flatMap((m) => [...(m.toolsAdded ?? []), ...(m.toolsRemoved ?? [])]).map((t) => t.name),
  );
  if (mentioned.size === 0) return undefined;
  const names = [
    ...getCurrentTools(systems as unknown as Transcript).map((t: ToolDeclaration) => t.name),
    ...extensionTools.filter((name) => !mentioned.has(name)),
  ];
  for (const m of modifiers) {
    const name = m.slice(1);
    const at = names.indexOf(name);
    if (m.startsWith("+") && at < 0) names.push(name);
    else if (m.startsWith("-") && at >= 0) names.splice(at, 1);
  }
  return names;
}
